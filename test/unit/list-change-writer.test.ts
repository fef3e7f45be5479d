import { describe, expect, it } from 'vitest';
import type { Db } from '../../shared/clickhouse/client.js';
import { ChangeSignalNotStored, ListChangeWriter } from '../../shared/clickhouse/list-changes.js';

/** A Db whose inserts fail while `fail` is set; the rows it stored. */
function fakeDb() {
  const state = { fail: true, rows: [] as unknown[][] };
  const db = {
    insert: async (_table: string, _columns: string[], rows: unknown[][]) => {
      if (state.fail) throw new Error('Code: 252. DB::Exception: Too many parts');
      state.rows.push(...rows);
    },
  } as unknown as Db;
  return { db, state };
}

describe('ListChangeWriter', () => {
  it('a failed change row fails the write as ChangeSignalNotStored, and is written by a retry without another write', async () => {
    const { db, state } = fakeDb();
    const writer = new ListChangeWriter(db, undefined, 20);
    try {
      const err = await writer.note([7, 8]).catch((e: unknown) => e);
      // Before: the ClickHouse error itself (a 500 at the API), and the row waited for the next write.
      expect(err).toBeInstanceOf(ChangeSignalNotStored);
      expect(writer.hasPending).toBe(true);
      // A retry that fails too is tried again.
      await new Promise((r) => setTimeout(r, 60));
      expect(state.rows).toEqual([]);
      state.fail = false;
      for (let i = 0; i < 100 && state.rows.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(state.rows.map((r) => r.slice(2))).toEqual([['[7,8]', 0]]);
      expect(writer.hasPending).toBe(false);
    } finally {
      writer.close();
    }
  });

  it('stops retrying once closed', async () => {
    const { db, state } = fakeDb();
    const writer = new ListChangeWriter(db, undefined, 20);
    await writer.note('all').catch(() => undefined);
    writer.close();
    state.fail = false;
    await new Promise((r) => setTimeout(r, 80));
    expect(state.rows).toEqual([]);
  });
});
