import { createHash, timingSafeEqual } from 'node:crypto';
import type { Catalog } from '../shared/catalog/catalog.js';
import type { Db } from '../shared/clickhouse/client.js';
import type { ListAccessRecord } from '../shared/records/index.js';
import { notAllowed } from './api12/errors.js';

/**
 * TEMPORARY (branch `dash` only): a minimal `list.all` (contract §6) so the dashboard's browser tests
 * run in this branch. The real operation lives in query-api/lists/ (another branch); at merge this file
 * and its one registration line in shared/service.ts are deleted.
 */
export async function tempListAll(
  deps: { db: Db; catalog: Catalog },
  caller: { userId: string; apiKey: string },
): Promise<{ list_id: string; list_name: string; timezone: string; currency: string }[]> {
  const userId = /^\d{1,15}$/.test(caller.userId) ? Number(caller.userId) : 0;
  const user = userId > 0 ? await deps.catalog.user(userId) : undefined;
  const presented = createHash('sha256').update(caller.apiKey).digest();
  const ok = user ? timingSafeEqual(presented, Buffer.from(user.api_key_sha256, 'hex')) : false;
  if (!user?.active || !ok) throw notAllowed('');
  const rows = await deps.db.query<{ payload: string }>(
    `SELECT payload FROM catalog WHERE kind = 'list_access' AND startsWith(key, {prefix:String})
     ORDER BY key, version DESC, arrival DESC LIMIT 1 BY key`,
    { prefix: `${userId}:` },
  );
  const granted = rows
    .map((r) => JSON.parse(r.payload) as ListAccessRecord)
    .filter((g) => g.granted)
    .map((g) => g.list_id)
    .sort((a, b) => a - b);
  const lists = await Promise.all(granted.map((id) => deps.catalog.list(id)));
  return lists.flatMap((l) =>
    l ? [{ list_id: String(l.list_id), list_name: l.name, timezone: l.timezone, currency: l.currency }] : [],
  );
}
