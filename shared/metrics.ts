import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every Prometheus metric of the process, in one registry (docs/operations.md "Metrics"). Other modules call the small
 * functions below (one line each) instead of touching prom-client; names and labels live only here.
 * Labels are always from small fixed sets: never a path, an id or a key.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const httpRequests = new Counter({
  name: 'mailstats_http_requests_total',
  help: 'HTTP requests answered, by operation, HTTP status and API error code (0 = success)',
  labelNames: ['operation', 'status', 'code'] as const,
  registers: [registry],
});

const httpDuration = new Histogram({
  name: 'mailstats_http_request_duration_seconds',
  help: 'Time from receiving a request to finishing its answer, by operation and HTTP status',
  labelNames: ['operation', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const accepted = new Counter({
  name: 'mailstats_ingest_records_accepted_total',
  help: 'Records accepted: source "http" = POST /ingest (stored, or acknowledged by Kafka), "kafka" = consumed and written',
  labelNames: ['source'] as const,
  registers: [registry],
});

const rejected = new Counter({
  name: 'mailstats_ingest_records_rejected_total',
  help: 'Records that failed validation: "http" = rejected lines of POST /ingest, "kafka" = consumed and dead-lettered',
  labelNames: ['source'] as const,
  registers: [registry],
});

const deadLettered = new Counter({
  name: 'mailstats_ingest_records_dead_lettered_total',
  help: 'Consumed Kafka records sent to the dead-letter topic',
  registers: [registry],
});

const deduplicated = new Counter({
  name: 'mailstats_ingest_records_deduplicated_total',
  help: 'Activity records not stored because their event_id was already taken within the dedup window (or repeated in the batch)',
  registers: [registry],
});

const erased = new Counter({
  name: 'mailstats_ingest_records_erased_total',
  help: 'Activity records not stored because their subscriber was erased from their list after they happened (docs/lifecycle.md)',
  registers: [registry],
});

/** Records of erased (list, subscriber) pairs that arrived after the erasure and were not stored. */
export function countErased(n: number): void {
  if (n > 0) erased.inc(n);
}

const batchWrite = new Histogram({
  name: 'mailstats_ingest_batch_write_duration_seconds',
  help: 'Time to write one batch of validated records to ClickHouse (dedup, insert, ledger, day recompute)',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

const lastWrite = new Gauge({
  name: 'mailstats_ingest_last_write_timestamp_seconds',
  help: 'Unix time of the last batch write to ClickHouse that succeeded (0 = none since start); a Kafka chunk whose records were all dead-lettered counts, as the consumer moved on',
  registers: [registry],
});

const ready = new Gauge({
  name: 'mailstats_ready',
  help: 'What GET /readyz answers: 1 = ready (200), 0 = not ready (503); read again at a scrape when the last reading is over 5 s old',
  registers: [registry],
});

const readinessCheck = new Gauge({
  name: 'mailstats_readiness_check_ok',
  help: 'Each readiness check of GET /readyz (clickhouse, migrations, render_workers, kafka_consumer): 1 = ok, 0 = failing',
  labelNames: ['check'] as const,
  registers: [registry],
});

const consumerLag = new Gauge({
  name: 'mailstats_kafka_consumer_lag',
  help: 'Messages not yet committed by the consumer group: log end offset − committed offset, per partition (read at scrape time)',
  labelNames: ['topic', 'partition'] as const,
  registers: [registry],
});

/** What the stats memory (query-api/stats/day-rows.ts) holds and is reading, read at scrape time. */
let statsMemory: (() => { size: number; reads: number }) | undefined;

new Gauge({
  name: 'mailstats_stats_memory_rows',
  help: 'automation.stats: what the lists held in memory count against STATS_MEMORY_ROWS (day rows; 100 subscriber ids count as one)',
  registers: [registry],
  collect() {
    this.set(statsMemory?.().size ?? 0);
  },
});

new Gauge({
  name: 'mailstats_stats_memory_reads',
  help: "automation.stats: background reads of a list's day rows, subscriber sets or trigger rows into memory, in flight (meanwhile the engine answers)",
  registers: [registry],
  collect() {
    this.set(statsMemory?.().reads ?? 0);
  },
});

/** The stats memory of this process (the newest one set, when a process makes several: tests). */
export function watchStatsMemory(read: () => { size: number; reads: number }): void {
  statsMemory = read;
}

const templatesOverLimits = new Counter({
  name: 'mailstats_templates_over_limits_total',
  help: 'Template records stored although they exceed the render limits (rendering them answers 17007)',
  registers: [registry],
});
export const countTemplateOverLimits = (): void => templatesOverLimits.inc();

const renderRejected = new Counter({
  name: 'mailstats_render_rejected_total',
  help: 'Template renders refused with 503 because no render worker was free in time: "queue_full" = the queue (or the user\'s half of it) was full, "deadline" = waited past the queue deadline',
  labelNames: ['reason'] as const,
  registers: [registry],
});
export const countRenderRejected = (reason: 'queue_full' | 'deadline'): void =>
  renderRejected.inc({ reason });

/** The render workers keep the compiled-template caches and their counters; read at scrape time. */
let templateCache: (() => { hits: number; misses: number }) | undefined;
export const readTemplateCacheFrom = (read: () => { hits: number; misses: number }): void => {
  templateCache = read;
};

new Counter({
  name: 'mailstats_template_cache_hits_total',
  help: 'Template renders served by an already compiled template (summed over the render workers)',
  registers: [registry],
  collect() {
    if (templateCache) {
      this.reset();
      this.inc(templateCache().hits);
    }
  },
});

new Counter({
  name: 'mailstats_template_cache_misses_total',
  help: 'Template renders that had to compile the template (first use, new version, or evicted)',
  registers: [registry],
  collect() {
    if (templateCache) {
      this.reset();
      this.inc(templateCache().misses);
    }
  },
});

const statsCache = new Counter({
  name: 'mailstats_stats_cache_requests_total',
  help: 'automation.stats reads of the per-day rows when the answer cache is on: "hit" = served from the cache, "miss" = read from ClickHouse (or joined an identical read in flight)',
  labelNames: ['result'] as const,
  registers: [registry],
});
export const countStatsCache = (result: 'hit' | 'miss'): void => statsCache.inc({ result });

const clickhouseErrors = new Counter({
  name: 'mailstats_clickhouse_errors_total',
  help: 'ClickHouse queries, commands and inserts that failed',
  registers: [registry],
});

export function observeRequest(operation: string, status: number, code: number, seconds: number): void {
  httpRequests.inc({ operation, status: String(status), code: String(code) });
  httpDuration.observe({ operation, status: String(status) }, seconds);
}

/** Counts an ingest result and hands it back, so a caller can wrap its answer in one call. */
export function countIngest<T extends { accepted: number; rejected: unknown[] }>(
  source: 'http',
  result: T,
): T {
  accepted.inc({ source }, result.accepted);
  rejected.inc({ source }, result.rejected.length);
  return result;
}

/** One Kafka chunk written: its valid records stored, its invalid ones dead-lettered. */
export function countKafkaChunk(valid: number, dead: number): void {
  accepted.inc({ source: 'kafka' }, valid);
  rejected.inc({ source: 'kafka' }, dead);
  deadLettered.inc(dead);
}

export const countDeduplicated = (n: number): void => deduplicated.inc(n);

/** Time one batch write; failed writes are timed too (they cost as much). */
export async function timeBatchWrite<T>(write: () => Promise<T>): Promise<T> {
  const end = batchWrite.startTimer();
  try {
    const result = await write();
    lastWrite.set(Date.now() / 1000);
    return result;
  } finally {
    end();
  }
}

/** The latest readiness reading; the check names are the fixed keys of checkReadiness's `checks`. */
export function setReadiness(isReady: boolean, checks: Record<string, string>): void {
  ready.set(isReady ? 1 : 0);
  for (const [check, state] of Object.entries(checks)) readinessCheck.set({ check }, state === 'ok' ? 1 : 0);
}

/** Counts a failed ClickHouse operation and hands its error back: `throw clickhouseFailed(err)`. */
export function clickhouseFailed(err: unknown): unknown {
  clickhouseErrors.inc();
  return err;
}

export interface PartitionLag {
  topic: string;
  partition: number;
  lag: number;
}

/** Replace the lag series with a fresh reading (partitions no longer assigned disappear). */
export function setConsumerLag(lags: PartitionLag[]): void {
  consumerLag.reset();
  for (const { topic, partition, lag } of lags) consumerLag.set({ topic, partition: String(partition) }, lag);
}
