import type { ActivityRecord, ActivityType } from './activity.js';
import { idValue, instantValue, isIdInput, moneyValue } from './fields.js';

/**
 * The hot path of record validation: an activity record that is plainly valid is checked and
 * normalised here, with the same value rules as the zod schemas (fields.ts) and the same output, at a
 * fraction of zod's cost per record (~10 µs, the largest JS cost of Kafka ingest: BENCHMARKS.md).
 * Anything else — an invalid field, an unusual shape — returns undefined and goes to the zod schemas,
 * which stay the definition and give the reasons. test/unit/records-fast.test.ts holds the two equal
 * on generated valid and invalid records.
 */

type Fields = Record<string, unknown>;
type Out = Record<string, unknown>;

const REACTIONS = new Set<ActivityType>(['open', 'click', 'purchase', 'bounce', 'unsubscribe', 'spam']);
const OUTCOMES = new Set<ActivityType>(['event', 'condition', 'action']);

const text = (v: unknown, min: number, max: number): v is string =>
  typeof v === 'string' && v.length >= min && v.length <= max;

/** Sets `key` on `out` from an id field; false when zod must decide. */
function id(v: Fields, out: Out, key: string, optional = false): boolean {
  const x = v[key];
  if (x === undefined) return optional && !(key in v);
  if (!isIdInput(x)) return false;
  const n = idValue(x);
  if (n === undefined) return false;
  out[key] = n;
  return true;
}

function instant(v: Fields, out: Out, key: string, now: number, optional = false): boolean {
  const x = v[key];
  if (x === undefined) return optional && !(key in v);
  if (typeof x !== 'number' && typeof x !== 'string') return false;
  const ms = instantValue(x, now);
  if (!Number.isFinite(ms)) return false;
  out[key] = ms;
  return true;
}

function money(v: Fields, out: Out, key: string): boolean {
  const x = v[key];
  if (typeof x !== 'number' && typeof x !== 'string') return false;
  const s = moneyValue(x);
  if (typeof s !== 'string') return false;
  out[key] = s;
  return true;
}

/** The record as the zod schema would give it, or undefined (not plainly valid: ask the schema). */
export function fastActivity(v: Fields, type: ActivityType, now = Date.now()): ActivityRecord | undefined {
  const out: Out = { type };
  if (!text(v.event_id, 1, 128)) return undefined;
  out.event_id = v.event_id;
  if (
    !id(v, out, 'list_id') ||
    !id(v, out, 'workflow_id') ||
    !id(v, out, 'subscriber_id') ||
    !id(v, out, 'trigger_id', true) ||
    !instant(v, out, 'timestamp', now)
  )
    return undefined;
  if (REACTIONS.has(type)) {
    if (!instant(v, out, 'sent_at', now, true)) return undefined;
    if (type === 'purchase') {
      if (!text(v.order_id, 1, 128)) return undefined;
      out.order_id = v.order_id;
      if (!money(v, out, 'value_ron') || !money(v, out, 'value_eur')) return undefined;
    }
  } else if (OUTCOMES.has(type)) {
    if (v.status !== 'ok' && v.status !== 'failed') return undefined;
    out.status = v.status;
    if (v.reason !== undefined) {
      if (!text(v.reason, 0, 4096)) return undefined;
      out.reason = v.reason;
    } else if ('reason' in v) return undefined;
  }
  return out as ActivityRecord;
}
