import { createHash, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Catalog } from '../../shared/catalog/catalog.js';
import { notAllowed, notAllowedForCaller } from './errors.js';

/** Compared against when the user is unknown, so both paths do the same work. */
const NO_KEY = Buffer.alloc(32);

/**
 * SHA-256 of recently presented keys: a request checks its key at the edge and again in the operation,
 * and a dashboard presents the same key request after request; hashing each time was ~8% of a cached
 * stats answer's CPU (BENCHMARKS.md). The comparison with the stored hash stays constant-time on every
 * request. Bounded by bytes (1 MB of keys and digests, whatever keys an outsider sends); a key that was
 * never right costs its entry like any other.
 */
const digests = new LRUCache<string, Buffer>({
  maxSize: 1 << 20,
  sizeCalculation: (_digest, key) => key.length + 32,
});

function keyDigest(apiKey: string): Buffer {
  let digest = digests.get(apiKey);
  if (!digest) {
    digest = createHash('sha256').update(apiKey).digest();
    digests.set(apiKey, digest);
  }
  return digest;
}

/**
 * The caller may read the list only with an active user, the right key, an existing list and an active
 * grant. Every failure is the same 101, so nothing tells which part was wrong.
 */
export async function authorize(
  catalog: Catalog,
  userIdSegment: string,
  apiKey: string,
  listId: number,
): Promise<void> {
  const userId = /^\d{1,15}$/.test(userIdSegment) ? Number(userIdSegment) : 0;
  const [user, list, granted] =
    userId > 0
      ? await Promise.all([catalog.user(userId), catalog.list(listId), catalog.hasGrant(userId, listId)])
      : [undefined, undefined, false];
  const presented = keyDigest(apiKey);
  const stored = user ? Buffer.from(user.api_key_sha256, 'hex') : NO_KEY;
  const keyMatches = timingSafeEqual(presented, stored);
  if (!(user?.active && keyMatches && list && granted)) throw notAllowed(listId);
}

/** Whether the user id segment names an active user whose key is `apiKey` (one path for every failure). */
export async function credentialsValid(
  catalog: Catalog,
  userIdSegment: string,
  apiKey: string,
): Promise<boolean> {
  const userId = /^\d{1,15}$/.test(userIdSegment) ? Number(userIdSegment) : 0;
  const user = userId > 0 ? await catalog.user(userId) : undefined;
  const presented = keyDigest(apiKey);
  const stored = user ? Buffer.from(user.api_key_sha256, 'hex') : NO_KEY;
  return timingSafeEqual(presented, stored) && user?.active === true;
}

/**
 * list.all names no list: the caller's user id when the user is active and the key is right, else
 * one 101 for every failure (unknown user, wrong key, inactive user), naming neither part.
 */
export async function authenticate(catalog: Catalog, userIdSegment: string, apiKey: string): Promise<number> {
  if (!(await credentialsValid(catalog, userIdSegment, apiKey))) throw notAllowedForCaller();
  return Number(userIdSegment);
}
