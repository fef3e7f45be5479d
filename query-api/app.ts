import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { redactApiKey, type Logger } from '../shared/log.js';
import { ApiError, internalError, tooLarge, unknownMethod } from './api12/errors.js';
import { api12Route, type Operation } from './api12/router.js';
import { ingestRoute, type IngestSink } from './ingest-route.js';
import { dashboardRouter } from './dashboard-route.js';

export interface AppDeps {
  log: Logger;
  operations: Record<string, Operation>;
  ingest: { sink: IngestSink; token: string } | undefined;
}

const API_BODY_LIMIT = '1mb';
const INGEST_BODY_LIMIT = '10mb';
const anyType = () => true;

export function createApp({ log, operations, ingest }: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const id = randomUUID();
    const started = process.hrtime.bigint();
    res.locals.requestId = id;
    // Request lines are info: skip building them (and redacting the path) when info is off.
    if (log.isLevelEnabled('info'))
      res.on('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log.info(
          { req_id: id, method: req.method, path: redactApiKey(req.originalUrl), status: res.statusCode, ms },
          'request',
        );
      });
    next();
  });

  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  app.use('/dashboard', dashboardRouter());
  if (ingest) {
    app.post(
      '/ingest',
      express.raw({ type: anyType, limit: INGEST_BODY_LIMIT }),
      ingestRoute(ingest.sink, ingest.token),
    );
  }
  app.all(
    '/api/1.2/rest/:userId/:apiKey/:operation',
    express.raw({ type: anyType, limit: API_BODY_LIMIT }),
    api12Route(operations),
  );
  app.use((req: Request) => {
    throw unknownMethod(req.path.split('/').pop() ?? '');
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error: ApiError;
    if (err instanceof ApiError) error = err;
    else if ((err as { type?: string }).type === 'entity.too.large') error = tooLarge();
    // A path segment with a malformed %-escape (the router cannot decode it): no API method is addressed.
    // Not an internal error, and not logged: the router's message would quote the segment (the API key).
    else if (err instanceof URIError && (err as { status?: number }).status === 400)
      error = unknownMethod(req.path.split('/').pop() ?? '');
    else {
      const id = String(res.locals.requestId);
      log.error({ req_id: id, err, path: redactApiKey(req.originalUrl) }, 'unexpected error');
      error = internalError(id);
    }
    res.status(error.status).json(error);
  });
  return app;
}
