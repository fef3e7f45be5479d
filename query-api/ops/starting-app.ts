import express, { type Request, type Response } from 'express';
import type { Logger } from '../../shared/log.js';
import { serviceUnavailable } from '../api12/errors.js';
import { requestLog } from '../request-log.js';

/** How long a caller is asked to wait before trying again while the service starts. */
export const STARTING_RETRY_AFTER_SECONDS = 5;

/**
 * What the listener answers before the service is ready (docs/operations.md "Start-up"): the process is alive
 * (/healthz 200), not ready (/readyz 503 naming what it waits for), and every other request — API, XML-RPC,
 * POST /ingest, admin — is the error object 503 with Retry-After, never a refused connection.
 * `waitingFor()` names the step without any detail of the dependency (hosts, credentials).
 */
export function createStartingApp(
  waitingFor: () => { check: string; what: string },
  log: Logger,
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestLog(log));
  // Alive, and saying which step start-up is at (the API answers 503 until it is done).
  const alive = (_req: Request, res: Response) => {
    res.json({ ok: true, starting: waitingFor().what });
  };
  app.get('/healthz', alive);
  app.get('/health', alive);
  app.get('/readyz', (_req, res) => {
    const { check, what } = waitingFor();
    res.status(503).json({ ready: false, reason: `${check}: ${what}`, checks: { [check]: what } });
  });
  app.use((_req: Request, res: Response) => {
    const error = serviceUnavailable(waitingFor().what, STARTING_RETRY_AFTER_SECONDS);
    res.setHeader('Retry-After', String(error.retryAfterSeconds));
    res.status(error.status).json(error);
  });
  return app;
}
