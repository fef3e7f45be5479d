import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import type { Catalog } from '../../shared/catalog/catalog.js';
import type { Logger } from '../../shared/log.js';
import { countStatsCache, observeRequest } from '../../shared/metrics.js';
import type { JsonAnswer } from '../api12/json-answer.js';
import { API12_REST_ROUTE } from '../api12/address.js';
import { bucketKey } from '../edge-guard.js';
import type { RateLimiter } from '../rate-limit.js';
import { logWhenAnswered, requestIdOf } from '../request-log.js';
import type { StatsCache } from './cache.js';

/** The operation a repeat is logged and counted under (with the route): that of the request it repeats. */
const OPERATION = 'automation.stats';

/**
 * Every UTC offset in use is a whole number of quarter hours, so a local midnight always falls on a UTC
 * quarter hour: an answer remembered until the next one never outlives the day its period was counted
 * from ("the last 30 days"), in any zone.
 */
const QUARTER_HOUR_MS = 15 * 60 * 1000;

/** Request targets remembered at most (their text counted; the answers are the answer cache's). */
const MAX_BYTES = 4 << 20;

interface Repeat {
  /** The answer cache's key of the answer, and its list (whose version decides whether it is current). */
  key: string;
  listId: number;
  /** The user id segment (decoded), for the rate limit's bucket. */
  userId: string;
  /** The catalog's version when the request that made this entry began. */
  catalog: number;
  /** When the period the answer was resolved for may start to differ (ms). */
  expires: number;
}

/** What a request's handling saw when it began, for `remember`. */
export interface RequestStart {
  catalog: number;
  at: number;
}

/**
 * A GET of automation.stats sent again, byte for byte (same path with its key, same query string, no
 * body), answered before Express routes it (docs/api.md "Answers sent again"). A dashboard polls the
 * same few URLs; routing, param intake, authorisation and period resolution would only arrive at the
 * same answer-cache entry again, and were most of a cached answer's cost (BENCHMARKS.md).
 *
 * An entry is made only after the full path answered that exact request target with an answer from
 * the answer cache, and is used only while nothing it depended on can have changed:
 * - the catalog (users, keys, grants, lists' zones and currencies): unchanged since that request began;
 * - the data: the answer cache still holds the answer at the list's current version (its own rules,
 *   expiry included; with the cache off (STATS_CACHE_MS=0), nothing is ever remembered);
 * - the period: before the next UTC quarter hour, so "the last N days" is never carried into a new day.
 * The caller's rate limit is taken as on the full path; a refused take falls through to it, which
 * refuses too (a refused take spends nothing). Anything else (HEAD, a body, an unknown target) takes
 * the full path. The answer has the full path's status, headers and bytes, its request line and metrics.
 */
export class RepeatAnswers {
  private readonly entries = new LRUCache<string, Repeat>({
    maxSize: MAX_BYTES,
    sizeCalculation: (_entry, target) => 2 * target.length + 128,
  });

  /** The client's address of a request answered here, for its request line (set where TRUST_PROXY is known). */
  clientAddress: (req: IncomingMessage) => string | undefined = (req) => req.socket.remoteAddress;

  constructor(
    private readonly cache: StatsCache,
    private readonly catalog: Catalog,
    private readonly limiter: RateLimiter | undefined,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Taken when a request's handling begins, before it reads the catalog. */
  begin(): RequestStart {
    return { catalog: this.catalog.version, at: this.now() };
  }

  /**
   * After the full path answered `req` (a 200 of automation.stats) with `answer`. Its target as it came
   * in (`originalUrl`: a mounted router may rewrite `url`), its user id as the router decoded it (the
   * rate limit's bucket, as the full path's guard names it).
   */
  remember(
    req: Pick<Request, 'method' | 'headers' | 'originalUrl' | 'params'>,
    operation: string,
    answer: JsonAnswer,
    start: RequestStart,
  ): void {
    if (operation !== OPERATION || req.method !== 'GET' || hasBody(req)) return;
    const origin = this.cache.origin(answer);
    // A catalog change while the request was handled: it may have been authorised under the old one.
    if (!origin || this.catalog.version !== start.catalog) return;
    this.entries.set(req.originalUrl, {
      ...origin,
      userId: String(req.params.userId),
      catalog: start.catalog,
      expires: (Math.floor(start.at / QUARTER_HOUR_MS) + 1) * QUARTER_HOUR_MS,
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /** `next` with repeats answered in front of it. */
  listener(next: RequestListener): RequestListener {
    return (req, res) => {
      if (req.method !== 'GET' || this.entries.size === 0 || !this.answer(req, res)) next(req, res);
    };
  }

  private answer(req: IncomingMessage, res: ServerResponse): boolean {
    const entry = req.url === undefined ? undefined : this.entries.get(req.url);
    if (!entry || hasBody(req)) return false;
    // A catalog not polled recently enough (server mode): the full path decides (it may answer 503).
    const answer =
      entry.catalog === this.catalog.version && this.catalog.isFresh && this.now() < entry.expires
        ? this.cache.current(entry.key, entry.listId)
        : undefined;
    if (!answer) {
      this.entries.delete(req.url!);
      return false;
    }
    if (this.limiter && !this.limiter.take(bucketKey(entry.userId)).ok) return false;
    countStatsCache('hit');
    const started = process.hrtime.bigint();
    const id = requestIdOf(req.headers['x-request-id'] as string | undefined);
    const client = this.clientAddress(req) ?? null;
    logWhenAnswered(this.log, res, started, () => ({
      req_id: id,
      client_ip: client,
      method: 'GET',
      route: API12_REST_ROUTE,
      operation: OPERATION,
    }));
    res.on('finish', () =>
      observeRequest(OPERATION, 200, 0, Number(process.hrtime.bigint() - started) / 1e9),
    );
    res.writeHead(200, {
      'X-Request-Id': id,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': answer.bytes.length,
    });
    res.end(answer.bytes);
    return true;
  }
}

const hasBody = (req: Pick<IncomingMessage, 'headers'>) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
