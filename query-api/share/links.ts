import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { chTime, type MarketerStore, type ShareLink } from '../../shared/clickhouse/marketer-store.js';
import { ApiError } from '../../shared/errors.js';

/**
 * Read-only share links (docs/dashboard.md "Share links"): a random token that stands for one list (and
 * optionally a workflow set) until it expires or is revoked. Only the token's SHA-256 is stored; the
 * token itself is shown once, in the link.
 */

/** Longest a link may live, and its default. */
export const MAX_SHARE_DAYS = 3650;
export const DEFAULT_SHARE_DAYS = 30;

/** Unknown, revoked and expired links get one answer: nothing tells which. */
export const shareNotAllowed = () =>
  new ApiError(101, 403, 'This share link is not valid (unknown, revoked or expired)');

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
export const tokenDigest = (token: string) => createHash('sha256').update(token).digest('hex');

/** The path of the dashboard a link opens (the token rides in the fragment: never sent to a server's logs). */
export const sharePath = (token: string) => `/dashboard/#share=${token}`;

export interface NewShare {
  id: string;
  token: string;
  path: string;
  list_id: number;
  workflow_ids: number[];
  /** ISO 8601 (UTC). */
  expires_at: string;
}

/** A link's public description (no token, no digest). */
export const describeShare = (l: ShareLink) => ({
  id: l.id,
  list_id: l.list_id,
  workflow_ids: l.workflow_ids,
  created_at: `${l.created_at.replace(' ', 'T')}Z`,
  expires_at: l.expires_at === null ? null : `${l.expires_at.replace(' ', 'T')}Z`,
  revoked: l.revoked,
});

export class ShareLinks {
  /** Links found by digest, for a second (a revocation made elsewhere is seen within it). */
  private readonly found = new LRUCache<string, { link: ShareLink | null }>({ max: 10_000, ttl: 1_000 });

  constructor(
    private readonly store: MarketerStore,
    private readonly now: () => number = Date.now,
  ) {}

  async create(listId: number, workflowIds: number[], expiresDays = DEFAULT_SHARE_DAYS): Promise<NewShare> {
    const token = randomBytes(32).toString('base64url');
    const created = this.now();
    const expires = created + expiresDays * 86_400_000;
    const id = randomUUID().slice(0, 8);
    await this.store.addShare({
      id,
      token_sha256: tokenDigest(token),
      list_id: listId,
      workflow_ids: [...new Set(workflowIds)].sort((a, b) => a - b),
      created_at: chTime(created),
      expires_at: chTime(expires),
      revoked: false,
    });
    return {
      id,
      token,
      path: sharePath(token),
      list_id: listId,
      workflow_ids: workflowIds,
      expires_at: new Date(expires).toISOString(),
    };
  }

  async revoke(id: string): Promise<boolean> {
    const done = await this.store.revokeShare(id);
    this.found.clear();
    return done;
  }

  list(): Promise<ShareLink[]> {
    return this.store.shares();
  }

  /** The link a token stands for while it is valid; else 403 (one answer for every reason). */
  async resolve(token: string): Promise<ShareLink> {
    if (!TOKEN.test(token)) throw shareNotAllowed();
    const digest = tokenDigest(token);
    let hit = this.found.get(digest);
    if (!hit) {
      hit = { link: (await this.store.shareByDigest(digest)) ?? null };
      this.found.set(digest, hit);
    }
    const link = hit.link;
    if (!link || link.revoked) throw shareNotAllowed();
    if (link.expires_at !== null && Date.parse(`${link.expires_at.replace(' ', 'T')}Z`) <= this.now())
      throw shareNotAllowed();
    return link;
  }
}
