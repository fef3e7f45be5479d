import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Catalog } from '../shared/catalog/catalog.js';
import { trustProxy, type Config, type TrustProxy } from '../shared/config.js';
import { credentialsValid } from './api12/auth.js';
import { notAllowed, notAllowedForCaller, serviceUnavailable, tooManyRequests } from './api12/errors.js';
import { BodyBudget } from './body-budget.js';
import { peerKey } from './peer-address.js';
import { RateLimiter } from './rate-limit.js';

/** What the edge checks about a caller before reading a byte of its body (docs/api.md, errors). */
export interface EdgeGuards {
  /** Whether the user id segment names an active user whose key is `apiKey`. */
  credentials: (userIdSegment: string, apiKey: string) => Promise<boolean>;
  /** Calls with valid credentials, per user (bucketKey), when RATE_LIMIT_PER_KEY is set. */
  limiter: RateLimiter | undefined;
  /**
   * Failed attempts (unknown user, wrong key), per user and peer address (failureKey), when
   * RATE_LIMIT_PER_KEY is set: a guesser spends its own budget, never the right key's.
   */
  failures: RateLimiter | undefined;
  /** Room for bodies in flight, with a share per user and per client address. */
  bodies: BodyBudget;
  /** TRUST_PROXY compiled: whose X-Forwarded-For names the client (`req.ip`); undefined: nobody's. */
  trustProxy: TrustProxy | undefined;
}

/** The largest API body (1 MiB, decoded): one of them always fits a holder's share of the body budget. */
export const API_BODY_LIMIT_BYTES = 1024 * 1024;

export function edgeGuards(config: Config, catalog: Catalog): EdgeGuards {
  return {
    credentials: (userId, apiKey) => credentialsValid(catalog, userId, apiKey),
    limiter: config.RATE_LIMIT_PER_KEY > 0 ? new RateLimiter(config.RATE_LIMIT_PER_KEY) : undefined,
    failures: config.RATE_LIMIT_PER_KEY > 0 ? new RateLimiter(config.RATE_LIMIT_PER_KEY) : undefined,
    bodies: new BodyBudget(config.HTTP_BODY_BUDGET_MB * 1024 * 1024, API_BODY_LIMIT_BYTES),
    trustProxy: trustProxy(config.TRUST_PROXY),
  };
}

/**
 * The user a user id segment names, as the credentials check reads it (`028` and `28` are user 28), or
 * undefined when it names none (not digits): the bucket belongs to the user, not to a spelling of its id.
 */
export function canonicalUserId(userIdSegment: string): string | undefined {
  if (!/^\d{1,64}$/.test(userIdSegment)) return undefined;
  return userIdSegment.replace(/^0+(?=\d)/, '');
}

/** The rate limit's bucket of a caller with valid credentials: its user (docs/api.md, rate limits). */
export const bucketKey = (userIdSegment: string) => canonicalUserId(userIdSegment) ?? '-';

/**
 * The bucket of failed attempts: the user as above (every segment that is no user id shares one) and the
 * client's address (query-api/peer-address.ts; `req.ip`: the peer, or behind a trusted proxy the client it
 * names), so that an outsider who knows a user id spends only its own.
 */
export const failureKey = (userIdSegment: string, address: string | undefined) =>
  `${bucketKey(userIdSegment)} ${peerKey(address)}`;

/**
 * A list_id given in the query string, for the 101's message. The body is never read for it: an
 * unauthenticated caller costs no body buffering, so without one the message names the caller instead.
 */
function queryListId(req: Request): string | undefined {
  const q = req.originalUrl.indexOf('?');
  if (q < 0) return undefined;
  const id = new URLSearchParams(req.originalUrl.slice(q + 1)).get('list_id');
  return id !== null && /^[1-9]\d{0,19}$/.test(id) ? id : undefined;
}

/** A request whose body has not been read yet: after an early answer its connection is closed. */
const bodyPending = (req: Request) =>
  !req.complete &&
  (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0);

/**
 * Before the body is read, in this order (docs/api.md, errors and rate limits):
 * 1. the failed-attempt budget of this user id from this peer address: a token is taken before the
 *    credentials are looked at, so an address over it gets 429 whatever the key (a guesser cannot tell a
 *    right key by its answer, and guesses no faster than the limit), and given back when the
 *    credentials are right (a caller with the right key spends nothing of it);
 * 2. the credentials in the path (101);
 * 3. the user's own budget (429), only for valid credentials: failures never spend it;
 * 4. room in the body budget, and in the shares of the user and of the client's address (503).
 * Only an authenticated caller's body is ever buffered. An answer given before the body has arrived
 * closes the connection: the rest of the body is not waited for.
 */
export function guardCaller(guards: EdgeGuards, bodyLimit: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const refuse = (err: Error) => {
      if (bodyPending(req)) res.setHeader('Connection', 'close');
      next(err);
    };
    const userId = String(req.params.userId);
    // The client's address: the peer, or behind a proxy TRUST_PROXY names, the client its X-Forwarded-For
    // gives (Express's req.ip with the `trust proxy` setting of the app: query-api/app.ts).
    const client = req.ip;
    const failed = failureKey(userId, client);
    const gate = guards.failures?.take(failed);
    if (gate && !gate.ok) return refuse(tooManyRequests(gate.retryAfterSeconds));
    guards.credentials(userId, String(req.params.apiKey)).then((ok) => {
      if (!ok) {
        const listId = queryListId(req);
        return refuse(listId === undefined ? notAllowedForCaller() : notAllowed(listId));
      }
      guards.failures?.give(failed);
      const taken = guards.limiter?.take(bucketKey(userId));
      if (taken && !taken.ok) return refuse(tooManyRequests(taken.retryAfterSeconds));
      const holders = [`user ${bucketKey(userId)}`, `address ${peerKey(client)}`];
      if (!guards.bodies.reserve(req, bodyLimit, holders))
        return refuse(serviceUnavailable('too many request bodies in flight', 1));
      next();
    }, next);
  };
}
