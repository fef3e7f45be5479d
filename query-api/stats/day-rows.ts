import { LRUCache } from 'lru-cache';
import type { GenerationSource } from '../../shared/clickhouse/generations.js';
import type { Db } from '../../shared/clickhouse/client.js';
import type { DayCounters } from '../../shared/clickhouse/schema.js';
import {
  listPairs,
  listScopes,
  listSets,
  type ScopeDay,
  type StatsQuery,
} from '../../shared/clickhouse/stats-store.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import { watchStatsMemory } from '../../shared/metrics.js';
import type { StatsCache } from './cache.js';
import {
  dropMonths,
  emptySets,
  forgetMonths,
  firstAtOrAfter,
  monthDays,
  monthsOf,
  packSets,
  subsetDays,
  type ListSets,
} from './subset-days.js';

/**
 * What a held subscriber id costs against STATS_MEMORY_ROWS: a day row as objects is ~400 bytes, an id
 * 4 (a Uint32Array entry; a read's transient JSON is one month's): 100 ids count as a row; a subscriber's
 * dense number (a Map entry, ~50 bytes) counts as 12 ids (docs/operations.md "Memory").
 */
const IDS_PER_ROW = 100;
const IDS_PER_SUBSCRIBER = 12;
const setsSize = (sets: ListSets | undefined) =>
  sets ? Math.ceil((sets.ids + IDS_PER_SUBSCRIBER * sets.dense.size) / IDS_PER_ROW) : 0;

interface Held {
  /** The list's version (StatsCache.version) and generation the rows were read at. */
  version: number;
  gen: number;
  /** By `workflow|trigger` (0: all), days ascending. */
  scopes: Map<string, DayCounters[]>;
  rows: number;
  /**
   * Whether `scopes` holds the (workflow, trigger) pairs' rows too (not precomputed: computed from
   * daily_sets, `listPairs`), read at the first workflow shape asked with a trigger: undefined until
   * then, null when they would not fit in STATS_MEMORY_ROWS (those shapes then read the engine).
   */
  pairs?: true | null;
  /**
   * The subscriber sets for workflow subsets, by month, each month read at the first subset asking one
   * of its days (undefined until the first). Months least recently asked make room for new ones within
   * STATS_MEMORY_ROWS; a subset whose months cannot fit together reads the engine.
   */
  sets?: ListSets;
  /** The fewest months found not to fit together (asks of as many or more read the engine). */
  tooManyMonths?: number;
}

/**
 * The precomputed per-day answers (daily_scopes) of recently asked lists, held in memory, so
 * that an answer for all workflows or one workflow (with or without a trigger), over any period, is a
 * slice of them rather than an engine read (~15 ms, one at a time per connection; BENCHMARKS.md).
 * A workflow subset is answered from the same rows (totals and money summed over its workflows) and the
 * list's subscriber sets per workflow and day (unique counts: the size of their union), read at the
 * first subset asked. Exact by the answer cache's rule (ARCHITECTURE.md, "The stats answer cache"): a
 * list's rows and sets are read whole at its version and current generation and kept only if neither
 * changed during the read; they answer only while both are still the list's. Meanwhile the engine
 * answers. Bounded by rows held (STATS_MEMORY_ROWS; IDS_PER_ROW ids count as a row), least recently
 * asked lists first out.
 *
 * In server mode other processes write: a list's version then also moves when the change signal tells
 * of another process's write (re-datings included), and its generation is read from the store only
 * around a load (the same before and after the read: no newer generation was done meanwhile, so nothing
 * read was being dropped). Held rows are served only while the signal is fresh (`StatsCache.fresh`).
 */
