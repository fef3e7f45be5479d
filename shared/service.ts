import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import pRetry from 'p-retry';
import { demoRecords } from '../ingest/demo-seed.js';
import { Pipeline } from '../ingest/pipeline.js';
import { IngestWorker } from '../ingest/kafka/worker.js';
import { KafkaSink } from '../ingest/kafka/producer-sink.js';
import { consumerLagReader } from '../ingest/kafka/lag.js';
import { createKafka, kafkaTopics, withTimeout } from '../ingest/kafka/topics.js';
import { createApp } from '../query-api/app.js';
import { answerClientErrors } from '../query-api/client-error.js';
import { createServiceApp } from '../query-api/ops/service-app.js';
import type { IngestSink } from '../query-api/ingest-route.js';
import type { Operation } from '../query-api/api12/router.js';
import { automationStats } from '../query-api/stats/handler.js';
import { StatsCache, statsCacheOptions } from '../query-api/stats/cache.js';
import { statsDayRows, type DayRows } from '../query-api/stats/day-rows.js';
import { RenderPool } from '../query-api/render/pool.js';
import { transactionalTemplateRender } from '../query-api/render/handler.js';
import { listAll } from '../query-api/lists/handler.js';
import { catalogOperations } from '../query-api/catalog-ops.js';
import { Catalog } from './catalog/catalog.js';
import { openDb, type Db } from './clickhouse/client.js';
import { EventStore } from './clickhouse/event-store.js';
import { KafkaProgress } from './clickhouse/kafka-progress.js';
import { migrate } from './clickhouse/migrate.js';
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { readTemplateCacheFrom } from './metrics.js';

export interface Service {
  config: Config;
  log: Logger;
  db: Db;
  catalog: Catalog;
  pipeline: Pipeline;
  /** automation.stats' per-day rows, invalidated by this process's writes (README: STATS_CACHE_MS). */
  statsCache: StatsCache;
  /** Embedded: lists' per-day stats rows held in memory (undefined in server mode or when off). */
  dayRows: DayRows | undefined;
  /** Where POST /ingest sends records: the pipeline, or Kafka when KAFKA_BROKERS is set. */
  sink: IngestSink;
  worker: IngestWorker | undefined;
  ingestToken: string;
  /** Base URL of the HTTP server when the api role runs. */
  url: string | undefined;
  /** Base URL of the HTTP listener, in every role (the ingest role serves only /healthz, /readyz, /metrics). */
  httpUrl: string;
  seeded: boolean;
  /** Settles when the start-up recovery (ledger retention, unfinished re-datings) has run. */
  recovered: Promise<void>;
  close(): Promise<void>;
}

/** Without INGEST_TOKEN the embedded store keeps one it generated, so it survives restarts. */
function ingestToken(config: Config): string {
  if (config.INGEST_TOKEN) return config.INGEST_TOKEN;
  if (config.CLICKHOUSE_URL) return randomBytes(24).toString('hex');
  const file = join(resolve(config.DATA_DIR), 'ingest-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(resolve(config.DATA_DIR), { recursive: true });
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, token, { mode: 0o600 });
  return token;
}

