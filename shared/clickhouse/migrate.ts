import type { Logger } from '../log.js';
import type { Db } from './client.js';
import { MIGRATIONS, type Migration } from './migrations.js';

/** Apply the migrations not yet recorded, in order; safe to run from several processes at once. */
export async function migrate(db: Db, log: Logger, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  await db.command(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32, name String, applied_at DateTime DEFAULT now()
  ) ENGINE = ReplacingMergeTree ORDER BY version`);
  const done = new Set(
    (await db.query<{ version: number }>('SELECT DISTINCT version FROM schema_migrations')).map(
      (r) => r.version,
    ),
  );
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    for (const statement of m.statements) await db.command(statement);
    await db.insert('schema_migrations', ['version', 'name'], [[m.version, m.name]]);
    log.info({ version: m.version, name: m.name }, 'migration applied');
    applied.push(m.version);
  }
  return applied;
}
