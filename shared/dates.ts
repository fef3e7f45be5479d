/** Calendar dates as `YYYY-MM-DD` strings, and instants mapped to dates in an IANA time zone. */

const DAY_MS = 86_400_000;
/** Zone offsets change only on quarter-hour boundaries, so one lookup serves a 15-minute bucket. */
const BUCKET_MS = 15 * 60_000;
const MAX_CACHED = 200_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Per zone: 15-minute bucket → offset. A map per zone, so a look-up builds no key string. */
const offsets = new Map<string, Map<number, number>>();
/** Day number → `YYYY-MM-DD`. Formatting through Date cost ~3 µs per record on the ingest path. */
const dayStrings = new Map<number, string>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** Offset of `tz` from UTC at instant `ms`, in ms (e.g. +7,200,000 for Bucharest in winter). */
export function zoneOffsetMs(ms: number, tz: string): number {
  const bucket = Math.floor(ms / BUCKET_MS) * BUCKET_MS;
  let zone = offsets.get(tz);
  if (!zone) offsets.set(tz, (zone = new Map()));
  let off = zone.get(bucket);
  if (off === undefined) {
    const p: Record<string, number> = {};
    for (const part of formatter(tz).formatToParts(bucket)) p[part.type] = Number(part.value);
    const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!);
    off = wall - bucket;
    if (zone.size >= MAX_CACHED) zone.clear();
    zone.set(bucket, off);
  }
  return off;
}

/** The calendar date of instant `ms` in time zone `tz`. */
export function localDate(ms: number, tz: string): string {
  return fromDayNumber(Math.floor((ms + zoneOffsetMs(ms, tz)) / DAY_MS));
}

export function toDayNumber(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS;
}

export function fromDayNumber(n: number): string {
  let s = dayStrings.get(n);
  if (s === undefined) {
    s = new Date(n * DAY_MS).toISOString().slice(0, 10);
    if (dayStrings.size >= MAX_CACHED) dayStrings.clear();
    dayStrings.set(n, s);
  }
  return s;
}

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;
const pad3 = (n: number) => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

/**
 * Instant `ms` as a UTC `YYYY-MM-DD hh:mm:ss.sss` (ClickHouse DateTime64(3) text), the same as
 * `new Date(ms).toISOString()` reshaped, in a fifth of the time: the date from the cached day string,
 * the time of day by arithmetic.
 */
export function toDateTime64(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  return `${fromDayNumber(day)} ${pad2(h)}:${pad2(m)}:${pad2(s)}.${pad3(rest - s * 1000)}`;
}

export const addDays = (date: string, n: number): string => fromDayNumber(toDayNumber(date) + n);

/** Inclusive length of a period in days. */
export const periodLength = (from: string, to: string): number => toDayNumber(to) - toDayNumber(from) + 1;

/** A real calendar date (rejects 2026-02-30). */
export function isCalendarDate(date: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) && fromDayNumber(toDayNumber(date)) === date;
}
