import type { Server } from 'node:http';
import type { IngestWorker } from '../ingest/kafka/worker.js';
import { withTimeout } from '../ingest/kafka/topics.js';
import { Pipeline } from '../ingest/pipeline.js';
import { DemoTenant } from '../ingest/demo-tenant.js';
import type { IngestSink } from '../ingest/sink.js';
import { RenderPool } from '../query-api/render/pool.js';
import { StatsCache, statsCacheOptions } from '../query-api/stats/cache.js';
import { statsDayRows, type DayRows } from '../query-api/stats/day-rows.js';
import { Catalog } from '../shared/catalog/catalog.js';
import { openDb, type Db } from '../shared/clickhouse/client.js';
import { EventStore } from '../shared/clickhouse/event-store.js';
import { migrate } from '../shared/clickhouse/migrate.js';
import type { Config } from '../shared/config.js';
import { createLogger, type Logger } from '../shared/log.js';
import { catalogListing } from '../shared/catalog/listing.js';
import { ErasureStore } from '../shared/clickhouse/erasure-store.js';
import { StoredGenerations } from '../shared/clickhouse/generations.js';
import { ListChangePoll, ListChangeWriter } from '../shared/clickhouse/list-changes.js';
import { adminActions, adminToken } from './admin.js';
import { readTemplateCacheFrom } from '../shared/metrics.js';
import { seedDemo } from './demo.js';
import { openListener, serviceApp } from './http.js';
import type { ReadyGate } from './ready-gate.js';
import { ingestToken } from './ingest-token.js';
import { wireKafka } from './kafka.js';
import { consumerLagReader } from '../ingest/kafka/lag.js';
import { MarketerStore } from '../shared/clickhouse/marketer-store.js';
import { ShareLinks } from '../query-api/share/links.js';
import { shareRouter } from '../query-api/share/route.js';
import { marketerAdminRouter } from '../query-api/marketer-admin-route.js';
import { alertSettingsSource } from '../query-api/stats/alert-settings.js';
import { ReportScheduler, smtpMailer } from '../query-api/reports/scheduler.js';
import { apiOperations } from './operations.js';
import { startRecovery } from './recovery.js';

export interface Service {
  config: Config;
  log: Logger;
  db: Db;
  catalog: Catalog;
  pipeline: Pipeline;
  /**
   * automation.stats' answers, invalidated by this process's writes and, in server mode, by other
   * processes' through the change signal (docs/configuration.md: STATS_CACHE_MS, STATS_CHANGE_POLL_MS).
   */
  statsCache: StatsCache;
  /** Lists' per-day stats rows held in memory (undefined when STATS_MEMORY_ROWS = 0). */
  dayRows: DayRows | undefined;
  /** Scheduled e-mail reports (api and all roles, with SMTP_URL). */
  reports?: ReportScheduler;
  /** Server mode: the change signal's read, in every role that answers the API (else undefined). */
  changePoll: ListChangePoll | undefined;
  /** Where POST /ingest sends records: the pipeline, or Kafka when KAFKA_BROKERS is set. */
  sink: IngestSink;
  worker: IngestWorker | undefined;
  ingestToken: string;
  /** Base URL of the HTTP server when the api role runs. */
  url: string | undefined;
  /** Base URL of the HTTP listener, in every role (the ingest role serves only /healthz, /readyz, /metrics). */
  httpUrl: string;
  seeded: boolean;
  /** The seeded demo tenant is in the store at start (it goes with the first record of an operator's own). */
  demoPresent: boolean;
  /** Settles when the start-up recovery (ledger retention, unfinished re-datings) has run. */
  recovered: Promise<void>;
  close(): Promise<void>;
}

/**
 * A service whose listener is bound and whose start-up is under way (docs/operations.md "Start-up"): `service`
 * settles once it is ready (or failed: the listener is then closed); `close()` stops it in either phase.
 */
export interface Launch {
  httpUrl: string;
  service: Promise<Service>;
  close(): Promise<void>;
}

/** PORT first (taken → rejects at once), then config → ClickHouse → migrations → roles → demo seed. */
export async function launchService(
  config: Config,
  log = createLogger(config.LOG_LEVEL, undefined, config.LOG_FORMAT),
): Promise<Launch> {
  const { server, gate, httpUrl } = await openListener(config, log);
  let stopped = false;
  let ready: Service | undefined;
  const closeListener = async () => {
    await withTimeout(
      new Promise<void>((ok) => server.close(() => ok())),
      1_500,
      'closing the HTTP server',
    ).catch(() => undefined);
    server.closeAllConnections();
  };
  const service = bringUp(config, log, { server, gate, httpUrl }).then(
    async (svc) => {
      // Stopped while starting: what has just come up goes down again.
      if (stopped) await svc.close();
      else ready = svc;
      return svc;
    },
    async (err: unknown) => {
      await closeListener();
      throw err;
    },
  );
  return {
    httpUrl,
    service,
    async close() {
      stopped = true;
      if (ready) await ready.close();
      else await closeListener();
    },
  };
}

/** `launchService`, resolved once the service is ready. */
export async function startService(
  config: Config,
  log = createLogger(config.LOG_LEVEL, undefined, config.LOG_FORMAT),
): Promise<Service> {
  return (await launchService(config, log)).service;
}

