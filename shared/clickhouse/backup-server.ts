import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../log.js';
import type { Db } from './client.js';
import { BackupRequestError } from './backup-error.js';
import { BackupIntegrityError, hmacMatches, hmacOf } from './backup-digest.js';
import {
  BackupContentError,
  backupTables,
  clip,
  compareTables,
  IDENTIFIER,
  readBackupIndex,
  tablesOf,
  takeRawRetention,
} from './backup-shape.js';
import { ledgerTtlDays } from './event-store.js';
import { migrate } from './migrate.js';
import { MIGRATIONS } from './migrations.js';

/**
 * Backup and restore with CLICKHOUSE_URL (docs/lifecycle.md, "With CLICKHOUSE_URL"). The backup lies on
 * the server's disk, which this process may not be able to read, so everything goes through the server:
 *
 * - the manifest is a one-row table that the server backs up into `DIR/mailstats-manifest` (a backup of
 *   its own inside the backup directory), written after the database's backup, from what the server
 *   reads back out of that backup (the Backup database engine): per table its rows and a hash of them;
 * - a restore reads it back into a table this process created (`create_table = 'must-exist'`: the
 *   server compares the statement in the backup with ours and runs none of its own), checks it, builds
 *   the new database with our migrations at the manifest's schema version, and has the server restore
 *   the backup into those tables, again with `must-exist`: a table, view or statement of the backup
 *   that is not ours is refused by the server before any data is restored, and no statement of the
 *   backup ever runs. The content is then compared with the manifest.
 */

/** The manifest's own backup, inside the backup directory. */
export const SERVER_MANIFEST = 'mailstats-manifest';
/** The manifest table's name inside that backup (whatever scratch database it was written from). */
const MANIFEST_IN_BACKUP = 'mailstats_manifest.manifest';
/** The manifest table: one row, the manifest as JSON. Memory: it lives for one statement or two. */
const MANIFEST_COLUMNS = '(manifest String) ENGINE = Memory';

/** The newest migration this build knows. */
const NEWEST = Math.max(...MIGRATIONS.map((m) => m.version));

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 hex digits');
const count = z.number().int().min(0);
/** A table's content: its rows and the sum of a 64-bit hash of each row (order-free), as the server read them. */
const contentSchema = z.object({ rows: count, hash: z.string().regex(/^\d{1,20}$/) });
export type TableContent = z.infer<typeof contentSchema>;

/** The manifest of a server backup, as `backupOnServer` writes it and `restore` accepts it. */
export const serverManifestSchema = z
  .object({
    format: z.literal('mailstats-backup'),
    /** The newest migration in the backup's schema_migrations. */
    schema_version: count,
    /** The source's database name in the backup: put into RESTORE, so a plain identifier. */
    database: z.string().regex(IDENTIFIER, 'must be a database name (letters, digits, _)'),
    created_at: z.string(),
    /** The retention of event_ids (days) in the backup's statement, set at each start from DEDUP_WINDOW_DAYS. */
    ledger_ttl_days: z.number().int().positive().optional(),
    /** What the server reported for the BACKUP (from the backup's index): reported again by a RESTORE. */
    backup: z.object({
      num_files: count,
      total_size: count,
      num_entries: count,
      uncompressed_size: count,
    }),
    /** Every table of the backup (views hold no rows) and its content. */
    tables: z.record(z.string().regex(IDENTIFIER), contentSchema),
    /** HMAC-SHA256 of every other field with BACKUP_HMAC_KEY, when the backup was taken with one. */
    hmac: hex64.optional(),
  })
  .strict();
export type ServerManifest = z.infer<typeof serverManifestSchema>;

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const INT = { output_format_json_quote_64bit_integers: 0 } as const;

/** A value with every object's keys sorted: what the HMAC covers does not depend on key order. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** What the HMAC covers: every field but the HMAC itself. */
export function serverSignedText(manifest: Omit<ServerManifest, 'hmac'> & { hmac?: string }): string {
  return JSON.stringify(canonical({ ...manifest, hmac: undefined }));
}

