import {
  cut,
  ImportInputError,
  MAX_LINE_BYTES,
  tooLongError,
  type Position,
  type SourceItem,
} from './import-input.js';
import { BoundedBytes } from './bounded-bytes.js';

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const UTF8_BOM = [0xef, 0xbb, 0xbf];

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
  const element = new BoundedBytes(MAX_LINE_BYTES);
  let elementStart = 0; // index in the current chunk where the element's bytes start
  const finish = (chunk: Buffer, stop: number, end: number): SourceItem => {
    index++;
    // The element's last piece counts against the bound too (an element of 16 MiB and a few bytes
    // whose end fell in a later chunk than its 16 MiB used to pass).
    element.add(chunk.subarray(elementStart, stop));
    if (!element.tooLong) {
      // Raw line breaks in JSON lie only between tokens (a string cannot hold one): one line per record.
      const text = element
        .bytes()
        .toString('utf8')
        .trim()
        .replace(/[\r\n]+/g, ' ');
      element.reset();
      return { line: index, end, through: index, text, original: cut(text) };
    }
    const head = element.head;
    element.reset();
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
      // A UTF-8 byte order mark, as spreadsheets and Windows editors write one, before the array.
      if (state === 'start' && offset + i < 3 && c === UTF8_BOM[offset + i]) continue;
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
    if (state === 'element') element.add(chunk.subarray(elementStart));
    offset += chunk.length;
  }
  if (state === 'start') throw new ImportInputError(`${file}: no JSON array in the file`);
  if ((state as string) !== 'after')
    throw new ImportInputError(
      `${file}: the JSON array never closes (the file ends inside it, after ${index} elements)`,
    );
}
