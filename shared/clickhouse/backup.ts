import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { Db } from './client.js';
import { BackupRequestError } from './backup-error.js';
import { backupFiles, digestFiles, hmacMatches, hmacOf, signedText, verifyFiles } from './backup-digest.js';
import {
  backupTables,
  BackupContentError,
  compareTables,
  IDENTIFIER,
  tablesOf,
  takeRawRetention,
} from './backup-shape.js';
import { ledgerTtlDays } from './event-store.js';
import { migrate } from './migrate.js';
import { createLogger } from '../log.js';
import { MIGRATIONS } from './migrations.js';
import { backupOnServer } from './backup-server.js';

export { BackupRequestError } from './backup-error.js';

/** Written beside the engine's files once a backup is complete: what `restore` checks first. */
export const MANIFEST = 'mailstats-backup.json';
/** Files of the backup directory that are not the engine's: left out of the digests. */
const OURS = new Set([MANIFEST, `${MANIFEST}.tmp`]);

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 hex digits');
/** The manifest, as `backup` writes it and `restore` accepts it (docs/lifecycle.md). */
const manifestSchema = z.object({
  format: z.literal('mailstats-backup'),
  /** The newest migration applied to the store at the backup. */
  schema_version: z.number().int().min(0),
  /** The database's name in the backup: put into RESTORE, so a plain identifier and nothing else. */
  database: z.string(),
  created_at: z.string(),
  /** SHA-256 of every file of the backup but the manifest (absent in backups of older builds). */
  files: z.record(z.string(), hex64).optional(),
  /** HMAC-SHA256 of the manifest with BACKUP_HMAC_KEY, when the backup was taken with one. */
  hmac: hex64.optional(),
});
export type BackupManifest = z.infer<typeof manifestSchema>;

/** The newest migration this build knows. */
export const CURRENT_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** The real path of `p`: its deepest existing ancestor with links resolved, then the rest as given. */
function realPathOf(p: string): string {
  let head = p;
  const rest: string[] = [];
  while (!existsSync(head)) {
    rest.unshift(basename(head));
    const up = dirname(head);
    if (up === head) break;
    head = up;
  }
  return join(realpathSync(head), ...rest);
}