function absolute(dir: string): string {
  if (!isAbsolute(dir))
    throw new BackupRequestError(`${dir} is not an absolute path (a path on the ClickHouse server's disk)`);
  return resolve(dir);
}

const scratchName = (what: string) => `mailstats_${what}_${randomUUID().replace(/-/g, '')}`;

/**
 * Every table of `database` that holds rows (the MergeTree family: all of ours; views hold none) and its
 * content, read by the server. Only those: reading a table of another engine may reach out (URL, S3).
 */
async function contentOf(db: Db, database: string): Promise<Map<string, TableContent>> {
  const tables = await db.query<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = {database:String} AND endsWith(engine, 'MergeTree')
     ORDER BY name`,
    { database },
  );
  const out = new Map<string, TableContent>();
  for (const { name } of tables) {
    // Names come from the server's catalog; only plain identifiers are put into the statement.
    if (!IDENTIFIER.test(name))
      throw new BackupContentError(`${database} holds a table named ${JSON.stringify(name)}`);
    // Order-free (parts may be read in any order); a sum, so two equal rows do not cancel out.
    const [row] = await db.query<{ rows: number; hash: string }>(
      `SELECT count() AS rows, toString(sum(cityHash64(tuple(*)))) AS hash FROM ${database}.${name}`,
      {},
      INT,
    );
    out.set(name, { rows: row?.rows ?? 0, hash: row?.hash ?? '0' });
  }
  return out;
}

/** The server's own account of a BACKUP or RESTORE it ran with `id`. */
async function operation(db: Db, id: string) {
  const [row] = await db.query<{
    status: string;
    base_backup_name: string;
    num_files: number;
    total_size: number;
    num_entries: number;
    uncompressed_size: number;
  }>(
    `SELECT toString(status) AS status, base_backup_name, num_files, total_size, num_entries, uncompressed_size
     FROM system.backups WHERE id = {id:String}`,
    { id },
    INT,
  );
  if (!row) throw new Error(`the server has no record of its backup operation ${id}`);
  return row;
}

/**
 * BACKUP DATABASE on the server into `dir` (a path on the server's disk, allowed by its
 * backups.allowed_path), then the manifest into `dir/mailstats-manifest`. `between` runs the BACKUP
 * statement between this process's writes (Pipeline.exclusive); what follows reads the backup itself,
 * so it needs no pause of the writes.
 */
export async function backupOnServer(
  db: Db,
  database: string,
  dir: string,
  hmacKey: string | undefined,
  between: <T>(task: () => Promise<T>) => Promise<T> = (task) => task(),
): Promise<ServerManifest & { dir: string }> {
  const abs = absolute(dir);
  const id = randomUUID();
  try {
    // DDL takes no query parameters: the path is quoted, the database name is an identifier (checked by
    // the caller), the id is ours.
    await between(() =>
      db.command(`BACKUP DATABASE ${database} TO File(${quote(abs)}) SETTINGS id = '${id}'`),
    );
  } catch (err) {
    throw new BackupRequestError(`the backup into ${abs} on the server failed: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const done = await operation(db, id);
  // What the backup holds, read out of the backup (not the live database: other processes may write
  // to it meanwhile). The Backup engine attaches its tables read-only, nothing of them runs.
  const peek = scratchName('backup');
  await db.command(`CREATE DATABASE ${peek} ENGINE = Backup(${quote(database)}, File(${quote(abs)}))`);
  let fields: Omit<ServerManifest, 'hmac'>;
  try {
    const tables = await contentOf(db, peek);
    const [v] = await db.query<{ v: number }>(
      `SELECT max(version) AS v FROM ${peek}.schema_migrations`,
      {},
      INT,
    );
    const [ledger] = await db.query<{ q: string }>(
      `SELECT create_table_query AS q FROM system.tables WHERE database = {peek:String} AND name = 'event_ids'`,
      { peek },
    );
    const ttl = ledgerTtlDays(ledger?.q ?? '');
    fields = {
      format: 'mailstats-backup',
      schema_version: v?.v ?? 0,
      database,
      created_at: new Date().toISOString(),
      ...(ttl === undefined ? {} : { ledger_ttl_days: ttl }),
      backup: {
        num_files: done.num_files,
        total_size: done.total_size,
        num_entries: done.num_entries,
        uncompressed_size: done.uncompressed_size,
      },
      tables: Object.fromEntries(tables),
    };
  } finally {
    await db.command(`DROP DATABASE IF EXISTS ${peek} SYNC`);
  }
  const manifest: ServerManifest = hmacKey
    ? { ...fields, hmac: hmacOf(hmacKey, serverSignedText(fields)) }
    : fields;
  const scratch = scratchName('manifest');
  await db.command(`CREATE DATABASE ${scratch}`);
  try {
    await db.command(`CREATE TABLE ${scratch}.manifest ${MANIFEST_COLUMNS}`);
    await db.command(`INSERT INTO ${scratch}.manifest VALUES ({m:String})`, { m: JSON.stringify(manifest) });
    await db.command(
      `BACKUP TABLE ${scratch}.manifest AS ${MANIFEST_IN_BACKUP} TO File(${quote(join(abs, SERVER_MANIFEST))})`,
    );
  } finally {
    await db.command(`DROP DATABASE IF EXISTS ${scratch} SYNC`);
  }
  return { ...manifest, dir: abs };
}

