import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { withLogContext, type Logger } from '../shared/log.js';

/** An incoming X-Request-Id is kept when it is short and plain (it is echoed and logged as it is). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * What a log line may say about a request: the matched route's pattern (never the path it came in on),
 * the operation when the path named a known one, the request id, and the client's address (`client_ip`:
 * the peer, or behind a proxy TRUST_PROXY names, the client its X-Forwarded-For gives). No path, query
 * string or header can hold an api key or the ingest token here, whatever the shape of the path
 * (docs/api.md "Authentication").
 */
export function requestFields(req: Request, res: Response): Record<string, unknown> {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  const mount = res.locals.staticRoute;
  return {
    req_id: res.locals.requestId,
    client_ip: res.locals.clientIp ?? null,
    method: req.method,
    route: typeof route === 'string' ? route : typeof mount === 'string' ? mount : null,
    ...(typeof res.locals.operation === 'string' ? { operation: res.locals.operation } : {}),
  };
}

/**
 * The dashboard's and /docs' static files (scripts, styles, images): a page load fetches several, and
 * at info they would bury the start-up banner and the API lines (docs/operations.md "Logs").
 */
const STATIC_ASSET = /^\/(dashboard|docs)\/.+\.(js|mjs|css|map|png|svg|ico|webp|woff2?|ttf)$/;

/**
 * Files served by a static mount have no route pattern: they are named by their mount, the page itself
 * as `/dashboard/` and the rest as `/dashboard/*` (likewise /docs). Only the mount, never the file's path.
 */
function staticRoute(path: string): string | undefined {
  const m = /^\/(dashboard|docs)(\/.*)?$/.exec(path);
  if (!m) return undefined;
  return !m[2] || m[2] === '/' || m[2] === '/index.html' ? `/${m[1]}/` : `/${m[1]}/*`;
}

/**
 * The dashboard marks the calls of its per-workflow breakdown (two per workflow: a 50-workflow list makes
 * 100), which are debug when answered below 400 like a static file; the view's own calls stay info.
 * A refusal or failure stays info whoever asks.
 */
const ROUTINE_PART = 'breakdown';

/**
 * The `request` line once the answer is finished, at info (debug for a routine one below 400: a static
 * asset, a breakdown call), or when
 * the client went away before it was complete, without a status. Nothing is built when info is off.
 */
export function logWhenAnswered(
  log: Logger,
  res: ServerResponse,
  started: bigint,
  fields: () => Record<string, unknown>,
  asset = false,
): void {
  if (!log.isLevelEnabled('info')) return;
  const line = (status: number | null) => {
    const level = asset && status !== null && status < 400 ? 'debug' : 'info';
    if (!log.isLevelEnabled(level)) return;
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    log[level]({ ...fields(), status, ms }, 'request');
  };
  res.on('finish', () => line(res.statusCode));
  res.on('close', () => {
    if (!res.writableFinished) line(null);
  });
}

/**
 * Request id in and out (`X-Request-Id`), and one `request` line per answered request: info, except
 * a static asset or a dashboard breakdown call answered below 400, which is debug.
 */
export function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    // Mounted by the listener (query-api/ops/service-app.ts) and by the API app inside it: once per request.
    if (res.locals.requestId !== undefined) return next();
    const id = requestIdOf(req.get('x-request-id'));
    const started = process.hrtime.bigint();
    res.locals.requestId = id;
    // Read now, by the app's `trust proxy` setting (the first app the request enters).
    res.locals.clientIp = req.ip;
    res.setHeader('X-Request-Id', id);
    // Read now: a mounted router rewrites req.url while it serves the request.
    const asset =
      ((req.method === 'GET' || req.method === 'HEAD') && STATIC_ASSET.test(req.path)) ||
      req.get('x-dashboard-part') === ROUTINE_PART;
    const mount = staticRoute(req.path);
    if (mount) res.locals.staticRoute = mount;
    logWhenAnswered(log, res, started, () => requestFields(req, res), asset);
    // Every line logged while this request is served (operations included) carries its id.
    withLogContext({ req_id: id }, next);
  };
}
