import type { Server } from 'node:http';
import type { IngestWorker } from '../ingest/kafka/worker.js';
import { consumerLagReader } from '../ingest/kafka/lag.js';
import type { Operation } from '../query-api/api12/operation.js';
import { createApp, type AppDeps } from '../query-api/app.js';
import { answerClientErrors } from '../query-api/client-error.js';
import { createServiceApp } from '../query-api/ops/service-app.js';
import { edgeGuards } from '../query-api/edge-guard.js';
import { createLimitedServer } from '../query-api/server-limits.js';
import type { Catalog } from '../shared/catalog/catalog.js';
import type { RenderPool } from '../query-api/render/pool.js';
import type { Db } from '../shared/clickhouse/client.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/log.js';

export interface HttpDeps {
  config: Config;
  log: Logger;
  db: Db;
  catalog: Catalog;
  operations: Record<string, Operation>;
  ingest: AppDeps['ingest'] & {};
  admin: AppDeps['admin'];
  worker: IngestWorker | undefined;
  renderer: RenderPool;
}

/**
 * Every role listens on PORT: the ingest role for /healthz, /readyz and /metrics only (docs/operations.md "Endpoints"),
 * the others with the API and POST /ingest too. Resolves once listening.
 */
export async function listenHttp(deps: HttpDeps): Promise<{
  server: Server;
  httpUrl: string;
  consumerLag: ReturnType<typeof consumerLagReader> | undefined;
}> {
  const { config, log, db, catalog, operations, ingest, admin, worker, renderer } = deps;
  const consumerLag = worker ? consumerLagReader(config) : undefined;
  const app = createServiceApp({
    api:
      config.ROLE !== 'ingest'
        ? createApp({ log, operations, ingest, admin, edge: edgeGuards(config, catalog) })
        : undefined,
    operations: Object.keys(operations),
    readiness: { db, consumer: worker, renderer: config.ROLE !== 'ingest' ? renderer : undefined },
    consumerLag,
    log,
  });
  const server = createLimitedServer(app, config); // timeouts, connection cap, Host (query-api/server-limits.ts)
  await new Promise<void>((ok) => server.listen(config.PORT, config.HOST, ok));
  answerClientErrors(server, log);
  return { server, httpUrl: listenUrl(server, config), consumerLag };
}

/** The URL to reach the listener from this machine (a wildcard address is reached via loopback). */
export function listenUrl(server: Server, config: Config): string {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = ['0.0.0.0', '::'].includes(config.HOST) ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
