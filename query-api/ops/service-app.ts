import express, { type NextFunction, type Request, type Response } from 'express';
import type { TrustProxy } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import type { PartitionLag } from '../../shared/metrics.js';
import { registry, setConsumerLag } from '../../shared/metrics.js';
import { ApiError } from '../../shared/errors.js';
import { RetryableError, clickHouseUnavailable, internalError, unknownMethod } from '../api12/errors.js';
import { isClickHouseUnreachable } from '../../shared/clickhouse/unreachable.js';
import { docsRouter } from '../openapi/docs-page.js';
import { openApiDocument, recordsJsonSchema } from '../openapi/document.js';
import { packageVersion } from './package-version.js';
import { checkReadiness, type ReadinessDeps } from './readiness.js';
import { requestMetrics } from './request-metrics.js';
import { requestLog } from '../request-log.js';

export interface ServiceAppDeps {
  /** The API 1.2 + /ingest app (query-api/app.ts); absent in the ingest role. */
  api: express.Express | undefined;
  /** Names of the API operations, for the metrics' `operation` label. */
  operations: string[];
  readiness: ReadinessDeps;
  /** Reads the consumer group's lag per partition (roles that run the consumer, with Kafka). */
  consumerLag: (() => Promise<PartitionLag[]>) | undefined;
  log: Logger;
  /** TRUST_PROXY compiled: whose X-Forwarded-For names the client (`req.ip`, the request log's `client_ip`). */
  trustProxy?: TrustProxy;
}

const API_PATH = /^\/api\/1\.2\/rest\/[^/]+\/[^/]+\/([^/]+)$/;

/**
 * How old a readiness reading /metrics may reuse: Prometheus (every 15 s) always gets a fresh one, a
 * scraper polling faster does not add two ClickHouse queries per scrape (docs/monitoring.md).
 */
const READINESS_MAX_AGE_MS = 5_000;

/**
 * The HTTP listener of every role (docs/operations.md "Endpoints"): request metrics, /healthz, /readyz and /metrics
 * always; the API, /ingest, /openapi.json, /docs and /schemas/records.json where the API is served.
 */
export function createServiceApp({
  api,
  operations,
  readiness,
  consumerLag,
  log,
  trustProxy,
}: ServiceAppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip, for every route below (the API's included: its router is mounted here, not its app).
  if (trustProxy) app.set('trust proxy', trustProxy);
  // Request id and request line for every path, the ops endpoints included.
  app.use(requestLog(log));
  app.use(requestMetrics(operations));

  const alive = (_req: Request, res: Response) => {
    res.json({ ok: true });
  };
  app.get('/healthz', alive);
  app.get('/health', alive); // the old name, kept for existing probes
  // The last readiness reading (by /readyz or /metrics), which sets mailstats_ready.
  let readAt = 0;
  let reading: Promise<unknown> | undefined;
  const readReadiness = () => {
    reading ??= checkReadiness(readiness).finally(() => {
      readAt = Date.now();
      reading = undefined;
    });
    return reading;
  };
  app.get('/readyz', async (_req, res) => {
    const state = await checkReadiness(readiness);
    readAt = Date.now();
    res.status(state.ready ? 200 : 503).json(state);
  });
  app.get('/metrics', async (_req, res) => {
    if (consumerLag) {
      // A failed reading drops the lag series rather than repeating stale numbers.
      setConsumerLag(await consumerLag().catch(() => []));
    }
    // mailstats_ready says what /readyz answers, whether or not anything probes /readyz.
    if (Date.now() - readAt >= READINESS_MAX_AGE_MS) await readReadiness();
    res.type(registry.contentType).send(await registry.metrics());
  });

  if (api) {
    const document = openApiDocument(packageVersion());
    const records = recordsJsonSchema();
    app.get('/openapi.json', (_req, res) => {
      res.json(document);
    });
    app.get('/schemas/records.json', (_req, res) => {
      res.json(records);
    });
    app.use(docsRouter());
    // A browser at / is looking for the dashboard; an API client keeps the JSON 404 (docs/operations.md "Start-up").
    app.get('/', (req, res, next) => {
      if (req.accepts(['json', 'html']) === 'html') res.redirect(302, '/dashboard/');
      else next();
    });
    // Its routes, not the app: a mounted app swaps the prototypes of every request and response passing
    // through it (Express's sub-app handling); in a bare Express pair here that cost 118-147 µs of CPU per
    // request against 74-127 µs for the same routes mounted as a router. Both apps have the same settings
    // (x-powered-by off, no ETag).
    app.use(api.router);
  } else {
    // The ingest role serves no API: every other path is the API's 404 (docs/api.md "Errors") (the operation named
    // only when the path has the API's shape, so no other segment — possibly a key — is echoed).
    app.use((req: Request) => {
      throw unknownMethod(API_PATH.exec(req.path)?.[1]);
    });
  }
  // Errors of the routes above (the API app answers its own).
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error: ApiError;
    if (err instanceof ApiError) error = err;
    else if (isClickHouseUnreachable(err)) error = clickHouseUnavailable();
    else {
      const id = String(res.locals.requestId);
      log.error({ err }, 'unexpected error');
      error = internalError(id);
    }
    if (error instanceof RetryableError) res.setHeader('Retry-After', String(error.retryAfterSeconds));
    res.status(error.status).json(error);
  });
  return app;
}
