import type { Db } from './client.js';

/** Where a reader learns a list's current dating generation (the newest one marked done; 0: none). */
export interface GenerationSource {
  /**
   * True when `of` answers from memory kept current by this process's writer (embedded): cheap enough
   * to check at every ask. False (server mode): `of` reads the store, so it is checked only around a
   * read of held rows, and a change is otherwise noticed through the list's version.
   */
  readonly inMemory: boolean;
  of(listId: number): Promise<number>;
}

/**
 * Embedded: the current dating generation of every list (the newest one marked done; 0 for a list never
 * dated), held in memory so that a stats read needs no read of `list_dating` beside its own (each
 * MergeTree read costs the engine ~4 ms to set up; BENCHMARKS.md). Exact there because one process owns
 * the data directory and its EventStore writes every done row, telling this at once
 * (ARCHITECTURE.md, "Re-dating a list"). Server mode reads it from the store (StoredGenerations).
 */
export class CurrentGenerations implements GenerationSource {
  readonly inMemory = true;
  private readonly gens = new Map<number, number>();
  private loading: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  /** Generation `gen` of the list is done (called once its done row is stored). */
  done(listId: number, gen: number): void {
    if (gen > (this.gens.get(listId) ?? 0)) this.gens.set(listId, gen);
  }

  /** The list's current generation; the first call reads every list's from the store, once. */
  async of(listId: number): Promise<number> {
    await (this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined;
      throw err;
    }));
    return this.gens.get(listId) ?? 0;
  }

  private async load(): Promise<void> {
    const rows = await this.db.query<{ list_id: number; gen: number }>(
      'SELECT list_id, max(gen) AS gen FROM list_dating WHERE done = 1 GROUP BY list_id',
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    // Generations only grow: one marked done while this read ran is kept (max).
    for (const r of rows) this.done(r.list_id, r.gen);
  }
}

/**
 * Server mode: the list's current generation read from `list_dating` at each call (other processes
 * re-date). Used around the read of a list's held rows (query-api/stats/day-rows.ts): the same before
 * and after it, no newer generation was done meanwhile, so none of the read's rows was being dropped.
 */
export class StoredGenerations implements GenerationSource {
  readonly inMemory = false;

  constructor(private readonly db: Db) {}

  async of(listId: number): Promise<number> {
    const [row] = await this.db.read<{ gen: number }>(
      'SELECT max(gen) AS gen FROM list_dating WHERE list_id = {list:UInt64} AND done = 1',
      { list: listId },
      { output_format_json_quote_64bit_integers: 0 },
    );
    return row?.gen ?? 0;
  }
}
