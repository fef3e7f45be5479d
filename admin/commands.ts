import { createHash, randomBytes } from 'node:crypto';
import { DEMO } from '../ingest/demo-seed.js';
import type { CatalogListing } from '../shared/catalog/listing.js';
import { catalogSchema, type CatalogRecord } from '../shared/records/catalog.js';

/** What a command sends through POST /ingest, and what it tells the operator afterwards. */
export interface Plan {
  records: CatalogRecord[];
  /** Printed after the records were accepted (e.g. a generated key: shown once, stored only hashed). */
  done: string;
  /** Printed on stderr before sending: accepted, but probably not what was meant. */
  warning?: string;
}

export class UsageError extends Error {}

const positive = (name: string, value: string | undefined): number => {
  const n = Number(value);
  if (value === undefined || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a positive integer`);
  return n;
};

/** Records are validated with the same schema ingest uses, so a mistake is caught before sending. */
function record(input: Record<string, unknown>): CatalogRecord {
  const parsed = catalogSchema.safeParse(input);
  if (!parsed.success)
    throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return parsed.data;
}

export const generateKey = () => randomBytes(20).toString('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export type Options = Partial<Record<string, string | boolean>>;

/**
 * `user add --id N (key | --generate-key) [--inactive]`: a user record with the key's SHA-256. `key` is
 * the key read by admin/key-source.ts (never an argument); `replace`: the user exists, its key changes.
 */
export function userAdd(o: Options): Plan {
  const id = positive('id', o.id as string | undefined);
  if (Boolean(o.key) === Boolean(o['generate-key']))
    throw new UsageError('give exactly one of a key or --generate-key');
  const key = typeof o.key === 'string' ? o.key : generateKey();
  if (!/^[A-Za-z0-9._~-]{16,128}$/.test(key))
    throw new UsageError('the key must be 16-128 URL-safe characters (letters, digits, . _ ~ -)');
  return {
    records: [record({ type: 'user', user_id: id, api_key_sha256: sha256(key), active: !o.inactive })],
    done:
      (o.replace ? `user ${id} saved; its previous api key no longer works.` : `user ${id} saved.`) +
      (o['generate-key'] ? ` api key (shown once, stored only as its SHA-256): ${key}` : ''),
  };
}

/** The currencies API 1.2 reports revenue in (`revenue_ron`, `revenue_eur`, …; docs/api.md). */
export const REPORTED_CURRENCIES = ['RON', 'EUR'];

/**
 * `list add --id N --name NAME [--timezone TZ] [--currency CUR] [--locale L]`. A currency other than
 * RON or EUR is stored (it is the list's display currency: templates, the dashboard), with a warning.
 */
export function listAdd(o: Options): Plan {
  const id = positive('id', o.id as string | undefined);
  const currency = typeof o.currency === 'string' ? o.currency : undefined;
  const unreported = currency !== undefined && !REPORTED_CURRENCIES.includes(currency);
  return {
    ...(unreported
      ? {
          warning:
            `list ${id}: currency ${currency} is stored, but the API reports revenue in RON and EUR only ` +
            `(revenue_ron, revenue_eur): none of this list's figures will be in ${currency}; it is used ` +
            'only to display money (templates, the dashboard, which notes it). Use --currency RON or EUR ' +
            'for a list whose revenue you read in its own currency.',
        }
      : {}),
    records: [
      record({
        type: 'list',
        list_id: id,
        name: o.name ?? '',
        ...(o.timezone ? { timezone: o.timezone } : {}),
        ...(o.currency ? { currency: o.currency } : {}),
        ...(o.locale ? { locale: o.locale } : {}),
      }),
    ],
    done: `list ${id} saved. If the demo tenant (lists ${DEMO.lists.map((l) => l.list_id).join(' and ')}, user ${DEMO.userId}) was in the store, this first record of your own has removed it, and its published key now answers 403 (docs/records.md "The demo tenant").`,
  };
}

/** `grant --user N --list N [--revoke]`. */
export function grant(o: Options): Plan {
  const user = positive('user', o.user as string | undefined);
  const list = positive('list', o.list as string | undefined);
  const granted = !o.revoke;
  return {
    records: [record({ type: 'list_access', user_id: user, list_id: list, granted })],
    done: `user ${user} ${granted ? 'may now read' : 'may no longer read'} list ${list}.`,
  };
}

/** Replace (or add) `INGEST_TOKEN=` in an env file's text, keeping every other line. */
export function withIngestToken(envText: string, token: string): string {
  const lines = envText.split('\n');
  const i = lines.findIndex((l) => /^\s*INGEST_TOKEN\s*=/.test(l));
  if (i >= 0) lines[i] = `INGEST_TOKEN=${token}`;
  else {
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    lines.push(`INGEST_TOKEN=${token}`, '');
  }
  return lines.join('\n');
}

/**
 * A grant names ids, not records: nothing stops one for a user or list that does not exist (a typo is
 * stored silently). Returns what is unknown, e.g. "user 9 and list 7", or undefined when both are known.
 */
export function unknownInGrant(known: CatalogListing, user: number, list: number): string | undefined {
  const missing = [
    !known.users.some((u) => u.user_id === user) && `user ${user}`,
    !known.lists.some((l) => l.list_id === list) && `list ${list}`,
  ].filter((s): s is string => typeof s === 'string');
  return missing.length ? missing.join(' and ') : undefined;
}

/** Columns padded to their widest cell, for a terminal. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
    .join('\n');
}

export const usersTable = (l: CatalogListing) =>
  table(
    ['user_id', 'active'],
    l.users.map((u) => [u.user_id, u.active ? 'yes' : 'no']),
  );

export const listsTable = (l: CatalogListing) =>
  table(
    ['list_id', 'name', 'timezone', 'currency', 'locale'],
    l.lists.map((x) => [x.list_id, x.name, x.timezone, x.currency, x.locale]),
  );

export const grantsTable = (l: CatalogListing) =>
  table(
    ['user_id', 'list_id'],
    l.grants.map((g) => [g.user_id, g.list_id]),
  );