export class DayRows {
  private readonly held: LRUCache<number, Held>;
  private readonly loading = new Map<number, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly generations: GenerationSource,
    private readonly cache: Pick<StatsCache, 'version' | 'fresh'>,
    private readonly maxRows: number,
    private readonly log: Logger,
  ) {
    this.held = new LRUCache<number, Held>({
      maxSize: maxRows,
      sizeCalculation: (h) => Math.max(1, h.rows + setsSize(h.sets)),
    });
    watchStatsMemory(() => ({ size: this.held.calculatedSize, reads: this.loading.size }));
  }

  /**
   * The answer's per-day rows from memory, or undefined when the engine must answer (the list's rows,
   * or for a workflow subset its sets, not held at its current version: then they are read for the
   * next requests).
   */
  async rows(q: StatsQuery): Promise<DayCounters[] | undefined> {
    if (this.maxRows === 0 || !this.cache.fresh()) return undefined;
    // Server mode: a newer generation done elsewhere moves the list's version (the change signal).
    const gen = this.generations.inMemory ? await this.generations.of(q.listId) : undefined;
    const held = this.held.get(q.listId);
    const subset = q.workflowIds !== null && q.workflowIds.length !== 1;
    if (!held || held.version !== this.versionOf(q.listId) || (gen !== undefined && held.gen !== gen)) {
      // The rows are read for an all-workflow or one-workflow ask (a dashboard's first); a subset asks
      // for its sets only once they are held.
      if (!subset) this.load(q.listId);
      return undefined;
    }
    // Workflows with a trigger: the pairs' rows, computed from the sets (~as costly as all the other
    // rows of a list: BENCHMARKS.md), are read only once such a shape is asked.
    const months = subset ? this.missingMonths(held, q) : [];
    if (q.workflowIds !== null && q.triggerId !== null && held.pairs !== true) {
      if (held.pairs === undefined) this.loadPairs(q.listId, held);
      if (months?.length) this.loadSets(q.listId, held, months);
      return undefined;
    }
    if (subset) {
      if (months === null) return undefined;
      if (months.length > 0) {
        this.loadSets(q.listId, held, months);
        return undefined;
      }
      return subsetDays(held.scopes, held.sets!, { ...q, workflowIds: q.workflowIds! });
    }
    const days = held.scopes.get(`${q.workflowIds?.[0] ?? 0}|${q.triggerId ?? 0}`) ?? [];
    const at = (d: DayCounters) => d.date;
    return days.slice(firstAtOrAfter(days, q.from, false, at), firstAtOrAfter(days, q.to, true, at));
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
      this.held.set(listId, { version, gen, scopes: byScope(rows), rows: rows.length });
    })()
      .catch((err: unknown) => this.log.warn({ err, list_id: listId }, 'stats rows of a list not held'))
      .finally(() => this.loading.delete(listId));
    this.loading.set(listId, run);
  }

  /**
   * The months of the query's days whose sets the list does not hold ([] when all are held), or null when
   * they are too many to hold together: the engine answers such asks.
   */
  private missingMonths(held: Held, q: StatsQuery): string[] | null {
    const months = monthsOf(q.from, q.to);
    const missing = months.filter((m) => !held.sets?.months.has(m));
    if (missing.length > 0 && held.tooManyMonths !== undefined && months.length >= held.tooManyMonths)
      return null;
    return missing;
  }

  /**
   * Reads `months` of the list's subscriber sets beside its held rows, in the background, under the same
   * rule; least recently asked months make room. Months that cannot fit even then are not kept, and asks
   * of as many months read the engine from then on.
   */
  private loadSets(listId: number, held: Held, months: string[]): void {
    const key = -2 * listId - 1; // in `loading` beside the rows' reads (list ids are positive)
    if (this.loading.has(key)) return;
    const run = (async () => {
      // A month at a time: the read's transient JSON is one month's, whatever the period.
      for (const [i, month] of months.entries()) {
        const { from, to } = monthDays(month);
        const rows = await listSets(this.db, listId, held.gen, from, to);
        const now = await this.stillHeld(listId, held);
        if (!now) return;
        const sets = await packSets(rows, [month], now.sets ?? emptySets());
        // Packing gave the event loop back: the entry must still be of the version the sets were read at.
        const after = await this.stillHeld(listId, held);
        if (!after) return;
        const fits = () => after.rows + setsSize(sets) <= this.maxRows;
        if (!dropMonths(sets, new Set(months.slice(0, i + 1)), fits)) {
          // The period's months cannot be held together: none of them is kept.
          forgetMonths(sets, months.slice(0, i + 1));
          after.tooManyMonths = Math.min(after.tooManyMonths ?? Infinity, months.length);
          this.held.set(listId, { ...after, sets });
          return;
        }
        this.held.set(listId, { ...after, sets });
      }
    })()
      .catch((err: unknown) => this.log.warn({ err, list_id: listId }, 'subscriber sets of a list not held'))
      .finally(() => this.loading.delete(key));
    this.loading.set(key, run);
  }

  /** Reads the list's (workflow, trigger) pairs' rows into its held rows, in the background, under the same rule. */
  private loadPairs(listId: number, held: Held): void {
    const key = -2 * listId - 2;
    if (this.loading.has(key)) return;
    const run = (async () => {
      const rows = await listPairs(this.db, listId, held.gen);
      const now = await this.stillHeld(listId, held);
      if (!now) return;
      const size = now.rows + rows.length + setsSize(now.sets);
      if (size > this.maxRows) now.pairs = null;
      else {
        const scopes = new Map([...now.scopes, ...byScope(rows)]);
        this.held.set(listId, { ...now, scopes, rows: now.rows + rows.length, pairs: true });
      }
    })()
      .catch((err: unknown) => this.log.warn({ err, list_id: listId }, 'trigger rows of a list not held'))
      .finally(() => this.loading.delete(key));
    this.loading.set(key, run);
  }

  /**
   * The list's held entry if it is still of `held`'s version and generation (then what was read at them
   * belongs to it: versions and generations only grow, so unchanged now, they were unchanged during the
   * read), else undefined. Another load (sets, pairs) may have replaced the entry meanwhile: it is of
   * the same version and generation, and the caller adds to it.
   */
  private async stillHeld(listId: number, held: Held): Promise<Held | undefined> {
    if ((await this.generations.of(listId)) !== held.gen || this.versionOf(listId) !== held.version)
      return undefined;
    const now = this.held.peek(listId);
    return now && now.version === held.version && now.gen === held.gen ? now : undefined;
  }

  private versionOf(listId: number): number {
    return this.cache.version(listId);
  }

  /** What the list holds (tests, benchmarks): its sets' months, ascending, and its size in rows. */
  heldOf(listId: number): { months: string[]; size: number } | undefined {
    const h = this.held.peek(listId);
    if (!h) return undefined;
    return { months: [...(h.sets?.months.keys() ?? [])].sort(), size: h.rows + setsSize(h.sets) };
  }

  /** Settles when no list's rows are being read (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.loading.size > 0) await Promise.all(this.loading.values());
  }
}

/** `listScopes` / `listPairs` rows by `workflow|trigger`, days ascending within each. */
function byScope(rows: ScopeDay[]): Map<string, DayCounters[]> {
  const scopes = new Map<string, DayCounters[]>();
  for (const { workflow_id, trigger_id, ...day } of rows) {
    const key = `${workflow_id}|${trigger_id}`;
    let days = scopes.get(key);
    if (!days) scopes.set(key, (days = []));
    days.push(day);
  }
  return scopes;
}

/** Day rows in either mode (`generations`: embedded, the writer's; server mode, read from the store). */
export function statsDayRows(
  db: Db,
  generations: GenerationSource,
  cache: StatsCache,
  config: Pick<Config, 'STATS_MEMORY_ROWS'>,
  log: Logger,
): DayRows | undefined {
  if (config.STATS_MEMORY_ROWS === 0) return undefined;
  return new DayRows(db, generations, cache, config.STATS_MEMORY_ROWS, log);
}
