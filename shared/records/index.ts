import { z } from 'zod';
import { ACTIVITY_TYPES, activitySchemas, type ActivityRecord, type ActivityType } from './activity.js';
import { CATALOG_TYPES, catalogSchemas, type CatalogRecord } from './catalog.js';
import { fastActivity } from './fast.js';

export * from './activity.js';
export * from './catalog.js';

/** Every record a producer may send, discriminated by `type` (docs/records.md "Schema"). */
export const recordSchema = z.discriminatedUnion('type', [...activitySchemas, ...catalogSchemas]);
export type MailstatsRecord = z.infer<typeof recordSchema>;

const ACTIVITY = new Set<string>(ACTIVITY_TYPES);
export const isActivity = (r: MailstatsRecord): r is ActivityRecord => ACTIVITY.has(r.type);
export const isCatalog = (r: MailstatsRecord): r is CatalogRecord => !ACTIVITY.has(r.type);

const ALL_TYPES = [...ACTIVITY_TYPES, ...CATALOG_TYPES].join(', ');

export type RecordCheck = { ok: true; record: MailstatsRecord } | { ok: false; reason: string };

/** Validate one decoded JSON value; the reason names the offending field. */
export function checkRecord(value: unknown): RecordCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'record must be a JSON object' };
  }
  const type = (value as { type?: unknown }).type;
  if (
    typeof type !== 'string' ||
    !(ACTIVITY.has(type) || (CATALOG_TYPES as readonly string[]).includes(type))
  ) {
    return { ok: false, reason: `type: must be one of ${ALL_TYPES}` };
  }
  const fast = ACTIVITY.has(type)
    ? fastActivity(value as Record<string, unknown>, type as ActivityType)
    : undefined;
  if (fast) return { ok: true, record: fast };
  const parsed = recordSchema.safeParse(value);
  if (parsed.success) return { ok: true, record: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.join('.') : 'record';
  const given = issue?.path.reduce<unknown>(
    (v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k],
    value,
  );
  const message = given === undefined ? 'is required' : issue?.message;
  return { ok: false, reason: `${field}: ${message ?? 'is invalid'}` };
}
