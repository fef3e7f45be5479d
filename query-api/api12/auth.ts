import { createHash, timingSafeEqual } from 'node:crypto';
import type { Catalog } from '../../shared/catalog/catalog.js';
import { notAllowed, notAllowedForCaller } from './errors.js';

/** Compared against when the user is unknown, so both paths do the same work. */
const NO_KEY = Buffer.alloc(32);

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
  const presented = createHash('sha256').update(apiKey).digest();
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
  const presented = createHash('sha256').update(apiKey).digest();
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
