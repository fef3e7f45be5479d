import { describe, expect, it } from 'vitest';
import { BoundedBytes } from '../../admin/bounded-bytes.js';
import { MAX_LINE_BYTES } from '../../admin/import-input.js';
import { jsonArrayItems, ndjsonItems } from '../../admin/import-sources.js';

const all = async <T>(g: AsyncGenerator<T>) => {
  const out: T[] = [];
  for await (const x of g) out.push(x);
  return out;
};
async function* chunks(b: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

describe('bytes of one line or element, bounded', () => {
  it('gathers pieces up to the bound; past it keeps only the first 200 bytes; reset starts afresh', () => {
    const b = new BoundedBytes(10);
    expect(b.empty).toBe(true);
    b.add(Buffer.from('abc'));
    b.add(Buffer.from(''));
    b.add(Buffer.from('def'));
    expect(b.bytes().toString()).toBe('abcdef');
    b.add(Buffer.from('ghijk'));
    expect(b.tooLong).toBe(true);
    expect(b.head).toBe('abcdefghijk');
    b.add(Buffer.from('more'));
    expect(b.head).toBe('abcdefghijk');
    b.reset();
    expect([b.tooLong, b.empty]).toEqual([false, true]);
    const long = new BoundedBytes(300);
    long.add(Buffer.alloc(400, 'x'));
    expect(long.head).toBe('x'.repeat(200));
  });

  it('an over-long NDJSON line and JSON array element are each one rejection; the next is read', async () => {
    const big = 'y'.repeat(MAX_LINE_BYTES + 10);
    const nd = Buffer.from(`{"a":"${big}"}\n{"event_id":"next"}\n`);
    const lines = await all(ndjsonItems(chunks(nd, 1 << 20), { line: 0, offset: 0 }));
    expect(lines.map((l) => [l.line, l.error ?? l.text])).toEqual([
      [1, 'the line is longer than 16 MiB'],
      [2, '{"event_id":"next"}'],
    ]);
    expect(lines[0]!.original).toBe(`{"a":"${'y'.repeat(194)}…`);
    // The element's end falls in the chunk after the one where it reached 16 MiB: that piece counts too.
    const json = Buffer.from(`[{"a":"${big}"},\n{"event_id":"next"}]`);
    const items = await all(jsonArrayItems('f.json', chunks(json, 1 << 20), { line: 0, offset: 0 }));
    expect(items.map((i) => [i.line, i.error ?? i.text])).toEqual([
      [1, 'the array element is longer than 16 MiB'],
      [2, '{"event_id":"next"}'],
    ]);
    expect(items[0]!.original).toBe(`{"a":"${'y'.repeat(194)}…`);
  });
});
