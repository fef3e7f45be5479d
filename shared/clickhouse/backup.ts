import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Db } from './client.js';
import { MIGRATIONS } from './migrations.js';

/** Written beside the engine's files once a backup is complete: what `restore` checks first. */
export const MANIFEST = 'mailstats-backup.json';

export interface BackupManifest {
  format: 'mailstats-backup';
  /** The newest migration applied to the store at the backup. */
  schema_version: number;
  database: string;
  created_at: string;
}

/** A backup or restore the operator asked for wrongly (a path, a directory): said as it is. */
export class BackupRequestError extends Error {}

/** The newest migration this build knows. */
export const CURRENT_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** `dir` must be absolute and inside `root` (BACKUP_ROOT, the engine's backups.allowed_path). */
export function checkBackupPath(dir: string, root: string): string {
  if (!dir.startsWith('/')) throw new BackupRequestError(`${dir} is not an absolute path`);
  const abs = resolve(dir);
  const rel = relative(resolve(root), abs);
  if (rel.startsWith('..') || rel.startsWith('/'))
    throw new BackupRequestError(`${abs} is outside BACKUP_ROOT (${root})`);
  return abs;
}

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * BACKUP DATABASE to a new directory (embedded: a file backup the engine writes itself). The caller runs
 * it between writes (Pipeline.exclusive), so every batch is in it whole or not at all; then the
 * manifest is written (temp + rename): a directory without one is not a backup.
 */
export async function backupDatabase(
  db: Db,
  database: string,
  dir: string,
  root: string,
): Promise<BackupManifest & { dir: string }> {
  const abs = checkBackupPath(dir, root);
  if (db.mode === 'embedded' && existsSync(abs) && readdirSync(abs).length > 0)
    throw new BackupRequestError(`${abs} is not empty: a backup goes into a new or empty directory`);
  const [row] = await db.query<{ v: number }>(
    'SELECT max(version) AS v FROM schema_migrations',
    {},
    { output_format_json_quote_64bit_integers: 0 },
  );
  // The path is the engine's File() argument: DDL takes no query parameters, so it is quoted here
  // (an absolute path checked above; the database name is validated at start).
  try {
    await db.command(`BACKUP DATABASE ${database} TO File(${quote(abs)})`);
  } catch (err) {
    // A directory the engine cannot write (permissions, a file in the way, a full disk): said as it is.
    throw new BackupRequestError(`the backup into ${abs} failed: ${(err as Error).message}`, { cause: err });
  }
  const manifest: BackupManifest = {
    format: 'mailstats-backup',
    schema_version: row?.v ?? 0,
    database,
    created_at: new Date().toISOString(),
  };
  if (db.mode === 'embedded') {
    mkdirSync(abs, { recursive: true });
    const temp = join(abs, `${MANIFEST}.tmp`);
    writeFileSync(temp, JSON.stringify(manifest, null, 2) + '\n');
    renameSync(temp, join(abs, MANIFEST));
  }
  return { ...manifest, dir: abs };
}

/** The manifest of a backup directory, or why it is not one this build can restore. */
export function readManifest(dir: string): BackupManifest {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new BackupRequestError(`${abs} does not exist`);
  const file = join(abs, MANIFEST);
  if (!existsSync(file))
    throw new BackupRequestError(
      `${abs} is not a mailstats backup (no ${MANIFEST}; an unfinished backup has none)`,
    );
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as BackupManifest;
  } catch {
    throw new BackupRequestError(`${file} is not readable JSON: not a mailstats backup`);
  }
  if (manifest.format !== 'mailstats-backup' || !Number.isInteger(manifest.schema_version))
    throw new BackupRequestError(`${file} is not a mailstats backup manifest`);
  if (manifest.schema_version > CURRENT_SCHEMA_VERSION)
    throw new BackupRequestError(
      `${abs} is from a newer mailstats (schema version ${manifest.schema_version}; this one knows up to ` +
        `${CURRENT_SCHEMA_VERSION}): restore it with that version or newer`,
    );
  return manifest;
}

/** RESTORE DATABASE from a backup directory into a store that does not hold the database yet. */
export async function restoreDatabase(db: Db, database: string, dir: string): Promise<void> {
  const manifest = readManifest(dir);
  await db.command(`RESTORE DATABASE ${manifest.database} AS ${database} FROM File(${quote(resolve(dir))})`);
}
