import { LRUCache } from 'lru-cache';
import type { CurrentGenerations } from '../../shared/clickhouse/generations.js';
import type { Db } from '../../shared/clickhouse/client.js';
import type { DayCounters } from '../../shared/clickhouse/schema.js';
import { listScopes, type StatsQuery } from '../../shared/clickhouse/stats-store.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import type { StatsCache } from './cache.js';

interface Held {
  /** The list's version (StatsCache.version) and generation the rows were read at. */
  version: number;
  gen: number;
  /** By `workflow|trigger` (0: all), days ascending. */
  scopes: Map<string, DayCounters[]>;
  rows: number;
}

/**
 * Embedded: the precomputed per-day answers (daily_scopes) of recently asked lists, held in memory, so
 * that an answer for all workflows or one workflow (with or without a trigger), over any period, is a
 * slice of them rather than an engine read (~15 ms, one at a time per connection; BENCHMARKS.md).
 * Exact by the answer cache's rule (ARCHITECTURE.md, "The stats answer cache"): a list's rows are read
 * whole at its version and current generation and kept only if neither changed during the read; they
 * answer only while both are still the list's. Meanwhile, and for workflow subsets (bitmap unions),
 * the engine answers. Bounded by rows held (STATS_MEMORY_ROWS), least recently asked lists first out.
 */
export class DayRows {
  private readonly held: LRUCache<number, Held>;
  private readonly loading = new Map<number, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly generations: CurrentGenerations,
    private readonly versionOf: (listId: number) => number,
    private readonly maxRows: number,
    private readonly log: Logger,
  ) {
    this.held = new LRUCache<number, Held>({ maxSize: maxRows, sizeCalculation: (h) => Math.max(1, h.rows) });
  }

  /**
   * The answer's per-day rows from memory, or undefined when the engine must answer (a workflow subset,
   * or the list's rows not held at its current version: then they are read for the next requests).
   */
  async rows(q: StatsQuery): Promise<DayCounters[] | undefined> {
    if (this.maxRows === 0 || (q.workflowIds !== null && q.workflowIds.length !== 1)) return undefined;
    const gen = await this.generations.of(q.listId);
    const held = this.held.get(q.listId);
    if (!held || held.version !== this.versionOf(q.listId) || held.gen !== gen) {
      this.load(q.listId);
      return undefined;
    }
    const days = held.scopes.get(`${q.workflowIds?.[0] ?? 0}|${q.triggerId ?? 0}`) ?? [];
    return days.slice(firstAtOrAfter(days, q.from), firstAtOrAfter(days, q.to, true));
  }

  /** Reads the list's rows in the background (one read per list at a time; a failure only logs). */
  private load(listId: number): void {
    if (this.loading.has(listId)) return;
    const run = (async () => {
      const version = this.versionOf(listId);
      const gen = await this.generations.of(listId);
      const rows = await listScopes(this.db, listId, gen);
      if (this.versionOf(listId) !== version || (await this.generations.of(listId)) !== gen) return;
      if (rows.length > this.maxRows) return;
      const scopes = new Map<string, DayCounters[]>();
      for (const { workflow_id, trigger_id, ...day } of rows) {
        const key = `${workflow_id}|${trigger_id}`;
        let days = scopes.get(key);
        if (!days) scopes.set(key, (days = []));
        days.push(day);
      }
      this.held.set(listId, { version, gen, scopes, rows: rows.length });
    })()
      .catch((err: unknown) => this.log.warn({ err, list_id: listId }, 'stats rows of a list not held'))
      .finally(() => this.loading.delete(listId));
    this.loading.set(listId, run);
  }

  /** Settles when no list's rows are being read (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.loading.size > 0) await Promise.all(this.loading.values());
  }
}

/** Index of the first day ≥ `date` (`after`: > `date`) in days sorted ascending ('YYYY-MM-DD' sorts as text). */
function firstAtOrAfter(days: DayCounters[], date: string, after = false): number {
  let lo = 0;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const d = days[mid]!.date;
    if (d < date || (after && d === date)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Embedded only (where the process holds each list's generation and version); none in server mode. */
export function statsDayRows(
  db: Db,
  generations: CurrentGenerations | undefined,
  cache: StatsCache,
  config: Pick<Config, 'STATS_MEMORY_ROWS'>,
  log: Logger,
): DayRows | undefined {
  if (!generations || config.STATS_MEMORY_ROWS === 0) return undefined;
  return new DayRows(db, generations, (id) => cache.version(id), config.STATS_MEMORY_ROWS, log);
}
