import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { demoRecords } from '../ingest/demo-seed.js';
import { Pipeline } from '../ingest/pipeline.js';
import { IngestWorker } from '../ingest/kafka/worker.js';
import { KafkaSink } from '../ingest/kafka/producer-sink.js';
import { createKafka, ensureTopics, kafkaTopics } from '../ingest/kafka/topics.js';
import { createApp } from '../query-api/app.js';
import type { IngestSink } from '../query-api/ingest-route.js';
import type { Operation } from '../query-api/api12/router.js';
import { automationStats } from '../query-api/stats/handler.js';
import { TemplateRenderer } from '../query-api/render/engine.js';
import { transactionalTemplateRender } from '../query-api/render/handler.js';
import { Catalog } from './catalog/catalog.js';
import { openDb, type Db } from './clickhouse/client.js';
import { EventStore } from './clickhouse/event-store.js';
import { KafkaProgress } from './clickhouse/kafka-progress.js';
import { migrate } from './clickhouse/migrate.js';
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { waitFor } from './retry.js';

export interface Service {
  config: Config;
  log: Logger;
  db: Db;
  catalog: Catalog;
  pipeline: Pipeline;
  /** Where POST /ingest sends records: the pipeline, or Kafka when KAFKA_BROKERS is set. */
  sink: IngestSink;
  worker: IngestWorker | undefined;
  ingestToken: string;
  /** Base URL of the HTTP server when the api role runs. */
  url: string | undefined;
  seeded: boolean;
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
  const pipeline = new Pipeline(
    catalog,
    new EventStore(db, config.DEDUP_WINDOW_DAYS),
    config.INGEST_BATCH_SIZE,
    log,
  );
  const token = ingestToken(config);

  let sink: IngestSink = pipeline;
  let kafkaSink: KafkaSink | undefined;
  let worker: IngestWorker | undefined;
  if (config.KAFKA_BROKERS.length > 0) {
    const kafka = createKafka(config, log);
    const topics = kafkaTopics(config);
    // Wait for the brokers with backoff (a client without kafkajs' own long retries: one line per attempt).
    await waitFor(
      'Kafka',
      () => ensureTopics(createKafka(config, log, { retries: 0, quiet: true }), config),
      {
        log,
        waitSeconds: config.STARTUP_WAIT_SECONDS,
      },
    );
    sink = kafkaSink = await KafkaSink.connect(kafka, topics);
    if (config.ROLE !== 'api') {
      const options = {
        groupId: config.KAFKA_GROUP_ID,
        topics,
        maxBatchRecords: config.KAFKA_BATCH_MAX_RECORDS,
        maxBatchMs: config.KAFKA_BATCH_MAX_MS,
        sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      };
      worker = new IngestWorker(kafka, pipeline, new KafkaProgress(db, config.KAFKA_GROUP_ID), options, log);
      await worker.start();
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
      const result = await sink.ingest(demoRecords());
      log.info({ accepted: result.accepted, rejected: result.rejected.length }, 'demo tenant loaded');
      seeded = true;
    }
  }

  const statsDeps = {
    db,
    catalog,
    defaultTimezone: config.DEFAULT_TIMEZONE,
    maxPeriodDays: config.MAX_PERIOD_DAYS,
  };
  const renderDeps = { catalog, renderer: new TemplateRenderer(), log };
  const operations: Record<string, Operation> = {
    'automation.stats': (caller, params) => automationStats(statsDeps, caller, params),
    'transactional.templateRender': (caller, params) =>
      transactionalTemplateRender(renderDeps, caller, params),
  };

  let server: Server | undefined;
  let url: string | undefined;
  if (config.ROLE !== 'ingest') {
    const app = createApp({ log, operations, ingest: { sink, token } });
    server = await new Promise<Server>((ok) => {
      const s = app.listen(config.PORT, config.HOST, () => ok(s));
    });
    url = listenUrl(server, config);
  }

  return {
    config,
    log,
    db,
    catalog,
    pipeline,
    sink,
    worker,
    ingestToken: token,
    url,
    seeded,
    async close() {
      if (server) await new Promise<void>((ok) => server!.close(() => ok()));
      await worker?.stop();
      await kafkaSink?.close();
      catalog.stopPolling();
      await db.close();
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
