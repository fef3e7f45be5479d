import { LRUCache } from 'lru-cache';
import type { StatsQuery } from '../../shared/clickhouse/stats-store.js';
import type { Config } from '../../shared/config.js';
import { countStatsCache } from '../../shared/metrics.js';
import type { ChangeListener } from '../../shared/clickhouse/list-changes.js';
import { JsonAnswer } from '../api12/json-answer.js';

/** Bounds of the answer cache: entries, and bytes (the answers' own plus a fixed overhead each). */
export const STATS_CACHE_MAX_ENTRIES = 10_000;
export const STATS_CACHE_MAX_BYTES = 64 * 2 ** 20;
const ENTRY_BYTES = 256;
/**
 * An answer this large (a year of days is ~240 KB) is kept only when its query is asked a second time:
 * distinct year-long answers kept at once filled the cache with buffers that each new one evicted, and
 * the engine collected them with a full collection every few hundred ms (pauses of 10–20 ms in every
 * answer's latency at 100M records: BENCHMARKS.md, Growth). A dashboard asks again; a one-off never does.
 */
export const STATS_CACHE_LARGE_BYTES = 64 * 1024;
/** Keys of large answers asked once, remembered at most (a key is ~60 bytes). */
const ASKED_ONCE_MAX = 10_000;

interface Entry {
  version: number;
  answer: JsonAnswer;
}

export interface StatsCacheOptions {
  /** Off: every request reads ClickHouse. */
  enabled: boolean;
  /** Entries older than this are read again (0: only a version bump retires them). */
  ttlMs: number;
  maxEntries?: number;
  maxBytes?: number;
}

/**
 * STATS_CACHE_MS: unset = on (no expiry; in server mode kept current by the change signal); 0 = off;
 * N = on, a cached answer also expires after N ms.
 */
export function statsCacheOptions(config: Pick<Config, 'STATS_CACHE_MS'>): StatsCacheOptions {
  const ms = config.STATS_CACHE_MS;
  if (ms === undefined) return { enabled: true, ttlMs: 0 };
  return { enabled: ms > 0, ttlMs: ms };
}

/**
 * The answers of automation.stats as the bytes sent (a hit is neither shaped nor serialised again),
 * keyed by (list, workflow set, trigger, resolved period, currency) and tagged with the list's version
 * when the read started. The ingest pipeline bumps a list's version after every write that can change
 * what a reader sees (activity batches, re-datings); a cached result is served only while its version
 * is still the list's. A result whose read began before a bump is never stored under the newer version,
 * so a write that has completed (e.g. a POST /ingest that has answered) is always seen by the next read.
 * In server mode other processes write too: their writes bump the lists' versions through the change
 * signal (shared/clickhouse/list-changes.ts), within STATS_CHANGE_POLL_MS, and `freshUntil` stops
 * serving anything held when the signal has not been read for too long (docs/configuration.md).
 */
export class StatsCache implements ChangeListener {
  /** Settable for benchmarks (cached and uncached in one process); a disabled cache keeps nothing. */
  enabled: boolean;
  private readonly lru: LRUCache<string, Entry>;
  /** Reads in flight, by key: identical concurrent misses at the same version share one read. */
  private readonly inFlight = new Map<string, { version: number; answer: Promise<JsonAnswer> }>();
  private readonly versions = new Map<number, number>();
  /** Each answer kept, to its key and list: what a request sent again can find it by (repeat-answers.ts). */
  private readonly origins = new WeakMap<JsonAnswer, { key: string; listId: number }>();
  /** Keys of large answers (STATS_CACHE_LARGE_BYTES) made once and not kept: the next makes one kept. */
  private readonly askedOnce = new LRUCache<string, true>({ max: ASKED_ONCE_MAX });
  /** Versions are drawn from one counter; `floor` retires every list's entries at once. */
  private seq = 0;
  private floor = 0;
  /**
   * Until when (epoch ms) what is held may be served: always in the embedded mode (every write runs in
   * this process); in server mode set by each successful change poll (ListChangePoll).
   */
  freshUntil = Infinity;
  /** Server mode: set by the change poll (see ChangeListener.freshen). */
  freshen?: () => Promise<void>;

