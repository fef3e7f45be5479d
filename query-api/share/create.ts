import type { Catalog } from '../../shared/catalog/catalog.js';
import { authorize } from '../api12/auth.js';
import type { Caller } from '../api12/operation.js';
import { optionalIdList, optionalIntInRange, requiredId, type RawParams } from '../api12/params.js';
import { MAX_WORKFLOW_IDS } from '../stats/handler.js';
import { DEFAULT_SHARE_DAYS, MAX_SHARE_DAYS, type ShareLinks } from './links.js';

/** The answer of share.create: the link (a path on this service), its id (to revoke it) and its expiry. */
export interface ShareCreated {
  url: string;
  id: string;
  expires_at: string;
}

/**
 * share.create (an operation of this service, docs/api.md "share.create"): list_id, optional
 * workflow_ids and expires_days (default 30, at most 3650). The caller must be able to read the list
 * (101 otherwise, as every operation); the link then reads that list without a key until it expires or
 * an operator revokes it (`admin share revoke ID`).
 */
export async function shareCreate(
  deps: { catalog: Catalog; links: ShareLinks },
  caller: Caller,
  params: RawParams,
): Promise<ShareCreated> {
  const listId = requiredId(params, 'list_id');
  const workflowIds = optionalIdList(params, 'workflow_ids', MAX_WORKFLOW_IDS) ?? [];
  const days = optionalIntInRange(params, 'expires_days', 1, MAX_SHARE_DAYS) ?? DEFAULT_SHARE_DAYS;
  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);
  const link = await deps.links.create(listId, workflowIds, days);
  return { url: link.path, id: link.id, expires_at: link.expires_at };
}
