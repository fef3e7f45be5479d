import { describe, expect, it } from 'vitest';
import { ApiError } from '../../query-api/api12/errors.js';
import {
  given,
  mergeParams,
  optionalDate,
  optionalIdList,
  optionalMonth,
  parseBody,
  parseForm,
  requiredId,
} from '../../query-api/api12/params.js';
import { resolvePeriod } from '../../query-api/stats/period.js';
import { redactApiKey } from '../../shared/log.js';
import { averageCents, formatCents, percent, toUnits4, unitsToCents } from '../../shared/money.js';

const apiError = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, status: err.status, message: err.message };
    throw err;
  }
  throw new Error('expected an ApiError');
};

describe('money', () => {
  const fmt = (s: string) => formatCents(unitsToCents(toUnits4(s)));
  it('formats with a decimal comma and dots between thousands', () => {
    expect(fmt('0')).toBe('0,00');
    expect(fmt('1234.5')).toBe('1.234,50');
    expect(fmt('1234567.891')).toBe('1.234.567,89');
    expect(fmt('999.995')).toBe('1.000,00');
  });
  it('rounds half away from zero on the exact decimal', () => {
    expect(unitsToCents(toUnits4('0.005'))).toBe(1n);
    expect(unitsToCents(toUnits4('0.0049'))).toBe(0n);
    expect(unitsToCents(toUnits4('2.675'))).toBe(268n); // a float would give 2.67
    expect(unitsToCents(toUnits4('0.1') + toUnits4('0.2'))).toBe(30n);
  });
  it('averages and takes percentages exactly', () => {
    expect(averageCents(toUnits4('10'), 3)).toBe(333n);
    expect(averageCents(toUnits4('0.05'), 2)).toBe(3n); // 0.025 → 0.03
    expect(averageCents(0n, 0)).toBe(0n);
    expect(percent(1, 3)).toBe(33.33);
    expect(percent(2, 3)).toBe(66.67);
    expect(percent(1, 8)).toBe(12.5);
    expect(percent(5, 0)).toBe(0);
  });
});

describe('period resolution (contract §2.4)', () => {
  // 2026-11-20T22:30Z is already 21 November in Bucharest, still 20 November in New York.
  const now = Date.parse('2026-11-20T22:30:00Z');
  const p = (params: Parameters<typeof resolvePeriod>[0], tz = 'Europe/Bucharest') =>
    resolvePeriod(params, tz, 731, now);

  it('defaults to the last 30 days including today, in the list time zone', () => {
    expect(p({})).toEqual({ from: '2026-10-23', to: '2026-11-21' });
    expect(p({}, 'America/New_York')).toEqual({ from: '2026-10-22', to: '2026-11-20' });
  });
  it('takes explicit dates first, filling a missing side', () => {
    expect(p({ startDate: '2026-01-01', stopDate: '2026-01-31', month: { month: 5 }, days: 3 })).toEqual({
      from: '2026-01-01',
      to: '2026-01-31',
    });
    expect(p({ stopDate: '2026-03-30' })).toEqual({ from: '2026-03-01', to: '2026-03-30' });
    expect(p({ startDate: '2026-11-01' })).toEqual({ from: '2026-11-01', to: '2026-11-21' });
  });
  it('then month: YYYY-MM, or the most recent such month that has begun', () => {
    expect(p({ month: { year: 2024, month: 2 }, days: 3 })).toEqual({ from: '2024-02-01', to: '2024-02-29' });
    expect(p({ month: { month: 12 } })).toEqual({ from: '2025-12-01', to: '2025-12-31' });
    expect(p({ month: { month: 11 } })).toEqual({ from: '2026-11-01', to: '2026-11-30' });
    expect(p({ month: { month: 2 } })).toEqual({ from: '2026-02-01', to: '2026-02-28' });
  });
  it('then days: the last N days including today', () => {
    expect(p({ days: 1 })).toEqual({ from: '2026-11-21', to: '2026-11-21' });
    expect(p({ days: 7 }, 'America/New_York')).toEqual({ from: '2026-11-14', to: '2026-11-20' });
  });
  it('refuses a stop before the start and a period over the maximum', () => {
    expect(apiError(() => p({ startDate: '2026-02-02', stopDate: '2026-02-01' }))).toEqual({
      code: 406,
      status: 400,
      message: 'Invalid param stop_date: is before start_date',
    });
    expect(apiError(() => p({ startDate: '2020-01-01', stopDate: '2026-01-01' })).message).toBe(
      'Invalid param start_date: period longer than 731 days',
    );
  });
});

