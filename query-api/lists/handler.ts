import { z } from 'zod';
import type { Catalog } from '../../shared/catalog/catalog.js';
import { authenticate } from '../api12/auth.js';
import type { RawParams } from '../api12/params.js';
import type { Caller } from '../api12/operation.js';

/** One entry of the list.all answer (docs/api.md "list.all"); the dashboard's list picker reads exactly this. */
export const ListEntry = z.object({
  list_id: z.string(),
  list_name: z.string(),
  timezone: z.string(),
  currency: z.string(),
});
export type ListEntry = z.infer<typeof ListEntry>;

export interface ListsDeps {
  catalog: Catalog;
}

/**
 * list.all (no params): the lists the caller may read — an active grant and an existing list —
 * ascending by list id. A user with no such list gets `[]`; an unknown user, a wrong key or an
 * inactive user gets 101 `Not allowed for this user_id and api_key` (there is no list id to name).
 */
export async function listAll(deps: ListsDeps, caller: Caller, _params: RawParams): Promise<ListEntry[]> {
  const userId = await authenticate(deps.catalog, caller.userId, caller.apiKey);
  const lists = await deps.catalog.grantedLists(userId);
  return lists.map((l) => ({
    list_id: String(l.list_id),
    list_name: l.name,
    timezone: l.timezone,
    currency: l.currency ?? 'RON',
  }));
}
