import { CSV_FIELDS, cellValue, type CellKind } from './csv-fields.js';
import {
  cut,
  fileBytes,
  ImportInputError,
  lines,
  MAX_LINE_BYTES,
  tooLongError,
  type Position,
  type SourceItem,
} from './import-input.js';

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

function quoteCount(s: string): number {
  let n = 0;
  for (let i = s.indexOf('"'); i !== -1; i = s.indexOf('"', i + 1)) n++;
  return n;
}
const quotesOpen = (s: string) => quoteCount(s) % 2 === 1;

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
  // A row whose quoted cell spans lines, gathered line by line: its parts, its size in bytes and whether
  // a quote is still open, each kept up to date per line, so a cell over many lines is read in linear
  // time (joining and rescanning the whole row at every line made 320k lines take 86 s).
  let pending: { parts: string[]; line: number; bytes: number } | undefined;
  for await (const l of lines(input, from.offset)) {
    line++;
    if (!l.bytes) {
      pending = undefined;
      yield { line, end: l.end, through: line, error: tooLongError('the row'), original: `${l.head}…` };
      continue;
    }
    let text = l.bytes.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    // An odd number of quotes on a line flips whether a quoted cell is open.
    const flips = quoteCount(text) % 2 === 1;
    const first = pending?.line ?? line;
    if (pending) {
      pending.parts.push(text);
      pending.bytes += l.bytes.length + 1;
      if (pending.bytes > MAX_LINE_BYTES) {
        yield {
          line: pending.line,
          end: l.end,
          through: line,
          error: tooLongError('the row'),
          original: cut(pending.parts.join('\n')),
        };
        pending = undefined;
        continue;
      }
      if (!flips) continue; // still inside the quoted cell
      text = pending.parts.join('\n');
      pending = undefined;
    } else if (flips) {
      pending = { parts: [text], line, bytes: l.bytes.length };
      continue;
    }
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
