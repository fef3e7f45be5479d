import type { Db } from './client.js';

/**
 * Embedded: the current dating generation of every list (the newest one marked done; 0 for a list never
 * dated), held in memory so that a stats read needs no read of `list_dating` beside its own (each
 * MergeTree read costs the engine ~4 ms to set up; BENCHMARKS.md). Exact there because one process owns
 * the data directory and its EventStore writes every done row, telling this at once
 * (ARCHITECTURE.md, "Re-dating a list"). Not used in server mode, where other processes re-date.
 */
export class CurrentGenerations {
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
