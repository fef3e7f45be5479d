// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Issue 19 G: change detection must not depend on the writers' clocks. Each writer stamps `arrival`
 * from its own clock; a process polling only max(arrival) never noticed a record stamped below the
 * current maximum (a writer whose clock is behind another's), so a key or grant revocation could stay
 * unseen by the API's caches. Here another writer's rows are inserted directly into the table, as a
 * second process would.
 */
const USER = 71;
const KEY = 'skew-key';
const LIST = 81;
const COLUMNS = ['kind', 'key', 'list_id', 'version', 'arrival', 'payload'] as const;

describe('catalog change detection with writers whose clocks disagree', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ CATALOG_POLL_MS: '50' });
    const res = await svc.ingest(tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }));
    expect(res.body.rejected).toEqual([]);
  });
  afterAll(() => svc?.stop());

  const listAll = () => svc.call(`/api/1.2/rest/${USER}/${KEY}/list.all.json`);

  it('a revocation stamped earlier than the newest arrival still reaches the API', async () => {
    const [row] = await svc.db.query<{ g: string }>('SELECT toString(max(arrival)) AS g FROM catalog');
    const t0 = BigInt(row!.g);
    // A writer 60 s ahead writes something unrelated: the newest arrival is now t0 + 60 s.
    const workflow = { type: 'workflow', workflow_id: 5, list_id: LIST, name: 'ahead' };
    await svc.db.insert('catalog', COLUMNS, [
      ['workflow', '5', LIST, 0, String(t0 + 60_000_000n), JSON.stringify(workflow)],
    ]);
    await new Promise((r) => setTimeout(r, 300)); // polled by now
    expect((await listAll()).body).toEqual([expect.objectContaining({ list_id: String(LIST) })]);
    // A writer 30 s ahead (30 s behind the other) revokes the grant: later than the grant, so it wins,
    // but below the newest arrival.
    const revoke = { type: 'list_access', user_id: USER, list_id: LIST, granted: false };
    await svc.db.insert('catalog', COLUMNS, [
      ['list_access', `${USER}:${LIST}`, LIST, 0, String(t0 + 30_000_000n), JSON.stringify(revoke)],
    ]);
    await vi.waitFor(async () => expect((await listAll()).body).toEqual([]), {
      timeout: 5_000,
      interval: 100,
    });
  });

  it('a delete of another process, which adds no row, reaches the API', async () => {
    // The poll's fingerprint comes from the table's parts (shared/catalog/catalog.ts): an insert moves
    // its newest block number, a delete only its mutation number.
    const grant = { type: 'list_access', user_id: USER, list_id: LIST, granted: true };
    await svc.db.insert('catalog', COLUMNS, [
      ['list_access', `${USER}:${LIST}`, LIST, 1, '1', JSON.stringify(grant)],
    ]);
    await vi.waitFor(async () => expect((await listAll()).body).toHaveLength(1), {
      timeout: 5_000,
      interval: 100,
    });
    await svc.db.command(`DELETE FROM catalog WHERE kind = 'list_access'`);
    await vi.waitFor(async () => expect((await listAll()).body).toEqual([]), {
      timeout: 5_000,
      interval: 100,
    });
  });
});
