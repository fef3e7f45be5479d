import type { Db } from '../clickhouse/client.js';
import type { ListAccessRecord, ListRecord, UserRecord } from '../records/index.js';

/** What the admin CLI may see of the catalog: never a key's digest (docs/operations.md "Admin CLI"). */
export interface CatalogListing {
  users: { user_id: number; active: boolean }[];
  /** A list without a time zone of its own shows the service's DEFAULT_TIMEZONE, as its dates are counted. */
  lists: (Omit<ListRecord, 'type' | 'version' | 'timezone'> & { timezone: string })[];
  /** Grants in force (the latest record of the pair grants). */
  grants: { user_id: number; list_id: number }[];
}

/** Narrows the listing: `user` to that user and their grants, `list` to that list and its grants. */
export interface ListingFilter {
  user?: number;
  list?: number;
}

/** Users, lists and grants at their latest version, by id (uncached: an operator reads what is stored). */
export async function catalogListing(
  db: Db,
  defaultTimezone: string,
  filter: ListingFilter = {},
): Promise<CatalogListing> {
  const rows = await db.query<{ kind: string; payload: string }>(
    `SELECT kind, argMax(payload, (version, arrival)) AS payload FROM catalog
     WHERE (kind = 'user' AND ({anyUser:Bool} OR key = {user:String}))
        OR (kind = 'list' AND ({anyList:Bool} OR key = {list:String}))
        OR (kind = 'list_access'
            AND ({anyUser:Bool} OR startsWith(key, {userPrefix:String}))
            AND ({anyList:Bool} OR endsWith(key, {listSuffix:String})))
     GROUP BY kind, key`,
    {
      anyUser: filter.user === undefined,
      anyList: filter.list === undefined,
      user: String(filter.user ?? ''),
      list: String(filter.list ?? ''),
      userPrefix: `${filter.user ?? ''}:`,
      listSuffix: `:${filter.list ?? ''}`,
    },
  );
  const listing: CatalogListing = { users: [], lists: [], grants: [] };
  for (const row of rows) {
    const r = JSON.parse(row.payload) as UserRecord | ListRecord | ListAccessRecord;
    if (r.type === 'user') listing.users.push({ user_id: r.user_id, active: r.active });
    else if (r.type === 'list') {
      const { list_id, name, currency, locale } = r;
      listing.lists.push({ list_id, name, timezone: r.timezone ?? defaultTimezone, currency, locale });
    } else if (r.granted) listing.grants.push({ user_id: r.user_id, list_id: r.list_id });
  }
  listing.users.sort((a, b) => a.user_id - b.user_id);
  listing.lists.sort((a, b) => a.list_id - b.list_id);
  listing.grants.sort((a, b) => a.user_id - b.user_id || a.list_id - b.list_id);
  return listing;
}
