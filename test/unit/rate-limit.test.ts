import { describe, expect, it } from 'vitest';
import { bucketKey, canonicalUserId, failureKey } from '../../query-api/edge-guard.js';
import { RateLimiter } from '../../query-api/rate-limit.js';

describe('RateLimiter (token buckets per user_id)', () => {
  it('gives a burst of twice the rate, then refuses with the seconds until a token is back', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(5, 1000, () => now);
    const takes = Array.from({ length: 12 }, () => limiter.take('7'));
    expect(takes.filter((t) => t.ok)).toHaveLength(10);
    expect(takes[10]).toEqual({ ok: false, retryAfterSeconds: 1 });
    // Another key has its own bucket.
    expect(limiter.take('8')).toEqual({ ok: true });
    now += 200; // one token at 5/s
    expect(limiter.take('7')).toEqual({ ok: true });
    expect(limiter.take('7').ok).toBe(false);
    now += 10_000; // full again, never more than the burst
    expect(Array.from({ length: 11 }, () => limiter.take('7')).filter((t) => t.ok)).toHaveLength(10);
  });

  it('holds a bounded number of buckets however many distinct user ids are tried', () => {
    const limiter = new RateLimiter(10);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100_000; i++) limiter.take(String(1_000_000 + i));
    expect(limiter.size).toBeLessThanOrEqual(100_000);
    for (let i = 0; i < 100_000; i++) limiter.take(String(5_000_000 + i));
    expect(limiter.size).toBeLessThanOrEqual(100_000);
    const grown = (process.memoryUsage().heapUsed - before) / 2 ** 20;
    expect(grown).toBeLessThan(64);
    const small = new RateLimiter(10, 1000);
    for (let i = 0; i < 100_000; i++) small.take(String(i));
    expect(small.size).toBe(1000);
  });
});

describe('RateLimiter.give and the bucket keys (issue 32, points 3 and 4)', () => {
  it('a token given back is there again, never above the burst', () => {
    const now = 1_000_000;
    const limiter = new RateLimiter(2, 1000, () => now);
    for (let i = 0; i < 4; i++) expect(limiter.take('k').ok).toBe(true);
    expect(limiter.take('k').ok).toBe(false);
    limiter.give('k');
    expect(limiter.take('k').ok).toBe(true);
    expect(limiter.take('k').ok).toBe(false);
    for (let i = 0; i < 10; i++) limiter.give('k');
    expect(Array.from({ length: 6 }, () => limiter.take('k')).filter((t) => t.ok)).toHaveLength(4);
  });

  it('a user id is its user whatever its spelling; failures are keyed by user and peer address', () => {
    expect(['28', '028', '00000000028'].map(bucketKey)).toEqual(['28', '28', '28']);
    expect(bucketKey('0')).toBe('0');
    expect(canonicalUserId('12a')).toBeUndefined();
    expect(bucketKey('abc')).toBe(bucketKey('xyz')); // no user id: one bucket for all of them
    expect(failureKey('028', '::ffff:127.0.0.2')).toBe(failureKey('28', '127.0.0.2'));
    expect(failureKey('28', '127.0.0.2')).not.toBe(failureKey('28', '127.0.0.3'));
    expect(failureKey('28', '127.0.0.2')).not.toBe(failureKey('29', '127.0.0.2'));
  });
});
