import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createClient } from '@clickhouse/client';
import { adminPost } from './admin-http.js';
import { UsageError } from './commands.js';
import {
  BackupRequestError,
  privateCopy,
  readManifest,
  removeCopy,
  restoreDatabase,
  verifyBackup,
} from '../shared/clickhouse/backup.js';
import { Db, openChdb, openDb } from '../shared/clickhouse/client.js';
import { loadConfig } from '../shared/config.js';
import { ErasureStore, type Erasure } from '../shared/clickhouse/erasure-store.js';
import { IDENTIFIER, tablesOf } from '../shared/clickhouse/backup-shape.js';
import {
  readServerManifest,
  restoreOnServer,
  verifyServerManifest,
  type ServerManifest,
} from '../shared/clickhouse/backup-server.js';
import { ListChangeWriter } from '../shared/clickhouse/list-changes.js';
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
export async function restore(dir: string | undefined, erasuresFile?: string): Promise<number> {
  if (!dir) throw new UsageError('restore: give the backup directory to restore from');
  const config = loadConfig();
  // Read before anything is written: a bad file is refused while DATA_DIR is still untouched.
  const replay = erasuresFile === undefined ? undefined : erasuresToReplay(erasuresFile);
  if (config.CLICKHOUSE_URL) return restoreFromServer(config, resolve(dir), replay);
  const given = resolve(dir);
  const target = resolve(config.DATA_DIR);
  const existed = existsSync(target);
  if (existed && readdirSync(target).length > 0)
    throw new UsageError(
      `restore: DATA_DIR ${target} is not empty; restore fills an empty data directory (stop the service, ` +
        'move the old directory away or point DATA_DIR at a new one)',
    );
  // The engine reads exactly what was verified: a private copy (0700, beside DATA_DIR), made first,
  // verified, restored from, removed after; the backup at `given` is read once, by the copy.
  let source: string;
  let manifest;
  try {
    source = privateCopy(given, dirname(target));
  } catch (err) {
    if (err instanceof BackupRequestError) throw new UsageError(`restore: ${err.message}`);
    throw err;
  }
  try {
    manifest = readManifest(source);
    for (const warning of await verifyBackup(source, manifest, config.BACKUP_HMAC_KEY))
      console.error(`restore: warning: ${warning.replaceAll(source, given)}`);
  } catch (err) {
    removeCopy(source);
    if (err instanceof BackupRequestError)
      throw new UsageError(`restore: ${err.message.replaceAll(source, given)}`);
    throw err;
  }
  mkdirSync(target, { recursive: true, mode: 0o700 });
  // The operator names the backup on the command line (BACKUP_ROOT bounds what the service's admin
  // endpoint may write): this engine may read the private copy of that backup and nothing else.
  let db: Db | undefined;
  let after: string;
  try {
    const { chdb, session } = await openChdb(target, source);
    db = new Db(createClient({ connection: chdb as never }), 'embedded', chdb, undefined, session);
    await restoreDatabase(db, config.CLICKHOUSE_DATABASE, source, manifest);
    await db.command(`USE ${config.CLICKHOUSE_DATABASE}`);
    after = await erasuresAfterBackup(new ErasureStore(db), manifest.created_at, replay);
  } catch (err) {
    await db?.close().catch(() => undefined);
    removeCopy(source);
    // Nothing half-done: the data directory goes back to empty.
    for (const f of readdirSync(target)) rmSync(resolve(target, f), { recursive: true, force: true });
    if (!existed) rmSync(target, { recursive: true, force: true });
    const message = (err as Error).message.replaceAll(source, given);
    if (err instanceof BackupRequestError)
      throw new UsageError(`restore: ${message}; ${target} is empty again`, { cause: err });
    throw new Error(`restore failed; ${target} is empty again: ${message}`, { cause: err });
  }
  await db.close();
  removeCopy(source);
  console.log(
    `restored ${given} (schema version ${manifest.schema_version}, taken ${manifest.created_at}) into ${target}; ` +
      'start mailstats on it (tokens not set in the environment are generated anew)',
  );
  if (replay) console.log(after);
  else console.error(`restore: warning: ${after}`);
  return 0;
}

