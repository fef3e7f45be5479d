import { isCalendarDate } from '../../shared/dates.js';
import { invalidParam, missingParam } from './errors.js';

export type RawParams = Record<string, unknown>;

/**
 * Form fields and query strings as PHP clients send them: `a[]=1&a[]=2` (or `a[0]=…`) is a list,
 * `p[k]=v` an object, anything else a string.
 */
export function parseForm(text: string): RawParams {
  const out: RawParams = Object.create(null);
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const m = /^([^[\]]+)\[([^[\]]*)\]$/.exec(rawKey);
    if (!m) {
      out[rawKey] = value;
      continue;
    }
    const [, name, sub] = m as unknown as [string, string, string];
    if (sub === '' || /^\d+$/.test(sub)) {
      const list = Array.isArray(out[name]) ? (out[name] as unknown[]) : (out[name] = []);
      (list as unknown[]).push(value);
    } else {
      const obj = (
        typeof out[name] === 'object' && out[name] !== null ? out[name] : (out[name] = Object.create(null))
      ) as RawParams;
      obj[sub] = value;
    }
  }
  return out;
}

/** A body is JSON or form-encoded; an empty body is no params. Throws 406 when it cannot be read. */
export function parseBody(body: Buffer | undefined, contentType: string | undefined): RawParams {
  const text = body?.toString('utf8') ?? '';
  if (text.trim() === '') return {};
  const isForm = contentType?.includes('application/x-www-form-urlencoded');
  if (isForm) return parseForm(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    if (!contentType?.includes('json') && text.includes('=')) return parseForm(text);
    throw invalidParam('body', 'not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidParam('body', 'must be a JSON object of params');
  }
  return parsed as RawParams;
}

/** Query string then body: the body wins for a name given in both (contract §2.1). */
export const mergeParams = (query: RawParams, body: RawParams): RawParams => ({ ...query, ...body });

/** For an optional param, false, "false" and "" mean "not given" (as do absent and null). */
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
    if (n === undefined) throw invalidParam(name, `${JSON.stringify(item)} is not a positive integer`);
    return n;
  });
  return ids.length === 0 ? undefined : [...new Set(ids)];
}

/** `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS`; only the date counts. */
export function optionalDate(params: RawParams, name: string): string | undefined {
  const v = params[name];
  if (!given(v)) return undefined;
  const m =
    typeof v === 'string'
      ? /^(\d{4}-\d{2}-\d{2})(?: ([01]\d|2[0-3]):[0-5]\d:[0-5]\d)?$/.exec(v.trim())
      : null;
  if (!m || !isCalendarDate(m[1]!)) throw invalidParam(name, 'must be YYYY-MM-DD or YYYY-MM-DD HH:MM:SS');
  return m[1]!;
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
