import { describe, expect, it } from 'vitest';
import { CSV_FIELDS, cellValue } from '../../admin/csv-fields.js';
import { csvCells, csvItems, formatOf, jsonArrayItems, ndjsonItems } from '../../admin/import-sources.js';

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
});
