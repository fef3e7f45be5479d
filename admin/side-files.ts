import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  ftruncateSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { ImportInputError } from './import-input.js';

/**
 * The files `import` writes beside the file it reads (the checkpoint, the rejected lines), which lie in
 * a directory others may write to: each is opened without following a symbolic link, so a link planted
 * under one of their names can neither be written through nor truncated (docs/lifecycle.md, "import").
 */

const { O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW } = constants;

/** What is at `path` itself (a link is not followed): undefined when nothing is. */
function kindOf(path: string): 'file' | 'other' | undefined {
  try {
    return lstatSync(path).isFile() ? 'file' : 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

const notAFile = (path: string) =>
  new ImportInputError(
    `${path} is not a regular file (a symbolic link?): refused, import writes its own files there; remove it`,
  );

function open(path: string, flags: number): number {
  try {
    return openSync(path, flags | O_NOFOLLOW, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EEXIST') throw notAFile(path);
    throw err;
  }
}

/** Whether a regular file is at `path`; anything else there (a link among them) is refused. */
export function sideFileExists(path: string): boolean {
  const kind = kindOf(path);
  if (kind === 'other') throw notAFile(path);
  return kind === 'file';
}

/** A side file's text, read only when it is a regular file. */
export function readSideFile(path: string): string {
  if (!sideFileExists(path)) throw new ImportInputError(`${path}: no such file`);
  const fd = open(path, constants.O_RDONLY);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path` whole: a new temporary file of an unguessable name (created, never opened through a
 * link), renamed over it (a rename replaces a link itself, never its target).
 */
export function writeSideFileAtomically(path: string, text: string): void {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = open(temp, O_WRONLY | O_CREAT | O_EXCL);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

/**
 * An append-only side file: kept at its first `keep` bytes (what acknowledged chunks wrote) or started
 * anew, and created only at the first append.
 */
export class AppendSideFile {
  private fd: number | undefined;

  constructor(
    private readonly path: string,
    keep: number,
  ) {
    if (keep > 0 && sideFileExists(path)) {
      this.fd = open(path, O_WRONLY | O_APPEND);
      ftruncateSync(this.fd, keep);
    } else if (kindOf(path) !== undefined) rmSync(path); // a link is removed, its target untouched
  }

  append(text: string): void {
    this.fd ??= open(this.path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL);
    writeSync(this.fd, text);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