  constructor(opts: StatsCacheOptions) {
    this.enabled = opts.enabled;
    this.lru = new LRUCache<string, Entry>({
      max: opts.maxEntries ?? STATS_CACHE_MAX_ENTRIES,
      maxSize: opts.maxBytes ?? STATS_CACHE_MAX_BYTES,
      sizeCalculation: (e) => ENTRY_BYTES + e.answer.bytes.length,
      ...(opts.ttlMs > 0 ? { ttl: opts.ttlMs, ttlAutopurge: false } : {}),
    });
  }

  /** The list's current version. */
  version(listId: number): number {
    return Math.max(this.versions.get(listId) ?? 0, this.floor);
  }

  /** What a reader of these lists sees may have changed (called after the change is visible). */
  bump(listIds: Iterable<number>): void {
    for (const id of listIds) this.versions.set(id, ++this.seq);
  }

  /** Everything may have changed (e.g. written around the pipeline, or recovered at start). */
  bumpAll(): void {
    this.floor = ++this.seq;
    this.versions.clear();
    this.lru.clear();
    this.askedOnce.clear();
  }

  /** Drops every answer kept; nothing changed, so what is held per list version stays valid (benchmarks). */
  clear(): void {
    this.lru.clear();
  }

  get size(): number {
    return this.lru.size;
  }

  /** Whether what is held may be served now (see `freshUntil`). */
  fresh(): boolean {
    return this.freshUntil === Infinity || Date.now() < this.freshUntil;
  }

  /** The answer kept under `key` (of list `listId`) if it is at the list's current version; not counted. */
  current(key: string, listId: number): JsonAnswer | undefined {
    if (!this.enabled || !this.fresh()) return undefined;
    const hit = this.lru.get(key);
    return hit && hit.version === this.version(listId) ? hit.answer : undefined;
  }

  /** Where `answer` is kept, if `read` kept it. */
  origin(answer: JsonAnswer): { key: string; listId: number } | undefined {
    return this.origins.get(answer);
  }

  /**
   * The answer for `q` in `currency` (the list's, which shapes the answer): cached at the list's
   * current version, else made by `load` (and kept; a large answer from its query's second ask on).
   */
  async read<T>(q: StatsQuery, currency: string, load: () => Promise<JsonAnswer<T>>): Promise<JsonAnswer<T>> {
    // Stale (the change signal read too long ago): a poll now, shared, rather than an engine read here.
    if (!this.fresh() && this.freshen) await this.freshen();
    if (!this.enabled) return load();
    const key = `${keyOf(q)}|${currency}`;
    // Captured before the read: a bump during the read leaves this (older) version on the result.
    const version = this.version(q.listId);
    const hit = this.current(key, q.listId);
    if (hit) {
      countStatsCache('hit');
      return hit as JsonAnswer<T>;
    }
    countStatsCache('miss');
    const shared = this.inFlight.get(key);
    if (shared && shared.version === version) return shared.answer as Promise<JsonAnswer<T>>;
    const answer = load();
    this.inFlight.set(key, { version, answer });
    try {
      const result = await answer;
      if (result.bytes.length >= STATS_CACHE_LARGE_BYTES && !this.askedOnce.has(key))
        this.askedOnce.set(key, true);
      else if (this.version(q.listId) === version) {
        this.askedOnce.delete(key);
        // Kept as its bytes alone (a later hit that needs the object parses them): the object an answer
        // was made from is ~30 fields a day, and a cache full of year-long answers kept them all in the
        // old generation for every full collection to mark (BENCHMARKS.md, Growth).
        const kept = new JsonAnswer<T>(result.bytes);
        this.lru.set(key, { version, answer: kept });
        for (const a of [result, kept]) this.origins.set(a, { key, listId: q.listId });
      }
      return result;
    } finally {
      if (this.inFlight.get(key)?.answer === answer) this.inFlight.delete(key);
    }
  }
}

/** Workflow order does not change the query: the ids are sorted (repeats kept, they choose the SQL). */
function keyOf(q: StatsQuery): string {
  const workflows = q.workflowIds === null ? '*' : [...q.workflowIds].sort((a, b) => a - b).join(',');
  return `${q.listId}|${workflows}|${q.triggerId ?? ''}|${q.from}|${q.to}`;
}
