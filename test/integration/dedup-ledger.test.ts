// Modes: embedded and server
import { afterAll, describe, expect, it } from 'vitest';
import { Restartable } from '../support/restartable.js';

/**
 * docs/records.md "Counted once": the dedup ledger keeps event ids for DEDUP_WINDOW_DAYS plus a margin,
 * not forever; the window itself is never weakened, also when the setting changes between starts.
 */
const node = new Restartable({ CATALOG_POLL_MS: '60000' });
afterAll(() => node.destroy());

/** event_ids' TTL in days, as ClickHouse reports the table. */
async function ttlDays(): Promise<number | undefined> {
  const [row] = await node.svc!.db.query<{ q: string }>(
    "SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'event_ids'",
  );
  const m = /\bTTL\b.*?toIntervalDay\((\d+)\)/.exec(row!.q);
  return m ? Number(m[1]) : undefined;
}

const DAY = 86_400_000;
const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace('T', ' ').slice(0, 23);

async function ledgerIds(prefix: string): Promise<string[]> {
  const rows = await node.svc!.db.query<{ event_id: string }>(
    'SELECT event_id FROM event_ids WHERE startsWith(event_id, {p:String}) ORDER BY event_id',
    { p: prefix },
  );
  return rows.map((r) => r.event_id);
}

describe('the event_ids ledger is bounded by the dedup window', () => {
  it('has a TTL of the window plus one day, set from DEDUP_WINDOW_DAYS', async () => {
    await node.start({ DEDUP_WINDOW_DAYS: '3' });
    expect(await ttlDays()).toBe(4);
  }, 60_000);

  it('a forced TTL merge drops the ids older than window + margin and keeps the rest', async () => {
    const db = node.svc!.db;
    await db.insert(
      'event_ids',
      ['event_id', 'first_seen'],
      [
        ['ttl-a-old', at(10 * DAY)],
        ['ttl-b-past-margin', at(4 * DAY + 3_600_000)],
        ['ttl-c-in-margin', at(3 * DAY + 12 * 3_600_000)],
        ['ttl-d-in-window', at(DAY)],
      ],
    );
    await db.command('ALTER TABLE event_ids MATERIALIZE TTL', {}, { mutations_sync: '2' });
    await db.command('OPTIMIZE TABLE event_ids FINAL');
    expect(await ledgerIds('ttl-')).toEqual(['ttl-c-in-margin', 'ttl-d-in-window']);
  }, 60_000);

  it('the window still holds: an id taken a day ago is a duplicate', async () => {
    const send = (event_id: string) => ({
      type: 'send',
      event_id,
      list_id: 1,
      workflow_id: 1,
      subscriber_id: 1,
      timestamp: Date.now() - 3_600_000,
    });
    expect((await node.ingest([send('ttl-d-in-window'), send('ttl-e-new')])).body.accepted).toBe(2);
    const rows = await node.svc!.db.query<{ event_id: string }>(
      "SELECT event_id FROM events WHERE startsWith(event_id, 'ttl-') ORDER BY event_id",
    );
    expect(rows.map((r) => r.event_id)).toEqual(['ttl-e-new']);
  }, 60_000);

  it('follows the setting across restarts, longer and shorter, never below the window', async () => {
    for (const window of [30, 2, 7]) {
      await node.stop();
      await node.start({ DEDUP_WINDOW_DAYS: String(window) });
      expect(await ttlDays()).toBe(window + 1);
    }
    // Under the 7-day window (TTL 8 days) an id 5 days old is kept by a forced merge, one 9 days old is not.
    const db = node.svc!.db;
    await db.insert(
      'event_ids',
      ['event_id', 'first_seen'],
      [
        ['ttl2-a', at(9 * DAY)],
        ['ttl2-b', at(5 * DAY)],
      ],
    );
    await db.command('ALTER TABLE event_ids MATERIALIZE TTL', {}, { mutations_sync: '2' });
    await db.command('OPTIMIZE TABLE event_ids FINAL');
    expect(await ledgerIds('ttl2-')).toEqual(['ttl2-b']);
  }, 120_000);
});
