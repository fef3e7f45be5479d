import { createHash } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { byteBatches, messageBytes } from '../../ingest/kafka/messages.js';
import { digest, fingerprint, matchRange } from '../../ingest/kafka/ranges.js';

const msg = (offset: number, value: string, timestamp = '1700000000000'): KafkaMessage =>
  ({ offset: String(offset), key: Buffer.from('10'), value: Buffer.from(value), timestamp }) as KafkaMessage;
const run = (from: number, to: number, tag = 'a') =>
  Array.from({ length: to - from + 1 }, (_, i) => msg(from + i, `${tag}${from + i}`));
const recorded = (messages: KafkaMessage[]) => ({
  first: messages[0]!.offset,
  last: messages.at(-1)!.offset,
  firstHash: fingerprint(messages[0]!),
  lastHash: fingerprint(messages.at(-1)!),
});

describe('a recorded offset range against a fetch', () => {
  const range = recorded(run(100, 199));

  it('is re-formed exactly when the fetch starts at it with the same messages', () => {
    const head = matchRange(range, run(100, 400));
    expect(Array.isArray(head) && head.map((m) => m.offset)).toEqual(run(100, 199).map((m) => m.offset));
  });

  it('is past when the fetch starts after it (it was committed)', () => {
    expect(matchRange(range, run(200, 300))).toBe('past');
  });

  it('waits for the rest when the same data is fetched only in part', () => {
    expect(matchRange(range, run(100, 150))).toBe('incomplete');
    expect(matchRange(range, run(100, 150), '400')).toBe('incomplete');
  });

  it('is stale when the partition no longer reaches the end of the range', () => {
    expect(matchRange(range, run(100, 150), '151')).toBe('stale');
  });

  it('is stale when the offsets started again: other data, or a start the commits cannot explain', () => {
    expect(matchRange(range, run(100, 400, 'new'))).toBe('stale'); // same offsets, other messages
    expect(matchRange(range, run(0, 50, 'new'))).toBe('stale'); // fewer messages than the range
    expect(matchRange(range, run(0, 400))).toBe('stale'); // a start before the range
    expect(matchRange(range, run(150, 400))).toBe('stale'); // a start inside it
    const lastDiffers = [...run(100, 198), msg(199, 'other')];
    expect(matchRange(range, lastDiffers)).toBe('stale');
    expect(matchRange({ ...range, firstHash: '', lastHash: '' }, run(100, 400))).toBe('stale'); // before migration 3
  });

  it('gives different digests to different data at the same offsets, the same to the same data', () => {
    expect(digest(run(0, 9))).toBe(digest(run(0, 9)));
    expect(digest(run(0, 9))).not.toBe(digest(run(0, 9, 'b')));
    expect(digest([msg(0, 'x', '1')])).not.toBe(digest([msg(0, 'x', '2')]));
  });

  it('hashes the same byte stream as part-by-part hashing: tokens recorded before still match', () => {
    // The stream as first defined: per message key, value and timestamp, each length-prefixed.
    const reference = (messages: KafkaMessage[]) => {
      const h = createHash('sha256');
      for (const m of messages)
        for (const part of [m.key, m.value, Buffer.from(m.timestamp)]) {
          const len = Buffer.alloc(4);
          len.writeUInt32BE(part ? part.length : 0xffffffff);
          h.update(len);
          if (part) h.update(part);
        }
      return h.digest('hex').slice(0, 32);
    };
    const big = msg(7, 'v'.repeat(200_000)); // larger than the gathering buffer
    const tombstone = { ...msg(8, ''), key: null, value: null } as KafkaMessage;
    const empty = { ...msg(9, ''), value: Buffer.alloc(0) } as KafkaMessage;
    const chunks = [run(0, 9), run(0, 3000), [big], [...run(0, 5), big, tombstone, empty, ...run(6, 9)]];
    for (const chunk of chunks) expect(digest(chunk)).toBe(reference(chunk));
    expect(fingerprint(tombstone)).toBe(reference([tombstone]));
  });
});

describe('byteBatches', () => {
  it('keeps order and stays under the limit, a too large item going alone', () => {
    const sizes = [400, 400, 400, 1200, 100, 100];
    const batches = byteBatches(sizes, (n) => n, 1000);
    expect(batches).toEqual([[400, 400], [400], [1200], [100, 100]]);
  });

  it('counts key and value bytes of a message', () => {
    expect(messageBytes({ key: 'ab', value: Buffer.alloc(10) })).toBeGreaterThanOrEqual(12);
    expect(messageBytes({ key: null, value: 'é' })).toBeGreaterThanOrEqual(2);
  });
});
