import type { NextFunction, Request, Response } from 'express';
import { observeRequest } from '../../shared/metrics.js';
import { ApiError } from '../../shared/errors.js';

const API_OPERATION = /^\/api\/1\.2\/rest\/[^/]+\/[^/]+\/([^/]+)\.json$/;
const OPS_PATHS = new Set([
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/docs',
  '/schemas/records.json',
]);

/**
 * The `operation` label of a request: an API operation's name (only names in `operations`), or a
 * fixed name for the other endpoints — never anything taken freely from the path, which holds api keys
 * and would make the label set unbounded.
 */
export function operationLabel(path: string, operations: ReadonlySet<string>): string {
  const op = API_OPERATION.exec(path)?.[1];
  if (op !== undefined) return operations.has(op) ? op : 'unknown';
  if (path.startsWith('/api/1.2/xmlrpc/')) return 'xmlrpc';
  if (path === '/ingest') return 'ingest';
  if (path === '/health') return 'healthz';
  if (OPS_PATHS.has(path))
    return path === '/schemas/records.json' ? 'schemas' : path.slice(1).replace(/\.json$/, '');
  if (path.startsWith('/docs/')) return 'docs';
  return 'other';
}

/** Counts and times every request once its answer is finished (the API error code from the body). */
export function requestMetrics(operations: Iterable<string>) {
  const known = new Set(operations);
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const path = req.path;
    let code = 0;
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (body instanceof ApiError) code = body.code;
      else if (isErrorObject(body)) code = body.code;
      return json(body);
    };
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const label =
        typeof res.locals.operation === 'string' && known.has(res.locals.operation)
          ? res.locals.operation
          : operationLabel(path, known);
      observeRequest(label, res.statusCode, code, seconds);
    });
    next();
  };
}

const isErrorObject = (b: unknown): b is { code: number } =>
  typeof b === 'object' &&
  b !== null &&
  (b as { err?: unknown }).err === true &&
  typeof (b as { code?: unknown }).code === 'number';
