import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../shared/log.js';
import { ApiError } from '../shared/errors.js';
import {
  RetryableError,
  internalError,
  invalidParam,
  methodNotAllowed,
  unknownMethod,
} from './api12/errors.js';
import { unavailableFor } from './unavailable.js';
import type { Operation } from './api12/operation.js';
import { API12_REST_ROUTE } from './api12/address.js';
import { api12Route } from './api12/router.js';
import { bodyError, readBody } from './body.js';
import type { IngestSink } from '../ingest/sink.js';
import { ingestRoute, requireIngestToken } from './ingest-route.js';
import { catalogRoute, type ReadListing } from './catalog-route.js';
import { requestFields, requestLog } from './request-log.js';
import { xmlrpcRoute } from './xmlrpc/route.js';
import { dashboardRouter } from './dashboard-route.js';
import { API_BODY_LIMIT_BYTES, guardCaller, type EdgeGuards } from './edge-guard.js';
import { adminRouter, type AdminActions } from './admin-route.js';
import type { RepeatAnswers } from './stats/repeat-answers.js';

export interface AppDeps {
  log: Logger;
  operations: Record<string, Operation>;
  /** `listing`: GET /ingest/catalog, the admin CLI's read of users, lists and grants. */
  ingest: { sink: IngestSink; token: string; listing?: ReadListing } | undefined;
  /**
   * Rate limit, credentials and body budget, checked before a body is read (query-api/edge-guard.ts).
   * Without them (apps built by unit tests) the operations still check credentials themselves.
   */
  edge?: EdgeGuards;
  /** The admin endpoints (docs/lifecycle.md), behind ADMIN_TOKEN. */
  admin?: { token: string; actions: AdminActions };
  /** Told of stats answers, to answer the same request sent again in front of the app (query-api/stats/repeat-answers.ts). */
  repeats?: RepeatAnswers;
  /** Share links' reads (/api/share) and the marketer's admin endpoints (docs/dashboard.md). */
  marketer?: { share: express.Router; admin: express.Router };
}

const API_BODY_LIMIT = '1mb';
const INGEST_BODY_LIMIT = '10mb';

/** An unreadable body: 406 on the API (docs/api.md "Errors"), 400 on /ingest (docs/records.md "Ingest over HTTP"). */
const unreadableParams = (reason: string) => invalidParam('body', reason);
const unreadableIngest = (reason: string) => new ApiError(400, 400, `Unreadable body: ${reason}`);

/** Other methods answer 405 with `Allow` (HEAD is GET without a body, as Express routes it). */
function onlyMethods(allow: string[]) {
  const allowed = new Set([...allow, ...(allow.includes('GET') ? ['HEAD'] : [])]);
  return (req: Request, res: Response, next: NextFunction) => {
    if (allowed.has(req.method)) return next();
    res.setHeader('Allow', allow.join(', '));
    next(methodNotAllowed());
  };
}

/**
 * The operation comes first in the check order (docs/api.md "Errors"): an unknown one is a 404 before its
 * body is read. A known one is named for the request log (an unknown segment never is: it could be a key).
 */
function knownOperation(operations: Record<string, Operation>) {
  return (req: Request, res: Response, next: NextFunction) => {
    const segment = String(req.params.operation);
    const name = segment.endsWith('.json') ? segment.slice(0, -'.json'.length) : undefined;
    if (name === undefined || !Object.hasOwn(operations, name)) return next(unknownMethod(segment));
    res.locals.operation = name;
    next();
  };
}

export function createApp({
  log,
  operations,
  ingest,
  edge,
  admin,
  repeats,
  marketer,
}: AppDeps): express.Express {
  const app = express();
  // The caller before its body (docs/api.md, errors: operation → credentials → params).
  const guard = edge ? [guardCaller(edge, API_BODY_LIMIT_BYTES)] : [];
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip: the peer, or the client a trusted proxy names (TRUST_PROXY, docs/configuration.md).
  if (edge?.trustProxy) app.set('trust proxy', edge.trustProxy);

  app.use(requestLog(log));

  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  app.use('/dashboard', dashboardRouter());
  if (ingest) {
    app.all(
      '/ingest',
      onlyMethods(['POST']),
      requireIngestToken(ingest.token),
      readBody(INGEST_BODY_LIMIT, unreadableIngest),
      ingestRoute(ingest.sink),
    );
    if (ingest.listing)
      app.get('/ingest/catalog', requireIngestToken(ingest.token), catalogRoute(ingest.listing));
  }
  if (marketer) app.use('/admin', marketer.admin);
  if (admin) app.use('/admin', adminRouter({ ...admin, log }));
  if (marketer) app.use('/api/share', marketer.share);
  app.all(
    API12_REST_ROUTE,
    knownOperation(operations), // the operation first (docs/api.md "Errors"): PUT on an unknown one is its 404
    onlyMethods(['GET', 'POST']),
    ...guard,
    readBody(API_BODY_LIMIT, unreadableParams),
    api12Route(operations, repeats),
  );
  // XML-RPC (docs/api.md "XML-RPC"): the same operations, positional params; body errors become faults.
  // Other methods: the JSON 405 (an XML-RPC fault answers POSTed calls only).
  app.all('/api/1.2/xmlrpc/:userId/:apiKey', onlyMethods(['POST']));
  app.post(
    '/api/1.2/xmlrpc/:userId/:apiKey',
    ...guard,
    readBody(API_BODY_LIMIT, unreadableParams),
    xmlrpcRoute(operations, log),
  );
  // Any other path: the message quotes nothing from it (docs/api.md "Errors").
  app.use((_req: Request, _res: Response, next: NextFunction) => next(unknownMethod()));

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error: ApiError;
    if (err instanceof ApiError) error = err;
    // A path segment with a malformed %-escape (the router cannot decode it): no API method is addressed.
    else if (err instanceof URIError && (err as { status?: number }).status === 400) error = unknownMethod();
    // ClickHouse away, the catalog not read recently enough, a stored write not yet announced: 503.
    else if (unavailableFor(err)) error = unavailableFor(err)!;
    else {
      // A body error from a parser mounted elsewhere is still the client's (kept as a net).
      const mapped = bodyError(err, unreadableParams);
      if (mapped) error = mapped;
      else {
        const id = String(res.locals.requestId);
        // The request's fields only (route pattern, operation, id): never its path or headers.
        log.error({ ...requestFields(req, res), err }, 'unexpected error');
        error = internalError(id);
      }
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof RetryableError) res.setHeader('Retry-After', String(error.retryAfterSeconds));
    res.status(error.status).json(error);
  });
  return app;
}