describe('parameter coercion (contract §2.1)', () => {
  it('treats false, "false", "" and null as not given', () => {
    for (const v of [false, 'false', '', null, undefined]) expect(given(v)).toBe(false);
    for (const v of [0, '0', 'x', true]) expect(given(v)).toBe(true);
  });
  it('reads ids from numbers and numeric strings; 407 when missing, 406 when malformed', () => {
    expect(requiredId({ list_id: '42' }, 'list_id')).toBe(42);
    expect(requiredId({ list_id: 42 }, 'list_id')).toBe(42);
    expect(apiError(() => requiredId({ list_id: '' }, 'list_id'))).toEqual({
      code: 407,
      status: 400,
      message: 'Missing required param list_id',
    });
    expect(apiError(() => requiredId({ list_id: '4.2' }, 'list_id')).message).toBe(
      'Invalid param list_id: must be a positive integer',
    );
    expect(apiError(() => requiredId({ list_id: -1 }, 'list_id')).code).toBe(406);
  });
  it('reads id lists in every encoding', () => {
    const ids = (v: unknown) => optionalIdList({ w: v }, 'w', 1000);
    expect(ids([1, '2'])).toEqual([1, 2]);
    expect(ids('[1,2]')).toEqual([1, 2]);
    expect(ids('1,2, 3')).toEqual([1, 2, 3]);
    expect(ids(7)).toEqual([7]);
    expect(ids(false)).toBeUndefined();
    expect(ids([])).toBeUndefined();
    expect(parseForm('w[]=1&w[]=2&list_id=5')).toEqual({ w: ['1', '2'], list_id: '5' });
    expect(apiError(() => ids('1,x')).message).toBe('Invalid param w: "x" is not a positive integer');
    expect(apiError(() => ids(Array.from({ length: 1001 }, (_, i) => i + 1))).message).toBe(
      'Invalid param w: at most 1000 ids',
    );
  });
  it('reads dates and months', () => {
    expect(optionalDate({ d: '2026-02-28 23:59:59' }, 'd')).toBe('2026-02-28');
    expect(apiError(() => optionalDate({ d: '2026-02-30' }, 'd')).code).toBe(406);
    expect(apiError(() => optionalDate({ d: '2026-02-01T00:00:00' }, 'd')).code).toBe(406);
    expect(optionalMonth({ m: '2026-05' }, 'm')).toEqual({ year: 2026, month: 5 });
    expect(optionalMonth({ m: '5' }, 'm')).toEqual({ month: 5 });
    expect(apiError(() => optionalMonth({ m: 13 }, 'm')).code).toBe(406);
  });
  it('parses JSON and form bodies; the body wins over the query string', () => {
    expect(parseBody(Buffer.from('{"list_id":1}'), 'application/json')).toEqual({ list_id: 1 });
    expect(parseBody(Buffer.from('list_id=1&p[k]=v'), 'application/x-www-form-urlencoded')).toEqual({
      list_id: '1',
      p: { k: 'v' },
    });
    expect(apiError(() => parseBody(Buffer.from('{oops'), 'application/json')).code).toBe(406);
    expect(mergeParams({ list_id: '1', days: '3' }, { list_id: 2 })).toEqual({ list_id: 2, days: '3' });
  });
});

describe('logging', () => {
  it('never keeps the api key of a request path', () => {
    expect(redactApiKey('/api/1.2/rest/7/s3cr3t/automation.stats.json?list_id=1')).toBe(
      '/api/1.2/rest/7/[redacted]/automation.stats.json?list_id=1',
    );
  });
});
