import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { BoundedBytes } from './bounded-bytes.js';

/**
 * Reading import files (docs/lifecycle.md, "import") in bounded memory: NDJSON / JSON Lines, one JSON
 * array, CSV, each optionally gzipped. Every item carries the byte offset (of the decompressed stream)
 * just after it, so an import can checkpoint there and go on from it.
 */

export type Format = 'ndjson' | 'json' | 'csv';

/** Something wrong with the file as a whole (not one record): the import stops with this message. */
export class ImportInputError extends Error {}

/** The longest line (or array element) read; a longer one is that line's rejection, skipped in bounded memory. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** One record of a file: what is sent (`text`, a JSON object), or why it is rejected here (`error`). */
export interface SourceItem {
  /** Physical line (NDJSON, CSV: the row's first line) or element position (JSON array), from 1. */
  line: number;
  /** Decompressed byte offset just after this item: where a resumed import starts. */
  end: number;
  /** Lines (or elements) read up to `end`: a row's quoted newlines make it more than `line`. */
  through: number;
  text?: string;
  error?: string;
  /** The item as it stood in the file (for FILE.rejected.ndjson), cut at 64 KiB. */
  original: string;
}

/** Where reading starts: byte offset and the number of lines (or elements) before it. */
export interface Position {
  offset: number;
  line: number;
}

const ORIGINAL_MAX = 64 * 1024;
export const cut = (s: string) => (s.length > ORIGINAL_MAX ? `${s.slice(0, ORIGINAL_MAX)}…` : s);

/**
 * The decompressed bytes of a file from `offset` on. `onRead` is told the bytes read from disk (for
 * progress). A gzip file is decompressed from its start and the first `offset` bytes are skipped.
 */
export async function* fileBytes(
  file: string,
  gzip: boolean,
  offset: number,
  onRead: (n: number) => void = () => {},
): AsyncGenerator<Buffer> {
  const raw = createReadStream(file, { start: gzip ? 0 : offset, highWaterMark: 1 << 20 });
  raw.on('data', (b) => onRead((b as Buffer).length));
  if (!gzip) {
    try {
      for await (const b of raw) yield b as Buffer;
    } catch (err) {
      throw new ImportInputError(`${file}: cannot be read (${(err as Error).message})`);
    }
    return;
  }
  const gunzip = createGunzip();
  const source: Readable = raw.pipe(gunzip);
  raw.on('error', (err) => gunzip.destroy(err));
  let skip = offset;
  try {
    for await (const chunk of source) {
      let b = chunk as Buffer;
      if (skip > 0) {
        if (b.length <= skip) {
          skip -= b.length;
          continue;
        }
        b = b.subarray(skip);
        skip = 0;
      }
      yield b;
    }
  } catch (err) {
    const e = err as { code?: string; message: string };
    throw new ImportInputError(
      e.code === 'Z_BUF_ERROR' || /unexpected end/.test(e.message)
        ? `${file}: the gzip stream is truncated (it ends before its end marker)`
        : `${file}: not a readable gzip file (${e.message})`,
    );
  }
}

/** Lines as byte ranges, at most `max` bytes each (a longer one comes as `tooLong`, its bytes dropped). */
export async function* lines(
  input: AsyncIterable<Buffer>,
  start: number,
  max = MAX_LINE_BYTES,
): AsyncGenerator<{ bytes: Buffer | undefined; end: number; head: string }> {
  const line = new BoundedBytes(max);
  let offset = start;
  for await (const chunk of input) {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const stop = nl === -1 ? chunk.length : nl;
      line.add(chunk.subarray(pos, stop));
      offset += stop - pos;
      if (nl === -1) break;
      offset += 1;
      yield line.tooLong
        ? { bytes: undefined, end: offset, head: line.head }
        : { bytes: line.bytes(), end: offset, head: '' };
      line.reset();
      pos = nl + 1;
    }
  }
  if (line.tooLong) yield { bytes: undefined, end: offset, head: line.head };
  else if (!line.empty) yield { bytes: line.bytes(), end: offset, head: '' };
}

export const tooLongError = (what: string) => `${what} is longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB`;