/** The lines of an erasure log (`erasures export`, or lines collected from the audit): each with its time. */
function erasuresToReplay(file: string): Erasure[] {
  const now = Date.now();
  return pairsOfFile(file).map((p, i) => {
    if (p.erased_at === undefined)
      throw new UsageError(
        `restore --erasures ${file}: pair ${i + 1} (${p.list_id},${p.subscriber_id}) has no erased_at: ` +
          'a restore re-applies erasures with their original time (the file erasures export writes)',
      );
    const erasedAt = Date.parse(p.erased_at);
    // As erase --at and POST /admin/erase (docs/lifecycle.md, "erase"): an erasure is never in the future.
    if (erasedAt > now)
      throw new UsageError(
        `restore --erasures ${file}: pair ${i + 1} (${p.list_id},${p.subscriber_id}): erased_at ${p.erased_at} ` +
          'is in the future; an erasure log holds only erasures already made',
      );
    return { list_id: p.list_id, subscriber_id: p.subscriber_id, erasedAt };
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
 * With CLICKHOUSE_URL (docs/lifecycle.md, "With CLICKHOUSE_URL"): the backup is on the server's disk
 * (DIR is a path there); its manifest is read through the server and checked first, then the server
 * restores it into CLICKHOUSE_DATABASE, a database with no tables, built by our migrations
 * (shared/clickhouse/backup-server.ts). A refused or failed restore drops that database again.
 */
async function restoreFromServer(
  config: ReturnType<typeof loadConfig>,
  source: string,
  replay: Erasure[] | undefined,
): Promise<number> {
  const target = config.CLICKHOUSE_DATABASE;
  if (!IDENTIFIER.test(target))
    throw new UsageError(`restore: CLICKHOUSE_DATABASE ${JSON.stringify(target)} is not a database name`);
  const log = createLogger('warn');
  const db = await openDb(config, log);
  let manifest: ServerManifest;
  let after: string;
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
    try {
      manifest = await readServerManifest(db, source);
      for (const warning of verifyServerManifest(source, manifest, config.BACKUP_HMAC_KEY))
        console.error(`restore: warning: ${warning}`);
    } catch (err) {
      // Nothing of the backup was restored: the target, which holds no table, is dropped again.
      if (err instanceof BackupRequestError) {
        await db.command(`DROP DATABASE IF EXISTS ${target} SYNC`).catch(() => undefined);
        throw new UsageError(`restore: ${err.message}`, { cause: err });
      }
      throw err;
    }
    try {
      await restoreOnServer(db, target, source, manifest, log);
      after = await erasuresAfterBackup(new ErasureStore(db), manifest.created_at, replay);
      // Processes still running on this database (it was dropped under them) hold answers of the data
      // they saw: one change row for every list, under a writer id of its own, has each of them drop
      // everything at its next poll (STATS_CHANGE_POLL_MS); the catalog's tables are new, which its poll
      // sees (CATALOG_POLL_MS) (docs/lifecycle.md, "With CLICKHOUSE_URL").
      if ((await tablesOf(db, target)).has('list_changes')) await new ListChangeWriter(db).note('all');
    } catch (err) {
      await db.command(`DROP DATABASE IF EXISTS ${target} SYNC`).catch(() => undefined);
      if (err instanceof BackupRequestError)
        throw new UsageError(`restore: ${err.message}; database ${target} was dropped again`, { cause: err });
      throw new Error(`restore failed; database ${target} was dropped again: ${(err as Error).message}`, {
        cause: err,
      });
    }
  } finally {
    await db.close();
  }
  console.log(
    `restored ${source} (database ${manifest.database}, schema version ${manifest.schema_version}, taken ` +
      `${manifest.created_at}) into ${target} on ${config.CLICKHOUSE_URL}`,
  );
  if (replay) console.log(after);
  else console.error(`restore: warning: ${after}`);
  return 0;
}
