import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { CSV_FIELDS, cellValue, type CellKind } from './csv-fields.js';

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

export function formatOf(file: string): { format: Format; gzip: boolean } {
  const gzip = file.endsWith('.gz');
  const base = gzip ? file.slice(0, -3) : file;
  const ext = /\.([A-Za-z0-9]+)$/.exec(base)?.[1]?.toLowerCase();
  if (ext === 'ndjson' || ext === 'jsonl') return { format: 'ndjson', gzip };
  if (ext === 'json') return { format: 'json', gzip };
  if (ext === 'csv') return { format: 'csv', gzip };
  throw new ImportInputError(
    `${file}: unknown file extension${ext ? ` ".${ext}"` : ''} (import reads .ndjson, .jsonl, .json, .csv, each optionally .gz; - for NDJSON on stdin)`,
  );
}

const ORIGINAL_MAX = 64 * 1024;
const cut = (s: string) => (s.length > ORIGINAL_MAX ? `${s.slice(0, ORIGINAL_MAX)}…` : s);

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
async function* lines(
  input: AsyncIterable<Buffer>,
  start: number,
  max = MAX_LINE_BYTES,
): AsyncGenerator<{ bytes: Buffer | undefined; end: number; head: string }> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let head = '';
  let offset = start;
  for await (const chunk of input) {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const stop = nl === -1 ? chunk.length : nl;
      const seg = chunk.subarray(pos, stop);
      if (!tooLong) {
        if (size + seg.length > max) {
          tooLong = true;
          head = Buffer.concat([...parts, seg])
            .subarray(0, 200)
            .toString('utf8');
          parts = [];
          size = 0;
        } else if (seg.length > 0) {
          parts.push(seg);
          size += seg.length;
        }
      }
      offset += stop - pos;
      if (nl === -1) break;
      offset += 1;
      yield tooLong
        ? { bytes: undefined, end: offset, head }
        : { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), end: offset, head: '' };
      parts = [];
      size = 0;
      tooLong = false;
      pos = nl + 1;
    }
  }
  if (tooLong) yield { bytes: undefined, end: offset, head };
  else if (size > 0) yield { bytes: Buffer.concat(parts), end: offset, head: '' };
}

const tooLongError = (what: string) => `${what} is longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB`;

/** NDJSON: one record per line; blank lines are skipped (but counted). */
export async function* ndjsonItems(input: AsyncIterable<Buffer>, from: Position): AsyncGenerator<SourceItem> {
  let line = from.line;
  for await (const l of lines(input, from.offset)) {
    line++;
    if (!l.bytes) {
      yield { line, end: l.end, through: line, error: tooLongError('the line'), original: `${l.head}…` };
      continue;
    }
    const text = l.bytes.toString('utf8').trim();
    if (text === '') continue;
    yield { line, end: l.end, through: line, text, original: cut(text) };
  }
}

