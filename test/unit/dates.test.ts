import { describe, expect, it } from 'vitest';
import { fromDayNumber, localDate, toDateTime64, toDayNumber, zoneOffsetMs } from '../../shared/dates.js';
import { rng } from '../support/rng.js';

/** The plain Date formatting the fast paths replace: they must give the very same text. */
const reference = {
  dateTime64: (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 23),
  day: (n: number) => new Date(n * 86_400_000).toISOString().slice(0, 10),
};

/** Instants from 1900 to 2299 (DateTime64(3)'s range), at ms precision, plus the edges of days. */
function instants(n: number): number[] {
  const rnd = rng(11);
  const lo = Date.UTC(1900, 0, 1);
  const hi = Date.UTC(2299, 11, 31, 23, 59, 59, 999);
  const out = [
    lo,
    hi,
    0,
    -1,
    1,
    86_399_999,
    86_400_000,
    -86_400_000,
    -86_400_001,
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
  ];
  for (let i = 0; i < n; i++) out.push(Math.floor(lo + rnd() * (hi - lo)));
  return out;
}

describe('dates', () => {
  it('toDateTime64 equals the Date formatting for instants of 1900-2299, before 1970 too', () => {
    const wrong = instants(50_000).filter((ms) => toDateTime64(ms) !== reference.dateTime64(ms));
    expect(wrong.map((ms) => [ms, toDateTime64(ms), reference.dateTime64(ms)])).toEqual([]);
  });

  it('fromDayNumber equals the Date formatting, also when asked again (cached)', () => {
    const rnd = rng(5);
    const days = Array.from({ length: 20_000 }, () => Math.floor(-25_567 + rnd() * 150_000));
    for (const round of [1, 2]) {
      const wrong = days.filter(
        (n) => fromDayNumber(n) !== reference.day(n) || toDayNumber(fromDayNumber(n)) !== n,
      );
      expect(wrong, `round ${round}`).toEqual([]);
    }
  });

  it('localDate keeps each zone apart (per-zone offset caches)', () => {
    // 2025-03-30 21:30 UTC: already the 31st in Bucharest (UTC+3 in summer), still the 30th in New York.
    const ms = Date.UTC(2025, 2, 30, 21, 30);
    expect(localDate(ms, 'Europe/Bucharest')).toBe('2025-03-31');
    expect(localDate(ms, 'America/New_York')).toBe('2025-03-30');
    expect(localDate(ms, 'UTC')).toBe('2025-03-30');
    expect(zoneOffsetMs(ms, 'Europe/Bucharest')).toBe(3 * 3_600_000);
    expect(zoneOffsetMs(ms, 'America/New_York')).toBe(-4 * 3_600_000);
    // Winter, same zones, from the same caches.
    const winter = Date.UTC(2025, 0, 15, 22, 30);
    expect(localDate(winter, 'Europe/Bucharest')).toBe('2025-01-16');
    expect(zoneOffsetMs(winter, 'Europe/Bucharest')).toBe(2 * 3_600_000);
    expect(zoneOffsetMs(winter, 'America/New_York')).toBe(-5 * 3_600_000);
  });
});
