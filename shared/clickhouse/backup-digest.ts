import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createReadStream, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BackupRequestError } from './backup-error.js';

/**
 * The integrity of a backup directory (docs/lifecycle.md, "What a restore trusts"): the SHA-256 of each
 * of its files, kept in the manifest, and optionally an HMAC of the manifest with a key the operator
 * holds (BACKUP_HMAC_KEY). The digests find a file changed, added or removed since the backup; only the
 * HMAC finds a manifest rewritten along with them.
 */

/** A file the backup holds and its SHA-256 (hex), by its path relative to the backup directory. */
export type FileDigests = Record<string, string>;

/** A backup's content is wrong: said naming the file; restore refuses it. */
export class BackupIntegrityError extends BackupRequestError {}

/**
 * Every regular file under `dir` but the `skip`ped ones, by relative path ('/'-separated), sorted.
 * Anything else (a symbolic link, a device, a pipe) is refused: the engine writes only files and
 * directories, and a link could make the engine read what the digest never saw.
 */
export function backupFiles(dir: string, skip: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(join(dir, path));
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) {
        if (!skip.has(path)) out.push(path);
      } else
        throw new BackupIntegrityError(
          `${path} in ${dir} is not a regular file or directory (a backup holds none)`,
        );
    }
  };
  walk('');
  return out.sort();
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The digests of a backup directory's files (one pass over each, streamed). */
export async function digestFiles(dir: string, skip: ReadonlySet<string>): Promise<FileDigests> {
  const digests: FileDigests = {};
  for (const path of backupFiles(dir, skip)) digests[path] = await sha256(join(dir, path));
  return digests;
}

/** Refuses a directory whose files are not exactly those of `expected`, naming the first difference. */
export async function verifyFiles(
  dir: string,
  skip: ReadonlySet<string>,
  expected: FileDigests,
): Promise<void> {
  const present = backupFiles(dir, skip);
  const extra = present.filter((p) => !Object.hasOwn(expected, p));
  if (extra.length > 0)
    throw new BackupIntegrityError(
      `${extra[0]} (${extra.length} file(s) in all) is in ${dir} but not in the manifest: the backup was changed after it was written`,
    );
  const have = new Set(present);
  const missing = Object.keys(expected).filter((p) => !have.has(p));
  if (missing.length > 0)
    throw new BackupIntegrityError(
      `${missing[0]} (${missing.length} file(s) in all) is in the manifest but missing from ${dir}`,
    );
  for (const path of present)
    if ((await sha256(join(dir, path))) !== expected[path])
      throw new BackupIntegrityError(
        `${path}: its SHA-256 does not match the manifest's: the backup was changed or damaged after it was written`,
      );
}

/** What the HMAC covers: every field of the manifest but the HMAC itself, in one fixed order. */
export function signedText(fields: Record<string, unknown>, files: FileDigests): string {
  const ordered = Object.keys(fields)
    .filter((k) => k !== 'hmac' && k !== 'files')
    .sort()
    .map((k) => [k, fields[k]]);
  return JSON.stringify([
    ordered,
    Object.keys(files)
      .sort()
      .map((p) => [p, files[p]]),
  ]);
}

export const hmacOf = (key: string, text: string): string =>
  createHmac('sha256', key).update(text).digest('hex');

export function hmacMatches(key: string, text: string, hmac: string): boolean {
  const want = Buffer.from(hmacOf(key, text), 'hex');
  const got = Buffer.from(hmac, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}