/**
 * The manifest of a server backup, read through the server into a table of ours (the backup's own
 * statement for it is compared, never run), or why it is not one this build can restore.
 */
export async function readServerManifest(db: Db, dir: string): Promise<ServerManifest> {
  const abs = absolute(dir);
  const where = join(abs, SERVER_MANIFEST);
  checkManifestIndex(abs);
  const scratch = scratchName('restore_manifest');
  const id = randomUUID();
  let rows: { manifest: string }[];
  await db.command(`CREATE DATABASE ${scratch}`);
  try {
    await db.command(`CREATE TABLE ${scratch}.manifest ${MANIFEST_COLUMNS}`);
    try {
      await db.command(
        `RESTORE TABLE ${MANIFEST_IN_BACKUP} AS ${scratch}.manifest FROM File(${quote(where)})
         SETTINGS create_table = 'must-exist', id = '${id}'`,
      );
    } catch (err) {
      const message = (err as Error).message;
      if (/BACKUP_NOT_FOUND|Code: 599\b/.test(message) || /\bnot found\b/.test(message))
        throw new BackupRequestError(
          `${abs} is not a mailstats backup (no ${SERVER_MANIFEST} in it that the server can read; an ` +
            `unfinished backup has none): ${message}`,
          { cause: err },
        );
      throw new BackupContentError(`${where} is not a mailstats manifest: ${message}`, { cause: err });
    }
    await refuseBaseBackup(db, id, where);
    rows = await db.query<{ manifest: string }>(`SELECT manifest FROM ${scratch}.manifest`);
  } finally {
    await db.command(`DROP DATABASE IF EXISTS ${scratch} SYNC`);
  }
  if (rows.length !== 1)
    throw new BackupContentError(`${where} holds ${rows.length} manifests: a mailstats backup holds one`);
  let value: unknown;
  try {
    value = JSON.parse(rows[0]!.manifest);
  } catch {
    throw new BackupContentError(`${where}: the manifest is not readable JSON: not a mailstats backup`);
  }
  const parsed = serverManifestSchema.safeParse(value);
  if (!parsed.success)
    throw new BackupContentError(
      `${where} is not a mailstats backup manifest (${parsed.error.issues
        .map((i) => `${i.path.join('.') || 'manifest'}: ${i.message}`)
        .join('; ')})`,
    );
  const manifest = parsed.data;
  if (manifest.schema_version > NEWEST)
    throw new BackupRequestError(
      `${abs} is from a newer mailstats (schema version ${manifest.schema_version}; this one knows up to ` +
        `${NEWEST}): restore it with that version or newer`,
    );
  return manifest;
}

/**
 * The engine's index of a backup on the server's disk, read here before the server reads anything of the
 * backup (docs/lifecycle.md, "With CLICKHOUSE_URL"): restore reads it at the same path on this machine
 * (on the server's host, or where its backup directory is mounted at the same path).
 */
