/**
 * An erasure's time, as `erase --at`, an `erase --file` line and POST /admin/erase take it
 * (docs/lifecycle.md, "erase"): RFC 3339 with an offset, or epoch milliseconds from 2000 on. The bound
 * makes a number unambiguous: epoch seconds of any time since 1970 (about 1.8 × 10⁹ today) are below it
 * read as milliseconds, so they are refused instead of being read as a day in January 1970.
 */
export const EARLIEST_ERASURE_MS = Date.UTC(2000, 0, 1);

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i;

/** Epoch milliseconds, or the problem with `value` in one sentence. Whether it is future is the caller's. */
export function parseErasureTime(value: string | number): { ms: number } | { problem: string } {
  const text = String(value).trim();
  const ms =
    typeof value === 'number' || /^\d+$/.test(text)
      ? Number(text)
      : RFC3339.test(text)
        ? Date.parse(text)
        : NaN;
  if (!Number.isSafeInteger(ms))
    return {
      problem: `"${text}" is not a time (RFC 3339 with an offset, e.g. 2026-11-02T10:00:00Z, or epoch milliseconds)`,
    };
  if (ms < EARLIEST_ERASURE_MS)
    return {
      problem:
        typeof value === 'number' || /^\d+$/.test(text)
          ? `${text} is before 2000 as epoch milliseconds: if it is epoch seconds, give ${new Date(ms * 1000).toISOString()} (or ${text}000)`
          : `${text} is before 2000: not an erasure time`,
    };
  return { ms };
}
