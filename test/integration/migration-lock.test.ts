// Modes: embedded and server
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withMigrationLock } from '../../shared/clickhouse/migrate.js';
import { createLogger } from '../../shared/log.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Issue 19 G: the migration lock read its owner back from the lock table's COMMENT and spliced it into
 * RENAME/DROP statements. Whoever can create that table (or set its comment) could have those statements
 * do more; an owner that is not a UUID (or an expiry that is not a number) now makes the lock count as
 * held by someone unknown, and nothing of it reaches a statement.
 */
describe('migration lock: the owner read back from the table comment', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  const tables = async () =>
    (
      await svc.db.query<{ name: string }>(
        'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
      )
    ).map((r) => r.name);

  it('an expired lock whose owner is not a UUID is not spliced into DDL; it is waited on as held', async () => {
    // "RENAME TABLE lock TO lock_expired_x, catalog TO gone" would be valid DDL.
    const comment = JSON.stringify({ owner: 'x, catalog TO gone', expires: 1 });
    await svc.db.command(
      `CREATE TABLE schema_migrations_lock (owner String) ENGINE = Memory COMMENT '${comment}'`,
    );
    let ran = false;
    const locked = withMigrationLock(
      svc.db,
      createLogger('silent'),
      async () => {
        ran = true;
      },
      { pollMs: 20 },
    );
    let failed: unknown;
    locked.catch((err: unknown) => (failed = err));
    await new Promise((r) => setTimeout(r, 500));
    expect(failed).toBeUndefined();
    expect(ran).toBe(false); // held by "someone unknown"
    expect(await tables()).toContain('catalog');
    expect(await tables()).not.toContain('gone');
    // Once the operator removes it, the lock is taken and the work runs.
    await svc.db.command('DROP TABLE schema_migrations_lock SYNC');
    await locked;
    expect(ran).toBe(true);
    expect(await tables()).not.toContain('schema_migrations_lock');
  });
});

/**
 * Issue 31 item 6: a process waiting on another's migration lock is expected; it says so in one calm
 * line of its own, and the client's `[ERROR] … TABLE_ALREADY_EXISTS` of every failed attempt stays out.
 */
describe('migration lock: the expected wait', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('logs one line of ours and nothing from the ClickHouse client', async () => {
    const info = { owner: randomUUID(), expires: Date.now() + 60_000 };
    await svc.db.command(
      `CREATE TABLE schema_migrations_lock (owner String) ENGINE = Memory COMMENT '${JSON.stringify(info)}'`,
    );
    const ours: { level: number; msg: string }[] = [];
    const log = createLogger('debug', { write: (line: string) => void ours.push(JSON.parse(line)) });
    const printed: string[] = [];
    const keep = (...args: unknown[]) => void printed.push(args.map(String).join(' '));
    const spies = [
      vi.spyOn(console, 'error').mockImplementation(keep),
      vi.spyOn(console, 'warn').mockImplementation(keep),
      vi.spyOn(console, 'info').mockImplementation(keep),
      vi.spyOn(console, 'log').mockImplementation(keep),
    ];
    try {
      let ran = false;
      const locked = withMigrationLock(
        svc.db,
        log,
        async () => {
          ran = true;
        },
        { pollMs: 50 },
      );
      // Several attempts, each refused with TABLE_ALREADY_EXISTS, fewer than ten (the reminder's period).
      await vi.waitFor(() => expect(ours.length).toBeGreaterThan(0));
      await new Promise((r) => setTimeout(r, 300));
      expect(ran).toBe(false);
      await svc.db.command('DROP TABLE schema_migrations_lock SYNC');
      await locked;
      expect(ran).toBe(true);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(printed.filter((p) => /ERROR|TABLE_ALREADY_EXISTS|Code: 57/.test(p))).toEqual([]);
    expect(ours.map((l) => [l.level, l.msg])).toEqual([
      [30, 'waiting for the migration lock (another process migrates)'],
    ]);
  });

  it('a live holder renews its lease: nobody takes over while its work outlasts the lease', async () => {
    const log = createLogger('silent');
    const order: string[] = [];
    const opts = { leaseMs: 1_500, pollMs: 50 };
    const first = withMigrationLock(
      svc.db,
      log,
      async () => {
        order.push('first in');
        await new Promise((r) => setTimeout(r, 4_000));
        order.push('first out');
      },
      opts,
    );
    await vi.waitFor(() => expect(order).toEqual(['first in']));
    const second = withMigrationLock(svc.db, log, async () => void order.push('second in'), opts);
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second in']);
  });
});
