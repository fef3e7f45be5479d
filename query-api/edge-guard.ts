import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Catalog } from '../shared/catalog/catalog.js';
import type { Config } from '../shared/config.js';
import { credentialsValid } from './api12/auth.js';
import { notAllowed, notAllowedForCaller, serviceUnavailable, tooManyRequests } from './api12/errors.js';
import { BodyBudget } from './body-budget.js';
import { RateLimiter } from './rate-limit.js';

/** What the edge checks about a caller before reading a byte of its body (docs/api.md, errors). */
export interface EdgeGuards {
  /** Whether the user id segment names an active user whose key is `apiKey`. */
  credentials: (userIdSegment: string, apiKey: string) => Promise<boolean>;
  /** Per user_id, when RATE_LIMIT_PER_KEY is set. */
  limiter: RateLimiter | undefined;
  bodies: BodyBudget;
}

export function edgeGuards(config: Config, catalog: Catalog): EdgeGuards {
  return {
    credentials: (userId, apiKey) => credentialsValid(catalog, userId, apiKey),
    limiter: config.RATE_LIMIT_PER_KEY > 0 ? new RateLimiter(config.RATE_LIMIT_PER_KEY) : undefined,
    bodies: new BodyBudget(config.HTTP_BODY_BUDGET_MB * 1024 * 1024),
  };
}

/** A bucket per user_id as named in the path; a long segment is cut (it is no user id anyway). */
export const bucketKey = (userIdSegment: string) => userIdSegment.slice(0, 32);

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
 * Before the body is read, in this order: the caller's rate limit (429, so a key cannot be guessed
 * faster than the limit, whatever the key), the credentials in the path (101), then room in the body
 * budget (503). Only an authenticated caller's body is ever buffered. An answer given before the body
 * has arrived closes the connection: the rest of the body is not waited for.
 */
export function guardCaller(guards: EdgeGuards, bodyLimit: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const refuse = (err: Error) => {
      if (bodyPending(req)) res.setHeader('Connection', 'close');
      next(err);
    };
    const userId = String(req.params.userId);
    const taken = guards.limiter?.take(bucketKey(userId));
    if (taken && !taken.ok) return refuse(tooManyRequests(taken.retryAfterSeconds));
    guards.credentials(userId, String(req.params.apiKey)).then((ok) => {
      if (!ok) {
        const listId = queryListId(req);
        return refuse(listId === undefined ? notAllowedForCaller() : notAllowed(listId));
      }
      if (!guards.bodies.reserve(req, bodyLimit))
        return refuse(serviceUnavailable('too many request bodies in flight', 1));
      next();
    }, next);
  };
}