/** Split one CSV record (RFC 4180: quoted cells may hold commas, quotes as "", and newlines). */
export function csvCells(row: string): string[] {
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    let cell = '';
    if (row[i] === '"') {
      i++;
      for (;;) {
        const q = row.indexOf('"', i);
        if (q === -1) {
          cell += row.slice(i);
          i = row.length;
          break;
        }
        cell += row.slice(i, q);
        if (row[q + 1] === '"') {
          cell += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      const comma = row.indexOf(',', i);
      i = comma === -1 ? row.length : comma;
    } else {
      const comma = row.indexOf(',', i);
      cell = row.slice(i, comma === -1 ? row.length : comma);
      i = comma === -1 ? row.length : comma;
    }
    cells.push(cell);
    if (i >= row.length) return cells;
    i++; // the comma
  }
}

const quotesOpen = (s: string) => (s.split('"').length - 1) % 2 === 1;

/** The CSV header's fields, checked against the record schemas. */
export function csvHeader(file: string, headerLine: string): { names: string[]; kinds: CellKind[] } {
  const names = csvCells(headerLine.replace(/^\uFEFF/, '').trim()).map((n) => n.trim());
  if (names.length === 0 || names.every((n) => n === ''))
    throw new ImportInputError(`${file}: the CSV header row is empty`);
  const unknown = names.filter((n) => !CSV_FIELDS.has(n));
  if (unknown.length > 0)
    throw new ImportInputError(
      `${file}: the CSV header names ${unknown.length === 1 ? 'an unknown field' : 'unknown fields'} ` +
        `${unknown.map((n) => `"${n}"`).join(', ')} (fields are record field names, e.g. type, event_id, list_id; see docs/records.md)`,
    );
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new ImportInputError(`${file}: the CSV header names "${dup}" twice`);
  if (!names.includes('type')) throw new ImportInputError(`${file}: the CSV header has no "type" column`);
  return { names, kinds: names.map((n) => CSV_FIELDS.get(n)!) };
}

/**
 * CSV: the header row names record fields; each row is a record, its cells typed by the schema (an
 * empty cell is an absent field). `header` is given when resuming (it was read from the file's start).
 */
export async function* csvItems(
  file: string,
  input: AsyncIterable<Buffer>,
  from: Position,
  header?: { names: string[]; kinds: CellKind[] },
): AsyncGenerator<SourceItem> {
  let line = from.line;
  let pending: { text: string; line: number } | undefined;
  for await (const l of lines(input, from.offset)) {
    line++;
    if (!l.bytes) {
      pending = undefined;
      yield { line, end: l.end, through: line, error: tooLongError('the row'), original: `${l.head}…` };
      continue;
    }
    let text = l.bytes.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (pending) {
      text = `${pending.text}\n${text}`;
      if (text.length > MAX_LINE_BYTES) {
        yield {
          line: pending.line,
          end: l.end,
          through: line,
          error: tooLongError('the row'),
          original: cut(text),
        };
        pending = undefined;
        continue;
      }
    }
    const first = pending?.line ?? line;
    if (quotesOpen(text)) {
      pending = { text, line: first };
      continue;
    }
    pending = undefined;
    if (!header) {
      header = csvHeader(file, text);
      continue;
    }
    if (text.trim() === '') continue;
    const cells = csvCells(text);
    if (cells.length > header.names.length) {
      yield {
        line: first,
        end: l.end,
        through: line,
        error: `the row has ${cells.length} cells, the header has ${header.names.length}`,
        original: cut(text),
      };
      continue;
    }
    const record: Record<string, unknown> = {};
    for (let i = 0; i < cells.length; i++) {
      const v = cellValue(header.kinds[i]!, cells[i]!);
      if (v !== undefined) record[header.names[i]!] = v;
    }
    yield { line: first, end: l.end, through: line, text: JSON.stringify(record), original: cut(text) };
  }
  if (pending)
    throw new ImportInputError(`${file}: a quoted CSV cell opened on line ${pending.line} never closes`);
  if (!header) throw new ImportInputError(`${file}: no CSV header row`);
}

/** The header row of a CSV file (read from its start, also when an import resumes further on). */
export async function readCsvHeader(
  file: string,
  gzip: boolean,
): Promise<{ names: string[]; kinds: CellKind[] }> {
  const bytes = fileBytes(file, gzip, 0);
  try {
    let text = '';
    for await (const l of lines(bytes, 0)) {
      if (!l.bytes) throw new ImportInputError(`${file}: the CSV header row is longer than 16 MiB`);
      text = text === '' ? l.bytes.toString('utf8') : `${text}\n${l.bytes.toString('utf8')}`;
      if (!quotesOpen(text)) return csvHeader(file, text.replace(/\r$/, ''));
    }
    throw new ImportInputError(`${file}: no CSV header row`);
  } finally {
    await bytes.return(undefined);
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * A JSON array of records, element by element, without holding the array: a byte scanner that tracks
 * strings and nesting. Resuming starts between two elements (just after a comma).
 */
export async function* jsonArrayItems(
  file: string,
  input: AsyncIterable<Buffer>,
  from: Position,
): AsyncGenerator<SourceItem> {
  let state: 'start' | 'between' | 'element' | 'after' = from.offset === 0 ? 'start' : 'between';
  let index = from.line;
  let offset = from.offset;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let head = '';
  let elementStart = 0; // index in the current chunk where the element's bytes start
  const finish = (chunk: Buffer, stop: number, end: number): SourceItem => {
    index++;
    if (!tooLong) {
      parts.push(chunk.subarray(elementStart, stop));
      // Raw line breaks in JSON lie only between tokens (a string cannot hold one): one line per record.
      const text = Buffer.concat(parts)
        .toString('utf8')
        .trim()
        .replace(/[\r\n]+/g, ' ');
      parts = [];
      size = 0;
      return { line: index, end, through: index, text, original: cut(text) };
    }
    tooLong = false;
    parts = [];
    size = 0;
    return {
      line: index,
      end,
      through: index,
      error: tooLongError('the array element'),
      original: `${head}…`,
    };
  };
  for await (const chunk of input) {
    elementStart = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (state === 'element') {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 0x5c) escaped = true;
          else if (c === 0x22) inString = false;
          continue;
        }
        if (c === 0x22) inString = true;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if ((c === 0x7d || c === 0x5d) && depth > 0) depth--;
        else if (depth === 0 && (c === 0x2c || c === 0x5d)) {
          yield finish(chunk, i, offset + i + 1);
          state = c === 0x2c ? 'between' : 'after';
        }
        continue;
      }
      if (WS.has(c)) continue;
      if (state === 'start') {
        if (c !== 0x5b)
          throw new ImportInputError(
            `${file}: a .json file holds one JSON array of records (it starts with "${String.fromCharCode(c)}"; use .ndjson for one record per line)`,
          );
        state = 'between';
      } else if (state === 'between') {
        if (c === 0x5d) state = 'after';
        else if (c === 0x2c)
          continue; // an empty slot (`[a,,b]`): nothing to import
        else {
          state = 'element';
          elementStart = i;
          depth = 0;
          inString = false;
          escaped = false;
          i--; // scan this byte as the element's first
        }
      } else {
        throw new ImportInputError(`${file}: data after the end of the JSON array (at byte ${offset + i})`);
      }
    }
    if (state === 'element' && !tooLong) {
      const seg = chunk.subarray(elementStart);
      if (size + seg.length > MAX_LINE_BYTES) {
        tooLong = true;
        head = Buffer.concat([...parts, seg])
          .subarray(0, 200)
          .toString('utf8');
        parts = [];
        size = 0;
      } else {
        parts.push(seg);
        size += seg.length;
      }
    }
    offset += chunk.length;
  }
  if (state === 'start') throw new ImportInputError(`${file}: no JSON array in the file`);
  if ((state as string) !== 'after')
    throw new ImportInputError(
      `${file}: the JSON array never closes (the file ends inside it, after ${index} elements)`,
    );
}

/** The items of a file in its format, from a position. */
export function items(
  file: string,
  format: Format,
  input: AsyncIterable<Buffer>,
  from: Position,
  header?: { names: string[]; kinds: CellKind[] },
): AsyncGenerator<SourceItem> {
  if (format === 'json') return jsonArrayItems(file, input, from);
  if (format === 'csv') return csvItems(file, input, from, header);
  return ndjsonItems(input, from);
}