function serverIndex(abs: string, sub?: string): string {
  const file = sub ? join(abs, sub, '.backup') : join(abs, '.backup');
  if (!existsSync(file)) {
    if (!existsSync(abs))
      throw new BackupRequestError(
        `${abs} cannot be read here: restore with CLICKHOUSE_URL checks the backup's index before the server ` +
          "reads the backup, so it runs where the server's backup directory is at the same path (on the " +
          'server, or with that directory mounted)',
      );
    throw new BackupRequestError(
      `${abs} is not a mailstats backup (no ${sub ? `${sub}/` : ''}.backup in it; an unfinished backup has none)`,
    );
  }
  return file;
}

/**
 * The manifest's own backup: its index (the strict reading of shared/clickhouse/backup-shape.ts, which
 * refuses a base backup) holds the one manifest table and nothing else.
 */
function checkManifestIndex(abs: string): void {
  const file = serverIndex(abs, SERVER_MANIFEST);
  const [db, table] = MANIFEST_IN_BACKUP.split('.') as [string, string];
  const names = new Set<string>();
  for (const e of readBackupIndex(file)) {
    const ok =
      e.name === `metadata/${db}.sql` ||
      e.name === `metadata/${db}/${table}.sql` ||
      /^data\/[A-Za-z0-9_]+\/[A-Za-z0-9_]+\/[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(e.name);
    const dataOk = e.dataFile === e.name || (e.name.startsWith('data/') && e.dataFile.startsWith('data/'));
    if (!ok || !dataOk || names.has(e.name) || e.name.split('/').includes('..'))
      throw new BackupContentError(`${file}: entry ${e.name} is not part of a mailstats manifest`);
    names.add(e.name);
  }
  if (!names.has(`metadata/${db}/${table}.sql`))
    throw new BackupContentError(`${file}: no manifest table in it: not a mailstats backup`);
}

/** Refuses a manifest not signed with `hmacKey` (when given); returns the warnings to print. */
export function verifyServerManifest(dir: string, manifest: ServerManifest, hmacKey?: string): string[] {
  const abs = resolve(dir);
  if (hmacKey) {
    if (!manifest.hmac)
      throw new BackupRequestError(
        `${abs} is not signed, and BACKUP_HMAC_KEY is set: only a backup taken with that key is restored`,
      );
    if (!hmacMatches(hmacKey, serverSignedText(manifest), manifest.hmac))
      throw new BackupRequestError(
        `${abs}: the manifest's signature does not match BACKUP_HMAC_KEY: the backup was changed, or taken with another key`,
      );
    return [];
  }
  return manifest.hmac
    ? [`${abs} is signed, but BACKUP_HMAC_KEY is not set: its signature was not checked`]
    : [];
}

/** A backup that reads from a base backup (anywhere, a URL included): mailstats writes none. */
async function refuseBaseBackup(db: Db, id: string, where: string): Promise<void> {
  const op = await operation(db, id);
  if (op.base_backup_name !== '')
    throw new BackupContentError(
      `${where} refers to a base backup (${op.base_backup_name}): mailstats writes none`,
    );
}

/** The server's refusal of a statement of the backup, said as the other checks say it. */
function refusal(abs: string, target: string, message: string): Error {
  const missing = new RegExp(`Table ${target}\\.([A-Za-z0-9_]+) does not exist`).exec(message);
  if (missing)
    return new BackupContentError(
      `the backup ${abs} is not what mailstats creates; refused: ${missing[1]} (not a table of mailstats)`,
    );
  const differs =
    /different definition: .* comparing to its definition in the backup: (.*?): While checking table [^.]+\.([A-Za-z0-9_]+)/s.exec(
      message,
    );
  if (differs)
    return new BackupContentError(
      `the backup ${abs} is not what mailstats creates; refused: ${differs[2]} (its statement differs: ${clip(differs[1]!)})`,
    );
  if (/different definition|CANNOT_RESTORE_DATABASE|Code: 607\b/.test(message))
    return new BackupContentError(`the backup ${abs} is not what mailstats creates; refused: ${message}`);
  return new BackupRequestError(`the server refused the restore of ${abs}: ${message}`);
}

/**
 * Restore the backup `dir` described by `manifest` into `db`'s own database (`target`, which holds no
 * table yet): our migrations create its tables first, then the server restores the backup into them
 * (refusing any table, view or statement that is not ours, before any data), then the content is
 * compared with the manifest. On a throw the caller drops `target`.
 */
export async function restoreOnServer(
  db: Db,
  target: string,
  dir: string,
  manifest: ServerManifest,
  log: Logger,
): Promise<void> {
  const abs = absolute(dir);
  await migrate(
    db,
    log,
    MIGRATIONS.filter((m) => m.version <= manifest.schema_version),
  );
  if (manifest.ledger_ttl_days !== undefined)
    await db.command(
      // A positive integer (the manifest's schema): DDL takes no query parameters.
      `ALTER TABLE ${target}.event_ids MODIFY TTL toDateTime(first_seen) + INTERVAL ${manifest.ledger_ttl_days} DAY`,
      {},
      { materialize_ttl_after_modify: 0 },
    );
  await takeRawRetention(db, target, abs, manifest.database);
  const ours = await tablesOf(db, target);
  // The backup's index and statements, read here before the server reads the backup: only the
  // database, our tables' statements (as ours) and data files of our tables; no base backup.
  serverIndex(abs);
  compareTables(backupTables(abs, manifest.database, new Set(ours.keys())), ours, `the backup ${abs}`);
  // Empty tables for the RESTORE, and no merge until the content is checked: a merge (a TTL one, a
  // Replacing one) changes the rows, not what they answer.
  const tables = [...(await contentOf(db, target)).keys()];
  for (const t of tables) {
    await db.command(`SYSTEM STOP MERGES ${target}.${t}`);
    await db.command(`SYSTEM STOP TTL MERGES ${target}.${t}`);
    await db.command(`TRUNCATE TABLE ${target}.${t}`);
  }
  const id = randomUUID();
  try {
    await db.command(
      `RESTORE DATABASE ${manifest.database} AS ${target} FROM File(${quote(abs)})
       SETTINGS create_table = 'must-exist', create_database = 'must-exist', id = '${id}'`,
    );
  } catch (err) {
    throw refusal(abs, target, (err as Error).message);
  }
  await refuseBaseBackup(db, id, abs);
  compareTables(await tablesOf(db, target), ours, `the restored database ${target}`);
  const content = await contentOf(db, target);
  const problems: string[] = [];
  for (const name of new Set([...content.keys(), ...Object.keys(manifest.tables)])) {
    const got = content.get(name);
    const want = manifest.tables[name];
    if (!got) problems.push(`${name} (missing)`);
    else if (!want) {
      if (got.rows > 0) problems.push(`${name} (${got.rows} rows, not in the manifest)`);
    } else if (got.rows !== want.rows)
      problems.push(`${name} (${got.rows} rows, the manifest says ${want.rows})`);
    else if (got.hash !== want.hash) problems.push(`${name} (its rows differ from the manifest's)`);
  }
  if (problems.length > 0)
    throw new BackupIntegrityError(
      `the content of ${abs} does not match the manifest: ${problems.join('; ')}: the backup was changed ` +
        "after it was written, or its manifest is another backup's",
    );
  // What the server read: the index's files and sizes (a file added or dropped in the index).
  const op = await operation(db, id);
  const figures = (['num_files', 'total_size', 'num_entries', 'uncompressed_size'] as const).filter(
    (k) => op[k] !== manifest.backup[k],
  );
  if (figures.length > 0)
    throw new BackupIntegrityError(
      `${abs}: its files do not match the manifest (${figures
        .map((k) => `${k} ${op[k]}, the manifest says ${manifest.backup[k]}`)
        .join('; ')}): the backup was changed after it was written`,
    );
  for (const t of tables) {
    await db.command(`SYSTEM START MERGES ${target}.${t}`);
    await db.command(`SYSTEM START TTL MERGES ${target}.${t}`);
  }
}
