import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { createClient } from '@clickhouse/client';
import { adminPost } from './admin-http.js';
import { UsageError } from './commands.js';
import {
  BackupRequestError,
  readManifest,
  restoreDatabase,
  verifyBackup,
} from '../shared/clickhouse/backup.js';
import { Db, openChdb, openDb } from '../shared/clickhouse/client.js';
import { loadConfig } from '../shared/config.js';
import { ErasureStore, type Erasure } from '../shared/clickhouse/erasure-store.js';
import { compareTables, IDENTIFIER, tablesOf } from '../shared/clickhouse/backup-shape.js';
import { migrate } from '../shared/clickhouse/migrate.js';
import { MIGRATIONS } from '../shared/clickhouse/migrations.js';
import { pairsOfFile } from './erase.js';
import { createLogger } from '../shared/log.js';

/** `backup DIR` (docs/lifecycle.md): the running service copies its store into DIR, a point in time. */
export async function backup(dir: string | undefined, url: string): Promise<number> {
  if (!dir) throw new UsageError('backup: give the directory to write the backup into');
  const done = await adminPost<{ dir: string; schema_version: number; seconds: number }>(url, '/backup', {
    dir: resolve(dir),
  });
  console.log(
    `backup written to ${done.dir} (schema version ${done.schema_version}, ${done.seconds.toFixed(1)} s)`,
  );
  return 0;
}

/**
 * `restore DIR` (service stopped): fills an empty DATA_DIR from a backup; refuses a non-empty one, a
 * directory that is not a backup, a backup of a newer schema, and one that is not what mailstats writes
 * (docs/lifecycle.md, "What a restore trusts"). Nothing is left half-done: a failed or refused restore
 * removes what it wrote.
 */
export async function restore(
  dir: string | undefined,
  erasuresFile?: string,
  fromDatabase?: string,
): Promise<number> {
  if (!dir) throw new UsageError('restore: give the backup directory to restore from');
  const config = loadConfig();
  // Read before anything is written: a bad file is refused while DATA_DIR is still untouched.
  const replay = erasuresFile === undefined ? undefined : erasuresToReplay(erasuresFile);
  if (config.CLICKHOUSE_URL) return restoreOnServer(config, resolve(dir), fromDatabase);
  let source: string;
  let manifest;
  try {
    // The engine is given the real path: what was checked is what it reads.
    source = existsSync(resolve(dir)) ? realpathSync(resolve(dir)) : resolve(dir);
    manifest = readManifest(source);
    for (const warning of await verifyBackup(source, manifest, config.BACKUP_HMAC_KEY))
      console.error(`restore: warning: ${warning}`);
  } catch (err) {
    if (err instanceof BackupRequestError) throw new UsageError(`restore: ${err.message}`);
    throw err;
  }
  const target = resolve(config.DATA_DIR);
  const existed = existsSync(target);
  if (existed && readdirSync(target).length > 0)
    throw new UsageError(
      `restore: DATA_DIR ${target} is not empty; restore fills an empty data directory (stop the service, ` +
        'move the old directory away or point DATA_DIR at a new one)',
    );
  mkdirSync(target, { recursive: true, mode: 0o700 });
  // The operator names the backup on the command line (BACKUP_ROOT bounds what the service's admin
  // endpoint may write): this engine may read that backup and nothing else.
  const { chdb, session } = await openChdb(target, source);
  const client = createClient({ connection: chdb as never });
  const db = new Db(client, 'embedded', chdb, undefined, session);
  let after: string;
  try {
    await restoreDatabase(db, config.CLICKHOUSE_DATABASE, source, manifest);
    await db.command(`USE ${config.CLICKHOUSE_DATABASE}`);
    after = await erasuresAfterBackup(new ErasureStore(db), manifest.created_at, replay);
  } catch (err) {
    await db.close().catch(() => undefined);
    // Nothing half-done: the data directory goes back to empty.
    for (const f of readdirSync(target)) rmSync(resolve(target, f), { recursive: true, force: true });
    if (!existed) rmSync(target, { recursive: true, force: true });
    if (err instanceof BackupRequestError)
      throw new UsageError(`restore: ${err.message}; ${target} is empty again`, { cause: err });
    throw new Error(`restore failed; ${target} is empty again: ${(err as Error).message}`, { cause: err });
  }
  await db.close();
  console.log(
    `restored ${source} (schema version ${manifest.schema_version}, taken ${manifest.created_at}) into ${target}; ` +
      'start mailstats on it (tokens not set in the environment are generated anew)',
  );
  if (replay) console.log(after);
  else console.error(`restore: warning: ${after}`);
  return 0;
}

/** The lines of an erasure log (`erasures export`, or lines collected from the audit): each with its time. */
function erasuresToReplay(file: string): Erasure[] {
  return pairsOfFile(file).map((p, i) => {
    if (p.erased_at === undefined)
      throw new UsageError(
        `restore --erasures ${file}: pair ${i + 1} (${p.list_id},${p.subscriber_id}) has no erased_at: ` +
          'a restore re-applies erasures with their original time (the file erasures export writes)',
      );
    return { list_id: p.list_id, subscriber_id: p.subscriber_id, erasedAt: Date.parse(p.erased_at) };
  });
}

