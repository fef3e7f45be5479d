// Modes: embedded only — the upgrade is run in a scratch database of the test service's own engine
// (`USE` holds for the embedded session; a server's HTTP statements do not share one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../shared/clickhouse/migrate.js';
import { MIGRATIONS } from '../../shared/clickhouse/migrations.js';
import { readPeople } from '../../shared/clickhouse/people-store.js';
import { EVENT_COLUMNS } from '../../shared/clickhouse/schema.js';
import { createLogger } from '../../shared/log.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Migration 8 keeps purchases' subscribers in daily_sets (buyers over a period, docs/api.md
 * "automation.statsTotals"). A store written before it gets them from its raw records, without changing
 * any count or amount, and running the migration's statements again changes nothing.
 */
const SCRATCH = 'mailstats_upgrade_9';
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.db.command('USE default').catch(() => undefined);
  await svc?.stop();
});

const event = (id: string, type: string, subscriber: number, workflow: number, day: string, ron = '0') => {
  const row: Record<string, unknown> = {
    event_id: id,
    type,
    list_id: 9,
    workflow_id: workflow,
    trigger_id: 0,
    subscriber_id: subscriber,
    ts: `${day} 10:00:00.000`,
    sent_at: null,
    day,
    status: 'none',
    reason: '',
    order_id: type === 'purchase' ? `o-${id}` : '',
    value_ron: ron,
    value_eur: '0',
    ingested_at: `${day} 10:00:00.000`,
    gen: 0,
  };
  return EVENT_COLUMNS.map((c) => row[c]);
};

describe('migration 8: buyers for a store written before it', () => {
  it('purchase sets are added from the raw records; counts and money unchanged; idempotent', async () => {
    const db = svc.db;
    // Reads on the session `USE` switched (`read` may take another connection, in the service's database).
    const session = { read: db.query.bind(db) } as unknown as typeof db;
    const log = createLogger('silent');
    await db.command(`DROP DATABASE IF EXISTS ${SCRATCH} SYNC`);
    await db.command(`CREATE DATABASE ${SCRATCH}`);
    try {
      await db.command(`USE ${SCRATCH}`);
      await migrate(
        db,
        log,
        MIGRATIONS.filter((m) => m.version < 8),
      );
      await db.insert('events', EVENT_COLUMNS, [
        event('a', 'send', 1, 1, '2026-10-01'),
        event('b', 'purchase', 1, 1, '2026-10-01', '10.5000'),
        event('c', 'purchase', 1, 1, '2026-10-02', '1.2500'),
        event('d', 'purchase', 2, 2, '2026-10-02', '3.0000'),
        event('e', 'purchase', 3, 1, '2026-11-05', '4.0000'),
      ]);
      const q = { listId: 9, workflowIds: null, triggerId: null, from: '2026-10-01', to: '2026-10-31' };
      const money = () =>
        db.query<{ n: string; ron: string }>(
          `SELECT toString(sum(n)) AS n, toString(sum(ron)) AS ron FROM daily_sets WHERE type = 'purchase'`,
        );
      const before = await money();
      expect((await readPeople(session, q)).buyers, 'before migration 8: no purchase sets').toBe(0);

      await migrate(db, log);
      expect((await readPeople(session, q)).buyers).toBe(2);
      expect((await readPeople(session, { ...q, workflowIds: [1] })).buyers).toBe(1);
      expect((await readPeople(session, { ...q, to: '2026-11-30' })).buyers).toBe(3);
      expect(await money()).toEqual(before);

      // The backfill again (a start interrupted before the migration was recorded): nothing changes.
      const eighth = MIGRATIONS.find((m) => m.version === 8)!;
      await db.command(eighth.statements[1]!);
      expect((await readPeople(session, { ...q, to: '2026-11-30' })).buyers).toBe(3);
      expect(await money()).toEqual(before);

      // New purchases reach the sets through the view.
      await db.insert('events', EVENT_COLUMNS, [event('f', 'purchase', 4, 2, '2026-10-03', '2.0000')]);
      expect((await readPeople(session, q)).buyers).toBe(3);
    } finally {
      await db.command('USE default');
      await db.command(`DROP DATABASE IF EXISTS ${SCRATCH} SYNC`);
    }
  });
});
