import { describe, expect, it } from 'vitest';
import { ACTIVITY_TYPES, checkRecord, recordSchema, type ActivityType } from '../../shared/records/index.js';
import { fastActivity } from '../../shared/records/fast.js';

/** A small seeded generator (mulberry32): the same cases on every run. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DAY = 86_400_000;

/** Values each kind of field is tried with: valid ones first, then the edge and the wrong. */
function cases(now: number) {
  return {
    id: [
      7,
      '42',
      2 ** 53 - 1,
      1,
      0,
      -3,
      1.5,
      '007',
      '',
      'x1',
      '1e3',
      2 ** 53,
      '9007199254740993',
      null,
      true,
      [1],
      {},
    ],
    text: ['e-1', 'x'.repeat(128), 'x'.repeat(129), '', 'ü', 5, null, ['a']],
    instant: [
      '2026-11-20T10:15:00Z',
      '2026-11-20t10:15:00.123456z',
      '2024-02-29 23:59:59+02:00',
      '2025-02-29T10:00:00Z',
      '2026-11-20T24:00:00Z',
      '2026-11-20T10:15:00',
      '2026-11-20',
      new Date(now + 2 * DAY).toISOString(),
      new Date(now + DAY / 2).toISOString(),
      now - DAY,
      0,
      -1,
      1.5,
      now + 2 * DAY,
      null,
      {},
    ],
    money: [
      '123.45',
      ' 12 ',
      '0',
      24.7,
      0,
      1e21,
      1e-7,
      123456789.1234,
      12345678901234.56,
      '1.23456',
      '-1',
      'abc',
      NaN,
      null,
    ],
    status: ['ok', 'failed', 'OK', '', null],
    reason: ['timeout', '', 'r'.repeat(4096), 'r'.repeat(4097), 3, null],
  };
}

function pick<T>(r: () => number, xs: readonly T[], validShare = 0.8, valid = 3): T {
  return r() < validShare ? xs[Math.floor(r() * valid)]! : xs[Math.floor(r() * xs.length)]!;
}

/** A record of `type`, mostly valid: each field is sometimes wrong, missing or of another type. */
function generate(r: () => number, type: ActivityType, now: number): Record<string, unknown> {
  const c = cases(now);
  const v: Record<string, unknown> = {
    type,
    event_id: pick(r, c.text, 0.95, 2),
    list_id: pick(r, c.id, 0.95),
    workflow_id: pick(r, c.id, 0.95),
    subscriber_id: pick(r, c.id, 0.95),
    timestamp: pick(r, c.instant, 0.9),
  };
  if (r() < 0.5) v.trigger_id = pick(r, c.id, 0.9);
  if (r() < 0.6) v.sent_at = pick(r, c.instant, 0.9);
  if (r() < 0.3 || type === 'purchase') {
    v.order_id = pick(r, c.text, 0.95, 2);
    v.value_ron = pick(r, c.money, 0.9, 4);
    v.value_eur = pick(r, c.money, 0.9, 4);
  }
  if (r() < 0.3 || ['event', 'condition', 'action'].includes(type)) {
    v.status = pick(r, c.status, 0.95, 2);
    if (r() < 0.5) v.reason = pick(r, c.reason, 0.9);
  }
  if (r() < 0.1) v.extra = 'ignored';
  if (r() < 0.05) delete v[['event_id', 'list_id', 'timestamp', 'order_id', 'status'][Math.floor(r() * 5)]!];
  if (r() < 0.02) v.trigger_id = undefined;
  return v;
}

describe('fastActivity: the hot path gives what the zod schema gives, or defers to it', () => {
  it('on 20,000 generated records: equal output whenever it answers; never a record zod refuses', () => {
    const r = rng(20261124);
    const now = Date.now();
    let valid = 0;
    let fast = 0;
    for (let i = 0; i < 20_000; i++) {
      const type = ACTIVITY_TYPES[i % ACTIVITY_TYPES.length]!;
      const v = generate(r, type, now);
      const f = fastActivity(v, type, now);
      const z = recordSchema.safeParse(v);
      if (z.success) valid++;
      if (f === undefined) continue;
      fast++;
      expect(z.success, JSON.stringify(v)).toBe(true);
      // Same fields, same values, same order (stringify is order-sensitive).
      expect(JSON.stringify(f), JSON.stringify(v)).toBe(JSON.stringify(z.data));
      expect(f).toStrictEqual(z.data);
    }
    // Both kinds are exercised, and the fast path takes every valid record but the odd shapes.
    expect(valid).toBeGreaterThan(5_000);
    expect(valid).toBeLessThan(19_000);
    expect(fast).toBeGreaterThan(valid * 0.95);
  });

  it('checkRecord still names the field of an invalid record (zod decides those)', () => {
    const base = { type: 'open', event_id: 'e', list_id: 1, workflow_id: 2, subscriber_id: 3, timestamp: 1 };
    expect(checkRecord({ ...base, list_id: '0' })).toEqual({
      ok: false,
      reason: 'list_id: must be a positive integer (at most 2^53 - 1)',
    });
    expect(checkRecord({ ...base, sent_at: '2026-02-30T00:00:00Z' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^sent_at: must be RFC 3339/),
    });
    expect(
      checkRecord({ ...base, type: 'purchase', order_id: 'o', value_ron: 1234567890.1234567, value_eur: 1 }),
    ).toEqual({
      ok: false,
      reason: 'value_ron: has more than 15 significant digits: send it as a string to keep it exact',
    });
    expect(checkRecord(base)).toEqual({
      ok: true,
      record: { type: 'open', event_id: 'e', list_id: 1, workflow_id: 2, subscriber_id: 3, timestamp: 1 },
    });
  });

  it('instants: years before 100 are read as written, whatever the separator and offset', () => {
    const v = { type: 'send', event_id: 'e', list_id: 1, workflow_id: 2, subscriber_id: 3 };
    const at = (ts: string) =>
      (checkRecord({ ...v, timestamp: ts }) as { record: { timestamp: number } }).record.timestamp;
    // Date.parse reads the strict ISO form right; its legacy fallback (a space, an offset) read 0099 as 1999.
    const expected = Date.parse('0099-12-31T23:59:59Z');
    expect(new Date(expected).getUTCFullYear()).toBe(99);
    expect(at('0099-12-31 23:59:59Z')).toBe(expected);
    expect(at('0100-01-01T01:59:59+02:00')).toBe(expected);
  });
});
