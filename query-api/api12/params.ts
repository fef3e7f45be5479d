import { isCalendarDate } from '../../shared/dates.js';
import { invalidParam, missingParam } from './errors.js';

export type RawParams = Record<string, unknown>;

/**
 * Absent, null, false, "false" and "" mean "not given" (a required param so sent is missing: 407).
 * The intake (intake.ts) has already dropped every other PHP-false value of an optional param
 * (0, "0", [], {}), so the validators below see those only for required params, where they are 406.
 */
export const given = (v: unknown): boolean =>
  !(v === undefined || v === null || v === false || v === 'false' || v === '');

function toPositiveInt(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export function requiredId(params: RawParams, name: string): number {
  if (!given(params[name])) throw missingParam(name);
  return optionalId(params, name)!;
}

export function optionalId(params: RawParams, name: string): number | undefined {
  const v = params[name];
  if (!given(v)) return undefined;
  const n = toPositiveInt(v);
  if (n === undefined) throw invalidParam(name, 'must be a positive integer');
  return n;
}

const QUOTED_CHARS = 40;

/**
 * How a rejected list item is named in the 406: a scalar as its JSON (a long string only in part), an
 * array or object by its type. Never stringified whole: a client may nest arrays 100,000 deep, which
 * JSON.stringify cannot walk without overflowing the stack.
 */
function describeItem(item: unknown): string {
  if (Array.isArray(item)) return 'an array';
  if (typeof item === 'string') {
    if (item.length <= QUOTED_CHARS) return JSON.stringify(item);
    return `${JSON.stringify(item.slice(0, QUOTED_CHARS) + '…')} (${item.length} characters)`;
  }
  if (typeof item === 'object' && item !== null) return 'an object';
  return String(item);
}

/** An id list: JSON array, JSON-encoded array, "1,2, 3", repeated form fields, or one id. */
export function optionalIdList(params: RawParams, name: string, max: number): number[] | undefined {
  let v = params[name];
  if (!given(v)) return undefined;
  if (typeof v === 'string' && v.trim().startsWith('[')) {
    try {
      v = JSON.parse(v);
    } catch {
      throw invalidParam(name, 'not a valid JSON array');
    }
  }
  const items = Array.isArray(v)
    ? v
    : typeof v === 'string'
      ? v.split(',').filter((s) => s.trim() !== '')
      : [v];
  if (items.length > max) throw invalidParam(name, `at most ${max} ids`);
  const ids = items.map((item) => {
    const n = toPositiveInt(item);
    if (n === undefined) throw invalidParam(name, `${describeItem(item)} is not a positive integer`);
    return n;
  });
  return ids.length === 0 ? undefined : [...new Set(ids)];
}

const TIME = '(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?';
const OFFSET = '(?:Z|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)';
/** `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`, or ISO 8601 with a `T` and an offset (`DateTime::ISO8601`, ATOM, `Z`). */
const DATE_FORMS = new RegExp(`^(\\d{4}-\\d{2}-\\d{2})(?: ${TIME}|T${TIME}${OFFSET})?$`);
/** The `date` member of PHP's JSON encoding of a DateTime: `2026-11-02 10:15:00.000000`. */
const PHP_DATETIME = new RegExp(`^(\\d{4}-\\d{2}-\\d{2}) ${TIME}$`);
const DATE_RULE =
  'must be YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, ISO 8601 with an offset, or a PHP DateTime object';

/** A PHP DateTime as json_encode writes it (`{"date": …, "timezone_type": 3, "timezone": "UTC"}`), also JSON-encoded in a string. */
function phpDateTime(v: unknown): string | undefined {
  let obj = v;
  if (typeof v === 'string' && v.trim().startsWith('{')) {
    try {
      obj = JSON.parse(v);
    } catch {
      return undefined;
    }
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  const date = (obj as Record<string, unknown>).date;
  return typeof date === 'string' ? PHP_DATETIME.exec(date.trim())?.[1] : undefined;
}

/**
 * A date in any form of docs/api.md "Parameters". Only the calendar date as written counts: the time and the
 * offset or time zone are read past, never converted (`2026-11-02T23:30:00-0500` is 2026-11-02).
 */
export function optionalDate(params: RawParams, name: string): string | undefined {
  const v = params[name];
  if (!given(v)) return undefined;
  const date = typeof v === 'string' ? (DATE_FORMS.exec(v.trim())?.[1] ?? phpDateTime(v)) : phpDateTime(v);
  if (date === undefined || !isCalendarDate(date)) throw invalidParam(name, DATE_RULE);
  return date;
}

export function optionalIntInRange(
  params: RawParams,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const v = params[name];
  if (!given(v)) return undefined;
  const n = toPositiveInt(v);
  if (n === undefined || n < min || n > max)
    throw invalidParam(name, `must be an integer from ${min} to ${max}`);
  return n;
}

/** `month`: 1..12 or `YYYY-MM`. */
export function optionalMonth(params: RawParams, name: string): { year?: number; month: number } | undefined {
  const v = params[name];
  if (!given(v)) return undefined;
  const ym = typeof v === 'string' ? /^(\d{4})-(0[1-9]|1[0-2])$/.exec(v.trim()) : null;
  if (ym && isCalendarDate(`${ym[1]}-${ym[2]}-01`)) return { year: Number(ym[1]), month: Number(ym[2]) };
  const n = toPositiveInt(v);
  if (n === undefined || n > 12) throw invalidParam(name, 'must be a month number 1..12 or YYYY-MM');
  return { month: n };
}
