import { describe, expect, it } from 'vitest';
import { Catalog, CatalogNotFresh } from '../../shared/catalog/catalog.js';
import type { Db } from '../../shared/clickhouse/client.js';
import { createLogger } from '../../shared/log.js';

/** A Db whose catalog poll (read) fails while `failPoll` is set; user lookups (query) always answer. */
function fakeDb() {
  const state = { failPoll: false, polls: 0, loads: 0 };
  const db = {
    read: async () => {
      state.polls++;
      if (state.failPoll) throw new Error('poll refused');
      return [{ g: '1:0:x' }];
    },
    query: async () => {
      state.loads++;
      return [{ payload: JSON.stringify({ type: 'user', user_id: 1, api_key_sha256: 'k', active: true }) }];
    },
  } as unknown as Db;
  return { db, state };
}

const quiet = createLogger('silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the catalog freshness bound', () => {
  it('held users are served while the poll is fresh; once it has failed for longer than the bound, reads are refused', async () => {
    const { db, state } = fakeDb();
    const catalog = new Catalog(db, 'UTC', quiet);
    catalog.startPolling(10, 100);
    try {
      expect((await catalog.user(1))?.user_id).toBe(1);
      state.failPoll = true;
      // Before: served from memory for as long as the poll failed.
      let refused: unknown;
      for (let i = 0; i < 100 && refused === undefined; i++) {
        await sleep(20);
        refused = await catalog.user(1).then(
          () => undefined,
          (e: unknown) => e,
        );
      }
      expect(refused).toBeInstanceOf(CatalogNotFresh);
      expect((refused as Error).cause).toEqual(new Error('poll refused'));
      state.failPoll = false;
      // A read that finds it stale waits for one poll, and is served when that succeeds.
      expect((await catalog.user(1))?.user_id).toBe(1);
    } finally {
      catalog.stopPolling();
    }
  });

  it('without a bound (one process owns the store) what is held is served whatever the poll does', async () => {
    const { db, state } = fakeDb();
    const catalog = new Catalog(db, 'UTC', quiet);
    catalog.startPolling(10);
    try {
      await sleep(50); // the first poll has taken its fingerprint
      expect((await catalog.user(1))?.user_id).toBe(1);
      const loads = state.loads;
      state.failPoll = true;
      await sleep(150);
      expect((await catalog.user(1))?.user_id).toBe(1);
      expect(state.loads).toBe(loads); // from memory
    } finally {
      catalog.stopPolling();
    }
  });
});
