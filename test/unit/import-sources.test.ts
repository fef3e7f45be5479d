import { describe, expect, it } from 'vitest';
import { CSV_FIELDS, cellValue } from '../../admin/csv-fields.js';
import { chunksOf, CHUNK_BYTES } from '../../admin/import.js';
import {
  csvCells,
  csvItems,
  formatOf,
  jsonArrayItems,
  ndjsonItems,
  type SourceItem,
} from '../../admin/import-sources.js';

async function* chunks(text: string, size: number): AsyncGenerator<Buffer> {
  const b = Buffer.from(text);
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}
const all = async <T>(g: AsyncGenerator<T>) => {
  const out: T[] = [];
  for await (const x of g) out.push(x);
  return out;
};

describe('import sources', () => {
  it('CSV cells are typed by the record schemas', () => {
    expect(CSV_FIELDS.get('list_id')).toBe('string'); // ids accept digit strings
    expect(CSV_FIELDS.get('granted')).toBe('boolean');
    expect(CSV_FIELDS.get('props')).toBe('json');
    expect(CSV_FIELDS.get('timestamp')).toBe('instant');
    expect(CSV_FIELDS.get('version')).toBe('number');
    expect(cellValue('instant', '1794304800000')).toBe(1794304800000);
    expect(cellValue('instant', '2026-11-10T10:00:00Z')).toBe('2026-11-10T10:00:00Z');
    expect(cellValue('boolean', 'false')).toBe(false);
    expect(cellValue('json', '{"a":1}')).toEqual({ a: 1 });
    expect(cellValue('string', '')).toBeUndefined();
  });

  it('splits RFC 4180 rows', () => {
    expect(csvCells('a,"b,c","d ""q""",')).toEqual(['a', 'b,c', 'd "q"', '']);
  });

  it('reads every format the same whatever the chunk boundaries, with resumable offsets', async () => {
    const recs = [
      { type: 'send', event_id: 'a' },
      { type: 'open', event_id: 'b,"x"' },
    ];
    const nd = recs.map((r) => JSON.stringify(r)).join('\n') + '\n\n';
    const json = JSON.stringify(recs, null, 2);
    const csv = 'type,event_id\r\nsend,a\r\nopen,"b,""x"""\r\n';
    for (const size of [1, 3, 7, 1000]) {
      const a = await all(ndjsonItems(chunks(nd, size), { offset: 0, line: 0 }));
      const b = await all(jsonArrayItems('f.json', chunks(json, size), { offset: 0, line: 0 }));
      const c = await all(csvItems('f.csv', chunks(csv, size), { offset: 0, line: 0 }));
      for (const items of [a, b, c]) expect(items.map((i) => JSON.parse(i.text!))).toEqual(recs);
      // Resuming at an item's end offset gives the items after it.
      const rest = await all(
        jsonArrayItems('f.json', chunks(json.slice(b[0]!.end), size), { offset: b[0]!.end, line: 1 }),
      );
      expect(rest.map((i) => [i.line, JSON.parse(i.text!)])).toEqual([[2, recs[1]]]);
    }
  });

  it('a .json file may start with a UTF-8 byte order mark, as spreadsheets write one', async () => {
    for (const size of [1, 2, 1000]) {
      const items = await all(
        jsonArrayItems('f.json', chunks('\uFEFF[{"a":1},{"b":2}]', size), { offset: 0, line: 0 }),
      );
      expect(items.map((i) => JSON.parse(i.text!))).toEqual([{ a: 1 }, { b: 2 }]);
    }
  });

  it('names what is wrong with a file', async () => {
    expect(() => formatOf('x.parquet')).toThrow(/unknown file extension "\.parquet"/);
    expect(formatOf('x.CSV.gz')).toEqual({ format: 'csv', gzip: true });
    await expect(
      all(jsonArrayItems('f.json', chunks('[{"a":1},', 4), { offset: 0, line: 0 })),
    ).rejects.toThrow(/never closes/);
    await expect(all(jsonArrayItems('f.json', chunks('{"a":1}', 4), { offset: 0, line: 0 }))).rejects.toThrow(
      /holds one JSON array/,
    );
    await expect(all(csvItems('f.csv', chunks('type,nope\n', 4), { offset: 0, line: 0 }))).rejects.toThrow(
      /unknown field "nope"/,
    );
  });

  it('a quoted CSV cell over 200,000 lines is one record, with its first line and the next rows after it', async () => {
    const n = 200_000;
    const cell = Array.from({ length: n }, (_, i) => (i % 1000 === 0 ? `l${i} ""q""` : 'x')).join('\n');
    const csv = `type,event_id,reason\nsend,a,"${cell}"\nopen,b,after\n`;
    const items = await all(csvItems('f.csv', chunks(csv, 64 * 1024), { offset: 0, line: 0 }));
    expect(items.map((i) => [i.line, i.through])).toEqual([
      [2, n + 1],
      [n + 2, n + 2],
    ]);
    const first = JSON.parse(items[0]!.text!) as { reason: string };
    expect(first.reason).toBe(cell.replaceAll('""', '"'));
    expect(JSON.parse(items[1]!.text!)).toEqual({ type: 'open', event_id: 'b', reason: 'after' });
  });

  it('a cell spanning lines is refused as too long by its bytes, then the rows after it are read', async () => {
    // 6 MiB of 3-byte characters over 3 lines: 18 MiB of UTF-8, only 6 Mi UTF-16 units.
    const line = '漢'.repeat(2 * 1024 * 1024);
    const csv = `type,reason\nsend,"${line}\n${line}\n${line}"\nopen,ok\n`;
    const items = await all(csvItems('f.csv', chunks(csv, 1 << 20), { offset: 0, line: 0 }));
    expect(items[0]!.error).toMatch(/longer than 16 MiB/);
    expect(items.map((i) => i.text && JSON.parse(i.text))).toContainEqual({ type: 'open', reason: 'ok' });
  });

  it('import chunks are measured in bytes as sent: CJK records never make a body over the limit', async () => {
    // 1 Mi CJK characters per record: 3 MiB of UTF-8 each, 1 Mi UTF-16 units.
    const text = JSON.stringify({ type: 'send', reason: '漢'.repeat(1 << 20) });
    async function* source(): AsyncGenerator<SourceItem> {
      for (let i = 0; i < 40; i++)
        yield { line: i + 1, through: i + 1, end: (i + 1) * 100, text, original: '' };
    }
    const sizes: number[] = [];
    let records = 0;
    for await (const chunk of chunksOf(source(), { offset: 0, line: 0 }, 50_000)) {
      sizes.push(Buffer.byteLength(chunk.texts.join('\n')));
      records += chunk.texts.length;
    }
    expect(records).toBe(40);
    expect(sizes.length).toBeGreaterThan(1);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(CHUNK_BYTES);
  });
});
