import { z } from 'zod';

/**
 * Field types shared by every record family. Values are normalised here, at the edge, so the pipeline
 * and the storage layer only ever see one shape (ids as numbers, instants as epoch ms, money as decimal
 * strings).
 */

/** Ids are UInt64 in storage; JSON numbers are exact only up to 2^53 - 1, so larger ids are refused. */
export function idValue(v: number | string): number | undefined {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
const DIGITS = /^\d+$/;
export const isIdInput = (v: unknown): v is number | string =>
  typeof v === 'number' || (typeof v === 'string' && DIGITS.test(v));

export const positiveId = z
  .union([z.number(), z.string().regex(DIGITS, 'must be a positive integer')])
  .transform((v, ctx) => {
    const n = idValue(v);
    if (n === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be a positive integer (at most 2^53 - 1)' });
      return z.NEVER;
    }
    return n;
  });

/** Opaque ids of accounts and templates (docs/api.md "Addressing"). */
export const opaqueId = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1-128 characters of [A-Za-z0-9_.:-]');

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

/**
 * RFC 3339 → epoch ms, or NaN. Every field is range-checked first: Date.parse rolls impossible dates
 * and times over (2025-02-29 → 03-01, 24:00 → the next day) where docs/records.md "Activity records" has them refused.
 * Computed from the fields (Date.UTC) rather than re-parsed: this runs twice per record on the ingest
 * hot path. Digits beyond milliseconds are truncated, as DateTime64(3) would.
 */
function parseRfc3339(v: string): number {
  const m = RFC3339.exec(v);
  if (!m) return NaN;
  const [year, month, day, hour, minute, second] = [+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!];
  const daysInMonth = month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1];
  if (daysInMonth === undefined || day < 1 || day > daysInMonth) return NaN;
  const [offH, offM] = m[8] ? [+m[9]!, +m[10]!] : [0, 0];
  if (hour > 23 || minute > 59 || second > 59 || offH > 23 || offM > 59) return NaN;
  const ms = m[7] ? +m[7].slice(0, 3).padEnd(3, '0') : 0;
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  date.setUTCFullYear(year); // Date.UTC alone would read years 0-99 as 1900-1999
  const offset = (offH * 60 + offM) * 60_000;
  return date.getTime() + (m[8] === '-' ? offset : -offset);
}
const FUTURE_TOLERANCE_MS = 24 * 3600 * 1000;

/** An instant as epoch ms; NaN when it is not one; Infinity marks one too far in the future. */
export function instantValue(v: number | string, now = Date.now()): number {
  const ms = typeof v === 'number' ? (Number.isSafeInteger(v) && v >= 0 ? v : NaN) : parseRfc3339(v);
  return ms > now + FUTURE_TOLERANCE_MS ? Infinity : ms;
}

/** RFC 3339 with an offset, or integer Unix epoch milliseconds → epoch ms; at most 24 h in the future. */
export const instant = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const ms = instantValue(v);
  if (Number.isNaN(ms)) {
    ctx.addIssue({
      code: 'custom',
      message:
        typeof v === 'number'
          ? 'must be integer epoch milliseconds or RFC 3339 with an offset'
          : 'must be RFC 3339 with an offset (e.g. 2026-11-02T10:15:00Z) or epoch ms',
    });
    return z.NEVER;
  }
  if (ms === Infinity) {
    ctx.addIssue({ code: 'custom', message: 'is more than 24 h in the future' });
    return z.NEVER;
  }
  return ms;
});

const DECIMAL4 = /^\d{1,14}(\.\d{1,4})?$/;

/** A JSON number whose decimal text would not be exact (beyond 15 significant digits). */
export const TOO_PRECISE = Symbol('too precise');

/**
 * Money: ≥ 0, at most 4 decimals, fits Decimal(18,4). Kept as a decimal string so it is never summed in
 * binary floating point. A JSON number is taken at its shortest round-trip form, which is exact only up
 * to 15 significant digits; beyond that the sender must use a string. Undefined when it is not money.
 */
export function moneyValue(v: number | string): string | typeof TOO_PRECISE | undefined {
  let s: string;
  if (typeof v === 'number') {
    s = Number.isFinite(v) ? String(v) : 'NaN';
    if (/e/i.test(s) && v !== 0) s = v.toFixed(20).replace(/\.?0+$/, '');
    if (s.replace(/^0\.0*|\./g, '').length > 15) return TOO_PRECISE;
  } else {
    s = v.trim();
  }
  return DECIMAL4.test(s) ? s : undefined;
}

export const money = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const s = moneyValue(v);
  if (s === TOO_PRECISE) {
    ctx.addIssue({
      code: 'custom',
      message: 'has more than 15 significant digits: send it as a string to keep it exact',
    });
    return z.NEVER;
  }
  if (s === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a decimal ≥ 0 with at most 4 decimals (and below 10^14)',
    });
    return z.NEVER;
  }
  return s;
});

/** Catalog ordering: explicit version wins; without one, arrival order decides (see ARCHITECTURE.md). */
export const version = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional();

/**
 * Nesting depth of a JSON value (a scalar is 0, `{}` and `[]` are 1), walked without recursion, or
 * undefined as soon as it exceeds `max`. A client can send 100,000 nested arrays in 200 KB, which
 * JSON.parse reads but any recursive walk (JSON.stringify included) overflows the stack on.
 */
export function jsonDepthWithin(value: unknown, max: number): number | undefined {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const d = depth + 1;
    if (d > max) return undefined;
    if (d > deepest) deepest = d;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, d]);
    }
  }
  return deepest;
}

/**
 * A JSON object stored as JSON text (a template's `props`): nested at most `maxDepth` deep and at most
 * `maxBytes` as JSON, checked here so that a record that passes validation can always be written.
 */
export const boundedJsonObject = (maxDepth: number, maxBytes: number) =>
  z.record(z.string(), z.unknown()).superRefine((v, ctx) => {
    if (jsonDepthWithin(v, maxDepth) === undefined) {
      ctx.addIssue({ code: 'custom', message: `nested more than ${maxDepth} deep` });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(v));
    if (bytes > maxBytes)
      ctx.addIssue({ code: 'custom', message: `${bytes} bytes of JSON, over the ${maxBytes} byte limit` });
  });
