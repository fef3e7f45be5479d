import { z } from 'zod';

/**
 * Field types shared by every record family. Values are normalised here, at the edge, so the pipeline
 * and the storage layer only ever see one shape (ids as numbers, instants as epoch ms, money as decimal
 * strings).
 */

/** Ids are UInt64 in storage; JSON numbers are exact only up to 2^53 - 1, so larger ids are refused. */
export const positiveId = z
  .union([z.number(), z.string().regex(/^\d+$/, 'must be a positive integer')])
  .transform((v, ctx) => {
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isSafeInteger(n) || n <= 0) {
      ctx.addIssue({ code: 'custom', message: 'must be a positive integer (at most 2^53 - 1)' });
      return z.NEVER;
    }
    return n;
  });

/** Opaque ids of accounts and templates (contract §2.1). */
export const opaqueId = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1-128 characters of [A-Za-z0-9_.:-]');

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * RFC 3339 → epoch ms, or NaN. Every field is range-checked first: Date.parse rolls impossible dates
 * and times over (2025-02-29 → 03-01, 24:00 → the next day) where the contract wants them refused.
 */
function parseRfc3339(v: string): number {
  const m = RFC3339.exec(v);
  if (!m) return NaN;
  const [year, month, day, hour, minute, second, offH, offM] = [1, 2, 3, 4, 5, 6, 8, 9].map((i) =>
    Number(m[i] ?? 0),
  ) as [number, number, number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return NaN;
  if (hour > 23 || minute > 59 || second > 59 || offH > 23 || offM > 59) return NaN;
  // Date.parse keeps milliseconds only; digits beyond them are truncated, as DateTime64(3) would.
  return Date.parse(v.replace(/(\.\d{3})\d+/, '$1'));
}
const FUTURE_TOLERANCE_MS = 24 * 3600 * 1000;

/** RFC 3339 with an offset, or integer Unix epoch milliseconds → epoch ms; at most 24 h in the future. */
export const instant = z.union([z.number(), z.string()]).transform((v, ctx) => {
  let ms: number;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be integer epoch milliseconds or RFC 3339 with an offset',
      });
      return z.NEVER;
    }
    ms = v;
  } else {
    ms = parseRfc3339(v);
    if (Number.isNaN(ms)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be RFC 3339 with an offset (e.g. 2026-11-02T10:15:00Z) or epoch ms',
      });
      return z.NEVER;
    }
  }
  if (ms > Date.now() + FUTURE_TOLERANCE_MS) {
    ctx.addIssue({ code: 'custom', message: 'is more than 24 h in the future' });
    return z.NEVER;
  }
  return ms;
});

const DECIMAL4 = /^\d{1,14}(\.\d{1,4})?$/;

/**
 * Money: ≥ 0, at most 4 decimals, fits Decimal(18,4). Kept as a decimal string so it is never summed in
 * binary floating point. A JSON number is taken at its shortest round-trip form, which is exact only up
 * to 15 significant digits; beyond that the sender must use a string.
 */
export const money = z.union([z.number(), z.string()]).transform((v, ctx) => {
  let s: string;
  if (typeof v === 'number') {
    s = Number.isFinite(v) ? String(v) : 'NaN';
    if (/e/i.test(s) && v !== 0) s = v.toFixed(20).replace(/\.?0+$/, '');
    if (s.replace(/^0\.0*|\./g, '').length > 15) {
      ctx.addIssue({
        code: 'custom',
        message: 'has more than 15 significant digits: send it as a string to keep it exact',
      });
      return z.NEVER;
    }
  } else {
    s = v.trim();
  }
  if (!DECIMAL4.test(s)) {
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