async function bringUp(
  config: Config,
  log: Logger,
  { server, gate, httpUrl }: { server: Server; gate: ReadyGate; httpUrl: string },
): Promise<Service> {
  // The tokens first: a token file that is empty or short stops the start before anything is opened.
  const token = ingestToken(config);
  const admin = adminToken(config);
  const db = await openDb(config, log);
  gate.step({ check: 'migrations', what: 'applying migrations' });
  await migrate(db, log);
  gate.step({ check: 'startup', what: 'starting' });
  const catalog = new Catalog(db, config.DEFAULT_TIMEZONE, log);
  // Server mode, where other processes write the catalog: what is held is served only while the poll is
  // fresh (docs/operations.md "Catalog changes across processes").
  catalog.startPolling(
    config.CATALOG_POLL_MS,
    db.mode === 'server' ? config.CATALOG_FRESHNESS_MS : undefined,
  );
  const statsCache = new StatsCache(statsCacheOptions(config));
  const events = new EventStore(db, config.DEDUP_WINDOW_DAYS, config.RAW_RETENTION_DAYS);
  // Server mode: every finished write of this process also tells the other processes which lists it
  // changed (the change signal, ARCHITECTURE.md "The stats answer cache").
  const changes = db.mode === 'server' ? new ListChangeWriter(db, log) : undefined;
  const pipeline = new Pipeline(
    catalog,
    events,
    config.INGEST_BATCH_SIZE,
    log,
    (lists) => {
      if (lists === 'all') statsCache.bumpAll();
      else statsCache.bump(lists);
      // The Pipeline waits for what this returns before a write (and a start-up recovery) resolves
      // (Promise.finally), so a write is acknowledged only once its change row is stored; a failed
      // row fails the write (retried by its caller, which notes the lists again).
      return changes?.note(lists);
    },
    new ErasureStore(db),
  );
  // Server mode, API roles: other processes' writes are read from the change signal. Its baseline is
  // read before anything is held (before the listener answers the API).
  const changePoll =
    changes && config.ROLE !== 'ingest'
      ? new ListChangePoll(
          db,
          changes.id,
          statsCache,
          config.STATS_CHANGE_POLL_MS,
          config.STATS_FRESHNESS_MS,
          log,
        )
      : undefined;
  await changePoll?.start();
  // Embedded stores may hold the demo tenant: it never mixes with an operator's records (docs/records.md).
  const demo = config.CLICKHOUSE_URL ? undefined : new DemoTenant(db, catalog);
  if (demo) pipeline.keepDemoApart(demo);
  const recovery = startRecovery(config, pipeline, log);

  const kafka = wireKafka(config, db, pipeline, log);
  const kafkaSink = kafka?.sink;
  const worker = kafka?.worker;
  const sink: IngestSink = kafkaSink ?? pipeline;

  gate.step({ check: 'startup', what: 'loading the demo tenant' });
  const seeded = await seedDemo(config, db, sink, kafkaSink, log, demo);
  // Whether the store holds a seeded demo is read now, once, not by the first write of records.
  const demoPresent = (await demo?.present()) ?? false;

  const renderer = new RenderPool({
    log,
    queueLength: config.RENDER_QUEUE_LENGTH,
    queueDeadlineMs: config.RENDER_QUEUE_DEADLINE_MS,
  });
  readTemplateCacheFrom(() => renderer.stats().cache);
  const dayRows = statsDayRows(db, events.generations ?? new StoredGenerations(db), statsCache, config, log);
  const stats = { statsCache, generations: events.generations, dayRows };
  const marketerStore = new MarketerStore(db);
  const links = new ShareLinks(marketerStore);
  const marketer = { links, alertSettings: alertSettingsSource(marketerStore) };
  const operations = apiOperations({ config, db, catalog, ...stats, renderer, log, marketer });
  const consumerLag = worker ? consumerLagReader(config) : undefined;
  // What share links and reports read their figures with: the stats operations' own dependencies.
  const marketerStats = {
    db,
    catalog,
    ...stats,
    cache: statsCache,
    defaultTimezone: config.DEFAULT_TIMEZONE,
    maxPeriodDays: config.MAX_PERIOD_DAYS,
    alertSettings: marketer.alertSettings,
  };
  gate.open(
    serviceApp({
      config,
      log,
      db,
      catalog,
      operations,
      // listing: GET /ingest/catalog, the admin CLI's read of users, lists and grants.
      ingest: { sink, token, listing: (f) => catalogListing(db, config.DEFAULT_TIMEZONE, f) },
      admin: { token: admin, actions: adminActions({ config, db, pipeline, sink, log }) },
      marketer: {
        share: shareRouter({
          links,
          stats: marketerStats,
        }),
        admin: marketerAdminRouter({ token: admin, store: marketerStore, links, catalog, log }),
      },
      worker,
      renderer,
      consumerLag,
      statsCache,
    }),
  );
  const url = config.ROLE !== 'ingest' ? httpUrl : undefined;
  const mailer = config.SMTP_URL && config.ROLE !== 'ingest' ? smtpMailer(config.SMTP_URL) : undefined;
  const reports = mailer
    ? new ReportScheduler({
        store: marketerStore,
        stats: marketerStats,
        mailer,
        from: config.REPORT_FROM,
        log,
      })
    : undefined;
  reports?.start(config.REPORT_CHECK_MS);

  return {
    config,
    log,
    db,
    catalog,
    pipeline,
    statsCache,
    dayRows,
    reports,
    changePoll,
    sink,
    worker,
    ingestToken: token,
    url,
    httpUrl,
    seeded,
    demoPresent,
    recovered: recovery.recovered,
    async close() {
      recovery.stop();
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
        consumerLag && bounded('closing the lag reader', 2_000, () => consumerLag.close()),
      ]);
      await bounded('stopping the report scheduler', 2_000, async () => {
        await reports?.stop();
        mailer?.close();
      });
      catalog.stopPolling();
      changePoll?.stop();
      changes?.close();
      await bounded('closing ClickHouse', 2_000, () => db.close());
    },
  };
}
