import type { CellKind } from './csv-fields.js';
import { csvItems } from './import-csv.js';
import {
  cut,
  ImportInputError,
  lines,
  tooLongError,
  type Format,
  type Position,
  type SourceItem,
} from './import-input.js';
import { jsonArrayItems } from './import-json.js';

/** The import file formats (docs/lifecycle.md, "import"): the readers of each, behind one `items`. */

export { csvCells, csvHeader, csvItems, readCsvHeader } from './import-csv.js';
export { jsonArrayItems } from './import-json.js';
export {
  fileBytes,
  ImportInputError,
  MAX_LINE_BYTES,
  type Format,
  type Position,
  type SourceItem,
} from './import-input.js';

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
