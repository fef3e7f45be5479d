import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