const inside = (path: string, root: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * `dir` must be absolute and, links resolved, inside `root` (BACKUP_ROOT, the engine's
 * backups.allowed_path). Returns its real path: what the engine is given.
 */
export function checkBackupPath(dir: string, root: string): string {
  if (!isAbsolute(dir)) throw new BackupRequestError(`${dir} is not an absolute path`);
  const realRoot = realPathOf(resolve(root));
  const real = realPathOf(resolve(dir));
  if (!inside(real, realRoot))
    throw new BackupRequestError(
      `${resolve(dir)} is outside BACKUP_ROOT (${root})${real !== resolve(dir) ? ` (it leads to ${real})` : ''}`,
    );
  return real;
}

/**
 * The directory a backup goes into, made ready: BACKUP_ROOT and the directory created with the data
 * directory's mode (0700), an existing one must be an empty directory; checked again once it exists,
 * so a link planted on the way does not lead the engine elsewhere.
 */
function prepareBackupDir(dir: string, root: string): string {
  const target = checkBackupPath(dir, root);
  try {
    mkdirSync(resolve(root), { recursive: true, mode: 0o700 });
    if (existsSync(target)) {
      if (!lstatSync(target).isDirectory())
        throw new BackupRequestError(
          `${target} is not a directory: a backup goes into a new or empty directory`,
        );
      if (readdirSync(target).length > 0)
        throw new BackupRequestError(`${target} is not empty: a backup goes into a new or empty directory`);
    } else mkdirSync(target, { recursive: true, mode: 0o700 });
  } catch (err) {
    if (err instanceof BackupRequestError) throw err;
    throw new BackupRequestError(`${target} cannot be used for a backup: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const real = checkBackupPath(target, root);
  if (real !== target)
    throw new BackupRequestError(`${target} changed while it was prepared (it leads to ${real})`);
  return real;
}

/** The data directory's modes on what the engine wrote with the process's umask: 0700 and 0600. */
function restrictModes(dir: string): void {
  chmodSync(dir, 0o700);
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isDirectory()) restrictModes(path);
    else if (st.isFile()) chmodSync(path, 0o600);
  }
}

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function identifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name))
    throw new BackupRequestError(
      `${what} ${JSON.stringify(name)} is not a database name (letters, digits, _)`,
    );
  return name;
}

/**
 * BACKUP DATABASE to a new directory. Embedded: a file backup the engine writes itself; the caller runs
 * it between writes (Pipeline.exclusive), so every batch is in it whole or not at all; then the manifest
 * (with the files' digests, signed with `hmacKey` when given) is written (temp + rename): a directory
 * without one is not a backup. With a server (`db.mode` 'server'): backupOnServer, whose BACKUP statement
 * runs in `between` (the caller's exclusive section) and whose manifest is written through the server.
 */
export async function backupDatabase(
  db: Db,
  database: string,
  dir: string,
  root: string,
  hmacKey?: string,
  between: <T>(task: () => Promise<T>) => Promise<T> = (task) => task(),
): Promise<{ dir: string; schema_version: number }> {
  identifier(database, 'CLICKHOUSE_DATABASE');
  // With a server the directory is on the server's disk, which this process may not reach.
  if (db.mode !== 'embedded') return backupOnServer(db, database, dir, hmacKey, between);
  return between(() => backupEmbedded(db, database, dir, root, hmacKey));
}

async function backupEmbedded(
  db: Db,
  database: string,
  dir: string,
  root: string,
  hmacKey?: string,
): Promise<BackupManifest & { dir: string }> {
  const abs = prepareBackupDir(dir, root);
  const [row] = await db.query<{ v: number }>(
    'SELECT max(version) AS v FROM schema_migrations',
    {},
    { output_format_json_quote_64bit_integers: 0 },
  );
  // The path is the engine's File() argument: DDL takes no query parameters, so it is quoted here
  // (an absolute path checked above; the database name is validated above).
  try {
    await db.command(`BACKUP DATABASE ${database} TO File(${quote(abs)})`);
  } catch (err) {
    // A directory the engine cannot write (permissions, a full disk): said as it is.
    throw new BackupRequestError(`the backup into ${abs} failed: ${(err as Error).message}`, { cause: err });
  }
  const fields = {
    format: 'mailstats-backup' as const,
    schema_version: row?.v ?? 0,
    database,
    created_at: new Date().toISOString(),
  };
  restrictModes(abs);
  const files = await digestFiles(abs, OURS);
  const manifest: BackupManifest = {
    ...fields,
    files,
    ...(hmacKey ? { hmac: hmacOf(hmacKey, signedText(fields, files)) } : {}),
  };
  const temp = join(abs, `${MANIFEST}.tmp`);
  writeFileSync(temp, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(temp, join(abs, MANIFEST));
  return { ...manifest, dir: abs };
}

/** The manifest of a backup directory, or why it is not one this build can restore. */
export function readManifest(dir: string): BackupManifest {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new BackupRequestError(`${abs} does not exist`);
  if (!lstatSync(abs).isDirectory()) throw new BackupRequestError(`${abs} is not a directory`);
  const file = join(abs, MANIFEST);
  if (!existsSync(file))
    throw new BackupRequestError(
      `${abs} is not a mailstats backup (no ${MANIFEST}; an unfinished backup has none)`,
    );
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new BackupRequestError(`${file} is not readable JSON: not a mailstats backup`);
  }
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success)
    throw new BackupRequestError(
      `${file} is not a mailstats backup manifest (${parsed.error.issues
        .map((i) => `${i.path.join('.') || 'manifest'}: ${i.message}`)
        .join('; ')})`,
    );
  const manifest = parsed.data;
  identifier(manifest.database, `${file}: "database"`);
  if (manifest.schema_version > CURRENT_SCHEMA_VERSION)
    throw new BackupRequestError(
      `${abs} is from a newer mailstats (schema version ${manifest.schema_version}; this one knows up to ` +
        `${CURRENT_SCHEMA_VERSION}): restore it with that version or newer`,
    );
  return manifest;
}

/**
 * Whether the backup's files are those the manifest names, byte for byte, and (with `hmacKey`) whether
 * the manifest is signed with it. Returns the warnings to print (a check that could not be made).
 */
export async function verifyBackup(
  dir: string,
  manifest: BackupManifest,
  hmacKey?: string,
): Promise<string[]> {
  const abs = resolve(dir);
  const warnings: string[] = [];
  if (hmacKey) {
    if (!manifest.hmac)
      throw new BackupRequestError(
        `${abs} is not signed, and BACKUP_HMAC_KEY is set: only a backup taken with that key is restored`,
      );
    if (!manifest.files || !hmacMatches(hmacKey, signedText(manifest, manifest.files), manifest.hmac))
      throw new BackupRequestError(
        `${abs}: the manifest's signature does not match BACKUP_HMAC_KEY: the backup was changed, or taken with another key`,
      );
  } else if (manifest.hmac)
    warnings.push(`${abs} is signed, but BACKUP_HMAC_KEY is not set: its signature was not checked`);
  if (manifest.files) await verifyFiles(abs, OURS, manifest.files);
  else
    warnings.push(
      `${abs} has no file digests (taken by an older mailstats): its files were not checked against the manifest`,
    );
  return warnings;
}

/**
 * A private copy of the backup directory `dir` in a new directory made under `parent` (mode 0700, this
 * process's own): the restore verifies that copy and has the engine read it, so a backup changed or
 * swapped after it was checked is never read (docs/lifecycle.md, "What a restore trusts"). Only
 * directories and regular files are copied (backupFiles refuses anything else); each file is copied
 * byte for byte, never linked, so a later write to the original does not reach the copy. The caller
 * removes the returned directory (`removeCopy`).
 */
export function privateCopy(dir: string, parent: string): string {
  if (!existsSync(resolve(dir))) throw new BackupRequestError(`${resolve(dir)} does not exist`);
  // The directory named may be a link (the operator's choice); what is under it is copied only as
  // directories and regular files.
  const abs = realpathSync(resolve(dir));
  if (!lstatSync(abs).isDirectory()) throw new BackupRequestError(`${resolve(dir)} is not a directory`);
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  const copy = mkdtempSync(join(parent, '.mailstats-restore-'));
  try {
    chmodSync(copy, 0o700);
    const files = backupFiles(abs, new Set());
    for (const path of files) {
      const to = join(copy, path);
      mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
      copyFileSync(join(abs, path), to, constants.COPYFILE_EXCL);
      chmodSync(to, 0o600);
    }
    return copy;
  } catch (err) {
    removeCopy(copy);
    if (err instanceof BackupRequestError) throw err;
    throw new BackupRequestError(`${abs} cannot be copied for the restore: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

export const removeCopy = (copy: string) => rmSync(copy, { recursive: true, force: true });

/**
 * RESTORE DATABASE from a backup directory (the restore's private copy) into a store that does not hold
 * the database yet, accepting only what mailstats writes and running nothing of the backup: the tables
 * are created by our own migrations at the backup's schema version; the backup's index is read with a
 * strict allow-list and refused unless every entry is the database's statement, one of our tables'
 * statements (compared with ours) or a data file of one of our tables; then the engine restores data
 * only (`create_table = 'must-exist'`: it compares the backup's statements with the tables there and
 * runs none of them). The restored database is compared again after.
 */
export async function restoreDatabase(
  db: Db,
  database: string,
  dir: string,
  manifest: BackupManifest,
): Promise<void> {
  const abs = resolve(dir);
  identifier(database, 'CLICKHOUSE_DATABASE');
  const from = identifier(manifest.database, 'the manifest\'s "database"');
  await db.command(`CREATE DATABASE ${database} ENGINE = Atomic`);
  await db.command(`USE ${database}`);
  await migrate(
    db,
    createLogger('silent'),
    MIGRATIONS.filter((m) => m.version <= manifest.schema_version),
  );
  const ours = await tablesOf(db, database);
  const found = backupTables(abs, from, new Set(ours.keys()));
  compareTables(found, ours, `the backup ${abs}`);
  // The retention of event_ids is set at every start (DEDUP_WINDOW_DAYS): ours takes the backup's, so
  // that the engine finds the statements equal.
  const days = found.has('event_ids')
    ? ledgerTtlDays(readFileSync(join(abs, 'metadata', from, 'event_ids.sql'), 'utf8'))
    : undefined;
  if (days !== undefined)
    await db.command(
      // An integer (matched as digits): DDL takes no query parameters.
      `ALTER TABLE ${database}.event_ids MODIFY TTL toDateTime(first_seen) + INTERVAL ${days} DAY`,
      {},
      { materialize_ttl_after_modify: 0 },
    );
  await takeRawRetention(db, database, abs, from);
  // Empty tables for the RESTORE (the migrations wrote their own rows), no merge until it is done.
  const tables = await dataTables(db, database);
  for (const t of tables) {
    await db.command(`SYSTEM STOP MERGES ${database}.${t}`);
    await db.command(`TRUNCATE TABLE ${database}.${t}`);
  }
  try {
    await db.command(
      `RESTORE DATABASE ${from} AS ${database} FROM File(${quote(abs)})
       SETTINGS create_table = 'must-exist', create_database = 'must-exist'`,
    );
  } catch (err) {
    const message = (err as Error).message;
    if (/different definition|CANNOT_RESTORE|Code: 607\b|does not exist/.test(message))
      throw new BackupContentError(`the backup ${abs} is not what mailstats creates; refused: ${message}`, {
        cause: err,
      });
    throw err;
  }
  compareTables(await tablesOf(db, database), ours, `the restored database ${database}`);
  const databases = await db.query<{ name: string; engine: string }>(
    `SELECT name, engine FROM system.databases WHERE name NOT IN ('system', 'default', 'information_schema', 'INFORMATION_SCHEMA')`,
  );
  const strange = databases.filter((d) => d.name !== database || d.engine !== 'Atomic');
  if (strange.length > 0)
    throw new BackupContentError(
      `the restore created what mailstats does not: ${strange.map((d) => `database ${d.name} (${d.engine})`).join(', ')}`,
    );
  for (const t of tables) await db.command(`SYSTEM START MERGES ${database}.${t}`);
}

/** The tables of `database` that hold rows (the MergeTree family: all of ours; views hold none). */
async function dataTables(db: Db, database: string): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = {database:String} AND endsWith(engine, 'MergeTree') ORDER BY name`,
    { database },
  );
  return rows.map((r) => identifier(r.name, 'a table'));
}
