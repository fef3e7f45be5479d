import type { RequestListener, Server } from 'node:http';
import type { IngestWorker } from '../ingest/kafka/worker.js';
import type { consumerLagReader } from '../ingest/kafka/lag.js';
import type { Operation } from '../query-api/api12/operation.js';
import { createApp, type AppDeps } from '../query-api/app.js';
import { answerClientErrors } from '../query-api/client-error.js';
import { createServiceApp } from '../query-api/ops/service-app.js';
import { edgeGuards } from '../query-api/edge-guard.js';
import { clientAddress } from '../query-api/client-address.js';
import { createLimitedServer } from '../query-api/server-limits.js';
import type { Catalog } from '../shared/catalog/catalog.js';
import type { RenderPool } from '../query-api/render/pool.js';
import type { Db } from '../shared/clickhouse/client.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { ReadyGate } from './ready-gate.js';
import type { StatsCache } from '../query-api/stats/cache.js';
import { RepeatAnswers } from '../query-api/stats/repeat-answers.js';

export interface HttpDeps {
  config: Config;
  log: Logger;
  db: Db;
  catalog: Catalog;
  operations: Record<string, Operation>;
  ingest: AppDeps['ingest'] & {};
  admin: AppDeps['admin'];
  marketer?: AppDeps['marketer'];
  worker: IngestWorker | undefined;
  statsCache: StatsCache;
  renderer: RenderPool;
  /** The consumer group's lag reader (roles that run the consumer, with Kafka); closed by the service. */
  consumerLag: ReturnType<typeof consumerLagReader> | undefined;
}

/**
 * Binds PORT before anything else starts (docs/operations.md "Start-up"): the gate answers 503 until the service
 * opens it. A port that cannot be bound (taken, not permitted) rejects at once with a message naming it.
 */
export async function openListener(
  config: Config,
  log: Logger,
): Promise<{ server: Server; gate: ReadyGate; httpUrl: string }> {
  const gate = new ReadyGate(log);
  const server = createLimitedServer(gate.listener, config); // timeouts, connection cap, Host (query-api/server-limits.ts)
  await new Promise<void>((ok, fail) => {
    const failed = (err: NodeJS.ErrnoException) => fail(listenError(err, config));
    server.once('error', failed);
    server.listen(config.PORT, config.HOST, () => {
      server.off('error', failed);
      ok();
    });
  });
  answerClientErrors(server, log);
  return { server, gate, httpUrl: listenUrl(server, config) };
}

function listenError(err: NodeJS.ErrnoException, config: Config): Error {
  if (err.code === 'EADDRINUSE')
    return new Error(`port ${config.PORT} is in use (EADDRINUSE); set PORT to a free port`, { cause: err });
  if (err.code === 'EACCES')
    return new Error(`port ${config.PORT} may not be bound by this user (EACCES); set PORT`, { cause: err });
  if (err.code === 'EADDRNOTAVAIL')
    return new Error(`HOST ${config.HOST} is not an address of this machine (EADDRNOTAVAIL); set HOST`, {
      cause: err,
    });
  return new Error(`cannot listen on ${config.HOST}:${config.PORT} (${err.code ?? err.message})`, {
    cause: err,
  });
}

/**
 * The app of every role (docs/operations.md "Endpoints"): the ingest role serves /healthz, /readyz and /metrics
 * only, the others the API and POST /ingest too.
 */
export function serviceApp(deps: HttpDeps): RequestListener {
  const { config, log, db, catalog, operations, ingest, admin, worker, renderer, consumerLag, statsCache } =
    deps;
  const { marketer } = deps;
  const serving = config.ROLE !== 'ingest';
  const edge = edgeGuards(config, catalog);
  const repeats = serving ? new RepeatAnswers(statsCache, catalog, edge.limiter, log) : undefined;
  if (repeats) repeats.clientAddress = (req) => clientAddress(req, edge.trustProxy);
  const app = createServiceApp({
    api: serving ? createApp({ log, operations, ingest, admin, edge, repeats, marketer }) : undefined,
    operations: Object.keys(operations),
    readiness: { db, consumer: worker, renderer: serving ? renderer : undefined },
    consumerLag,
    log,
    trustProxy: edge.trustProxy,
  });
  return repeats ? repeats.listener(app) : app;
}

/** The URL to reach the listener from this machine (a wildcard address is reached via loopback). */
export function listenUrl(server: Server, config: Config): string {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = ['0.0.0.0', '::'].includes(config.HOST) ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
