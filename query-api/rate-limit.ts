import { LRUCache } from 'lru-cache';

/** Buckets kept at most; beyond, the least recently used is forgotten (memory stays bounded). */
const MAX_BUCKETS = 100_000;

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
}

export type Take = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Token buckets per key (docs/api.md, rate limits): `perSecond` tokens a second, at most twice that
 * saved up (the burst). A bucket untouched for as long as it takes to fill again is full, so it is
 * dropped then (the LRU's ttl) without changing any answer; and however many distinct keys are tried,
 * at most MAX_BUCKETS are held. A key evicted early only gets a fresh burst, never more than that.
 */
export class RateLimiter {
  private readonly burst: number;
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly perSecond: number,
    maxBuckets = MAX_BUCKETS,
    private readonly now: () => number = Date.now,
  ) {
    this.burst = 2 * perSecond;
    this.buckets = new LRUCache<string, Bucket>({
      max: maxBuckets,
      ttl: Math.ceil((this.burst / perSecond) * 1000),
      ttlAutopurge: false,
      updateAgeOnGet: false,
    });
  }

  /** Takes one token for `key`, or says how many whole seconds until one is there. */
  take(key: string): Take {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b); // restarts its ttl: it is full again `burst / perSecond` s from now
    return ok ? { ok } : { ok, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond)) };
  }

  /**
   * Gives back a token taken for a request that turned out not to count (a failed-attempt token taken
   * before the credentials were checked, when they were right); never above the burst.
   */
  give(key: string): void {
    const b = this.buckets.get(key);
    if (!b) return; // forgotten meanwhile: it is full again anyway
    const now = this.now();
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond + 1);
    b.at = now;
    this.buckets.set(key, b);
  }

  /** Buckets held now (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }
}