/** config → ClickHouse → migrations → roles → demo seed on an empty embedded store. */
export async function startService(config: Config, log = createLogger(config.LOG_LEVEL)): Promise<Service> {
  const db = await openDb(config, log);
  await migrate(db, log);
  const catalog = new Catalog(db, config.DEFAULT_TIMEZONE, log);
  catalog.startPolling(config.CATALOG_POLL_MS);
  const statsCache = new StatsCache(statsCacheOptions(config));
  const events = new EventStore(db, config.DEDUP_WINDOW_DAYS);
  const pipeline = new Pipeline(catalog, events, config.INGEST_BATCH_SIZE, log, (lists) =>
    lists === 'all' ? statsCache.bumpAll() : statsCache.bump(lists),
  );
  // Ledger retention and any list re-dating a crash left unfinished (ARCHITECTURE.md, storage), in the
  // processes that write (not an API that hands its ingest to Kafka). Queued ahead of every write, but
  // beside the API: readers only ever read finished generations (docs/records.md "Counted once": the API
  // answers at once after a crash). Retried with backoff while ClickHouse fails; meanwhile each list is still re-dated
  // before its next write.
  const stopRecovery = new AbortController();
  const writes = config.ROLE !== 'api' || config.KAFKA_BROKERS.length === 0;
  const recovered = writes
    ? pRetry(() => pipeline.recover(), {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: 1_000,
        maxTimeout: 30_000,
        signal: stopRecovery.signal,
        onFailedAttempt: ({ error, attemptNumber }) => {
          // Stopping aborts the retry loop, which reports the abort as a failed attempt: not an error.
          if (!stopRecovery.signal.aborted)
            log.error({ err: error, attempt: attemptNumber }, 'start-up recovery failed; retrying');
        },
      }).catch(() => undefined) // only when stopped
    : Promise.resolve();
  const token = ingestToken(config);

  // Kafka is reached beside the API, never before it (docs/operations.md "Start-up"): the producer connects and the
  // consumer joins its group in the background, retried while Kafka is away; POST /ingest answers
  // 503 until the producer is ready.
  let sink: IngestSink = pipeline;
  let kafkaSink: KafkaSink | undefined;
  let worker: IngestWorker | undefined;
  if (config.KAFKA_BROKERS.length > 0) {
    const kafka = createKafka(config, log);
    sink = kafkaSink = new KafkaSink(kafka, config, log);
    if (config.ROLE !== 'api') {
      const options = {
        groupId: config.KAFKA_GROUP_ID,
        topics: kafkaTopics(config),
        maxBatchRecords: config.KAFKA_BATCH_MAX_RECORDS,
        maxBatchMs: config.KAFKA_BATCH_MAX_MS,
        sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      };
      const w = (worker = new IngestWorker(
        kafka,
        pipeline,
        new KafkaProgress(db, config.KAFKA_GROUP_ID),
        options,
        log,
      ));
      // The topics must exist before the consumer subscribes: the sink ensures them first.
      void kafkaSink.ready
        .then(() => w.keepStarting())
        .catch((err: unknown) => log.error({ err }, 'kafka consumer not started'));
    }
  }

  let seeded = false;
  if (!config.CLICKHOUSE_URL && config.SEED_DEMO) {
    const [row] = await db.query<{ n: number }>(
      'SELECT count() AS n FROM catalog',
      {},
      {
        output_format_json_quote_64bit_integers: 0,
      },
    );
    if (row?.n === 0) {
      seeded = true;
      const load = async (to: IngestSink) => {
        const result = await to.ingest(demoRecords());
        log.info({ accepted: result.accepted, rejected: result.rejected.length }, 'demo tenant loaded');
      };
      if (kafkaSink) {
        // Through Kafka once the producer is ready, without holding the API; a failed send is
        // logged (the next start on a still-empty store loads it again, counted once).
        const through = kafkaSink;
        void through.ready
          .then(() => load(through))
          .catch((err: unknown) => log.error({ err }, 'demo tenant not loaded through Kafka'));
      } else {
        await load(sink);
      }
    }
  }

  const dayRows = statsDayRows(db, events.generations, statsCache, config, log);
  const statsDeps = {
    db,
    generations: events.generations,
    dayRows,
    catalog,
    defaultTimezone: config.DEFAULT_TIMEZONE,
    maxPeriodDays: config.MAX_PERIOD_DAYS,
    cache: statsCache,
  };
  const renderer = new RenderPool({ log });
  readTemplateCacheFrom(() => renderer.stats().cache);
  const renderDeps = { catalog, renderer, log };
  const operations: Record<string, Operation> = {
    'automation.stats': (caller, params) => automationStats(statsDeps, caller, params),
    'transactional.templateRender': (caller, params) =>
      transactionalTemplateRender(renderDeps, caller, params),
    'list.all': (caller, params) => listAll({ catalog }, caller, params),
    ...catalogOperations({ catalog }),
  };

  // Every role listens on PORT: the ingest role for /healthz, /readyz and /metrics only (docs/operations.md "Endpoints").
  const app = createServiceApp({
    api: config.ROLE !== 'ingest' ? createApp({ log, operations, ingest: { sink, token } }) : undefined,
    operations: Object.keys(operations),
    readiness: { db, consumer: worker, renderer: config.ROLE !== 'ingest' ? renderer : undefined },
    consumerLag: worker ? consumerLagReader(config) : undefined,
    log,
  });
  const server = await new Promise<Server>((ok) => {
    const s = app.listen(config.PORT, config.HOST, () => ok(s));
  });
  answerClientErrors(server, log);
  const httpUrl = listenUrl(server, config);
  const url = config.ROLE !== 'ingest' ? httpUrl : undefined;

  return {
    config,
    log,
    db,
    catalog,
    pipeline,
    statsCache,
    dayRows,
    sink,
    worker,
    ingestToken: token,
    url,
    httpUrl,
    seeded,
    recovered,
    async close() {
      stopRecovery.abort();
      // Bounded at every step (docs/operations.md "Shutdown": stop within 10 s whatever does not answer). Offsets not
      // committed because Kafka was away are simply read again by the next start.
      const bounded = (what: string, ms: number, task: () => Promise<unknown>) =>
        withTimeout(task(), ms, what).catch((err: unknown) =>
          log.warn({ err }, `${what} did not finish; going on`),
        );
      await bounded(
        'closing the HTTP server',
        1_500,
        () => new Promise<void>((ok) => server.close(() => ok())),
      );
      server.closeAllConnections();
      await Promise.all([
        worker && bounded('leaving the consumer group', 4_000, () => worker.stop()),
        kafkaSink && bounded('closing the producer', 4_000, () => kafkaSink.close()),
        bounded('stopping the render workers', 2_000, () => renderer.close()),
      ]);
      catalog.stopPolling();
      await bounded('closing ClickHouse', 2_000, () => db.close());
    },
  };
}

/** The URL to reach the listener from this machine (a wildcard address is reached via loopback). */
export function listenUrl(server: Server, config: Config): string {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = ['0.0.0.0', '::'].includes(config.HOST) ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