/**
 * A backup knows only the erasures made before it. With `replay` (an erasure log), those it lacks are
 * recorded as intents (done = 0), which the next start completes before any write, as it completes an
 * interrupted erasure (docs/lifecycle.md, "Restores and replays"). Returns the sentence to print.
 */
async function erasuresAfterBackup(
  store: ErasureStore,
  takenAt: string,
  replay: Erasure[] | undefined,
): Promise<string> {
  const known = await store.erased();
  const held = [...known.values()].reduce((n, subs) => n + subs.size, 0);
  if (!replay)
    return (
      `erasures made after ${takenAt} are not in this backup (it holds ${held}): give the erasure log ` +
      '(erasures export, or the "erase" audit lines) with --erasures FILE to have them re-applied at the ' +
      'next start, or replay it with erase --file before the service consumes or imports (docs/lifecycle.md)'
    );
  const missing = replay.filter(
    (e) => e.erasedAt > (known.get(e.list_id)?.get(e.subscriber_id) ?? -Infinity),
  );
  if (missing.length > 0) await store.recordIntent(missing);
  return (
    `${missing.length} erasure${missing.length === 1 ? '' : 's'} made after the backup ` +
    `(of ${replay.length} in the log) recorded: completed at the next start, before any write`
  );
}

/**
 * With CLICKHOUSE_URL: ClickHouse's own RESTORE of the backup's database (`fromDatabase`, the source's
 * CLICKHOUSE_DATABASE: the server writes no manifest that says it) AS CLICKHOUSE_DATABASE, a database with
 * no tables. The backup is on the server's disk, which this process cannot read: its tables are checked
 * after the RESTORE against those our migrations create (in a scratch database of the server), and the
 * restored database is dropped when they differ.
 */
async function restoreOnServer(
  config: ReturnType<typeof loadConfig>,
  source: string,
  fromDatabase: string | undefined,
): Promise<number> {
  const target = config.CLICKHOUSE_DATABASE;
  const from = fromDatabase ?? target;
  if (!IDENTIFIER.test(from))
    throw new UsageError(`restore: --from-database ${JSON.stringify(from)} is not a database name`);
  const log = createLogger('warn');
  const db = await openDb(config, log);
  try {
    const [row] = await db.query<{ n: number }>(
      'SELECT count() AS n FROM system.tables WHERE database = {target:String}',
      { target },
      { output_format_json_quote_64bit_integers: 0 },
    );
    if ((row?.n ?? 0) > 0)
      throw new UsageError(
        `restore: database ${target} on ${config.CLICKHOUSE_URL} is not empty; restore into a new database (CLICKHOUSE_DATABASE)`,
      );
    // The server reads the backup from its own disk: DIR is a path on the server (its backups.allowed_path).
    // openDb created the (empty) target database: RESTORE fills it (allow_non_empty_tables is a setting of
    // RESTORE, not of the query, and its default refuses a table that exists).
    try {
      await db.command(
        `RESTORE DATABASE ${from} AS ${target} FROM File('${source.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}')`,
      );
    } catch (err) {
      throw new UsageError(`restore: the server refused the restore: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      await checkRestoredOnServer(config, db, log);
    } catch (err) {
      await db.command(`DROP DATABASE IF EXISTS ${target} SYNC`).catch(() => undefined);
      if (err instanceof BackupRequestError)
        throw new UsageError(`restore: ${err.message}; database ${target} was dropped again`, { cause: err });
      throw err;
    }
  } finally {
    await db.close();
  }
  console.log(`restored ${source} (database ${from}) into ${target} on ${config.CLICKHOUSE_URL}`);
  return 0;
}

/** The restored database's tables against those of our migrations up to its schema version. */
async function checkRestoredOnServer(
  config: ReturnType<typeof loadConfig>,
  db: Db,
  log: ReturnType<typeof createLogger>,
): Promise<void> {
  const target = config.CLICKHOUSE_DATABASE;
  const found = await tablesOf(db, target);
  if (!found.has('schema_migrations'))
    throw new BackupRequestError(
      `the restored database ${target} has no schema_migrations: not a mailstats backup`,
    );
  const [v] = await db.query<{ v: number }>(
    `SELECT max(version) AS v FROM ${target}.schema_migrations`,
    {},
    { output_format_json_quote_64bit_integers: 0 },
  );
  const scratch = 'mailstats_restore_expected';
  await db.command(`DROP DATABASE IF EXISTS ${scratch} SYNC`);
  const expectedDb = await openDb({ ...config, CLICKHOUSE_DATABASE: scratch }, log);
  try {
    await migrate(
      expectedDb,
      log,
      MIGRATIONS.filter((m) => m.version <= (v?.v ?? 0)),
    );
    compareTables(found, await tablesOf(db, scratch), `the restored database ${target}`);
  } finally {
    await expectedDb.close();
    await db.command(`DROP DATABASE IF EXISTS ${scratch} SYNC`);
  }
}
