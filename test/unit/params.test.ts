import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors.js';
import { parseForm } from '../../query-api/api12/intake.js';
import {
  given,
  optionalDate,
  optionalId,
  optionalIdList,
  optionalIntInRange,
  optionalMonth,
  requiredId,
} from '../../query-api/api12/params.js';

/** Runs fn, which must throw an ApiError; returns what a client would see of it. */
function apiError(fn: () => unknown): { code: number; status: number; message: string; json: unknown } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError)
      return { code: err.code, status: err.status, message: err.message, json: err.toJSON() };
    throw err;
  }
  throw new Error('expected an ApiError, got a value');
}

/** The 406 of docs/api.md "Errors" for `name`: code, HTTP status and the `Invalid param <name>: <reason>` shape. */
function expectInvalid(fn: () => unknown, name: string): string {
  const e = apiError(fn);
  expect(e.code).toBe(406);
  expect(e.status).toBe(400);
  expect(e.message.startsWith(`Invalid param ${name}: `)).toBe(true);
  const reason = e.message.slice(`Invalid param ${name}: `.length);
  expect(reason.trim().length).toBeGreaterThan(0);
  expect(e.json).toEqual({ err: true, message: e.message, code: 406 });
  return reason;
}

const NOT_GIVEN = [undefined, null, false, 'false', ''];
const MAX_WORKFLOW_IDS = 1000;

describe('given: the "not given" values of docs/api.md "Parameters"', () => {
  it.each(NOT_GIVEN.map((v) => [v]))('%j is not given', (v) => {
    expect(given(v)).toBe(false);
  });
  it.each([[0], ['0'], [true], ['true'], [' '], [[]], [{}], ['abc'], [42]])('%j is given', (v) => {
    expect(given(v)).toBe(true);
  });
});

describe('requiredId / optionalId', () => {
  it('takes integers and numeric strings', () => {
    expect(requiredId({ list_id: 42 }, 'list_id')).toBe(42);
    expect(requiredId({ list_id: '42' }, 'list_id')).toBe(42);
    expect(optionalId({ trigger_id: '7' }, 'trigger_id')).toBe(7);
    expect(optionalId({ trigger_id: Number.MAX_SAFE_INTEGER }, 'trigger_id')).toBe(Number.MAX_SAFE_INTEGER);
  });
  it('an absent required id → 407 Missing required param list_id', () => {
    for (const params of [{}, { list_id: undefined }, { list_id: null }, { other: 1 }]) {
      const e = apiError(() => requiredId(params, 'list_id'));
      expect(e).toEqual({
        code: 407,
        status: 400,
        message: 'Missing required param list_id',
        json: { err: true, message: 'Missing required param list_id', code: 407 },
      });
    }
  });
  it('false, "false" and "" for list_id are read as absent too (407, not 406)', () => {
    for (const v of [false, 'false', '']) {
      expect(apiError(() => requiredId({ list_id: v }, 'list_id')).code).toBe(407);
    }
  });
  it.each([['abc'], [0], ['0'], [-3], ['-3'], [1.5], ['1.5'], ['1e3'], ['0x10'], [true], [[1]], [{}]])(
    'a malformed list_id %j → 406',
    (v) => {
      expectInvalid(() => requiredId({ list_id: v }, 'list_id'), 'list_id');
    },
  );
  it('an id beyond 2^53 - 1 cannot be held exactly and is refused', () => {
    expectInvalid(() => requiredId({ list_id: '9007199254740993' }, 'list_id'), 'list_id');
  });
  it('an optional id not given is undefined', () => {
    for (const v of NOT_GIVEN) expect(optionalId({ trigger_id: v }, 'trigger_id')).toBeUndefined();
    expect(optionalId({}, 'trigger_id')).toBeUndefined();
  });
  it('a malformed optional id → 406 naming it', () => {
    expectInvalid(() => optionalId({ trigger_id: 'x' }, 'trigger_id'), 'trigger_id');
    expectInvalid(() => optionalId({ trigger_id: 0 }, 'trigger_id'), 'trigger_id');
  });
});

describe('optionalIdList: every encoding of workflow_ids (docs/api.md "Parameters")', () => {
  const ids = (v: unknown) => optionalIdList({ workflow_ids: v }, 'workflow_ids', MAX_WORKFLOW_IDS);

  it('a JSON array of numbers', () => {
    expect(ids([1, 2, 3])).toEqual([1, 2, 3]);
  });
  it('a JSON array of numeric strings', () => {
    expect(ids(['4', '5'])).toEqual([4, 5]);
  });
  it('a JSON-encoded array in a string (PHP clients)', () => {
    expect(ids('[1,2]')).toEqual([1, 2]);
    expect(ids(' [ 10, "11" ] ')).toEqual([10, 11]);
  });
  it('a comma-separated string, spaces allowed', () => {
    expect(ids('1,2, 3')).toEqual([1, 2, 3]);
    expect(ids(' 7 ,8 ')).toEqual([7, 8]);
  });
  it('repeated form fields (as parseForm hands them over)', () => {
    expect(ids(parseForm('workflow_ids[]=1&workflow_ids[]=2').workflow_ids)).toEqual([1, 2]);
  });
  it('a single id, as a number or as a string', () => {
    expect(ids(5)).toEqual([5]);
    expect(ids('5')).toEqual([5]);
  });
  it('the same id twice counts once', () => {
    expect(ids('3,3,4')).toEqual([3, 4]);
  });
  it('not given → undefined (all workflows)', () => {
    for (const v of NOT_GIVEN) expect(ids(v)).toBeUndefined();
    expect(optionalIdList({}, 'workflow_ids', MAX_WORKFLOW_IDS)).toBeUndefined();
  });
  it('exactly 1,000 ids are accepted', () => {
    const list = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(ids(list)).toEqual(list);
    expect(ids(list.join(','))).toHaveLength(1000);
  });
  it('1,001 ids → 406, whatever the encoding', () => {
    const list = Array.from({ length: 1001 }, (_, i) => i + 1);
    expectInvalid(() => ids(list), 'workflow_ids');
    expectInvalid(() => ids(JSON.stringify(list)), 'workflow_ids');
    expectInvalid(() => ids(list.join(',')), 'workflow_ids');
    expectInvalid(() => ids(list.map(String)), 'workflow_ids');
  });
  it.each([['abc'], ['1,x,3'], [[1, 'x']], [[0]], ['[-1]'], [[1.5]], ['[1,2'], [{ a: 1 }], [[[1]]], [true]])(
    'a malformed list %j → 406',
    (v) => {
      expectInvalid(() => ids(v), 'workflow_ids');
    },
  );
  it('a deeply nested item → 406 naming its type, not a 500 (the item is not stringified)', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(expectInvalid(() => ids([deep]), 'workflow_ids')).toBe('an array is not a positive integer');
    // The same sent as JSON text in the param (JSON.parse copes with the depth).
    const text = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(expectInvalid(() => ids(`[${text}]`), 'workflow_ids')).toBe('an array is not a positive integer');
    expect(expectInvalid(() => ids([{ a: 1 }]), 'workflow_ids')).toBe('an object is not a positive integer');
    expect(expectInvalid(() => ids([true]), 'workflow_ids')).toBe('true is not a positive integer');
    // Scalars are still quoted, a long string only in part.
    expect(expectInvalid(() => ids('1,x,3'), 'workflow_ids')).toBe('"x" is not a positive integer');
    expect(expectInvalid(() => ids(['y'.repeat(500)]), 'workflow_ids')).toBe(
      `"${'y'.repeat(40)}…" (500 characters) is not a positive integer`,
    );
  });
});

describe('optionalDate', () => {
  const date = (v: unknown) => optionalDate({ start_date: v }, 'start_date');

  it('YYYY-MM-DD', () => {
    expect(date('2026-11-02')).toBe('2026-11-02');
    expect(date('2028-02-29')).toBe('2028-02-29');
  });
  it('YYYY-MM-DD HH:MM:SS keeps only the date', () => {
    expect(date('2026-11-02 23:59:59')).toBe('2026-11-02');
    expect(date('2026-11-02 00:00:00')).toBe('2026-11-02');
  });
  it('ISO 8601 with a T and an offset, as PHP (DateTime::ISO8601, ATOM) and JS write it: the date as written', () => {
    expect(date('2026-11-02T10:15:00+0200')).toBe('2026-11-02');
    expect(date('2025-10-20T00:00:00+0000')).toBe('2025-10-20');
    expect(date('2026-11-02T23:30:00-05:00')).toBe('2026-11-02'); // 04:30 UTC the next day: not converted
    expect(date('2026-11-02T00:15:00.000Z')).toBe('2026-11-02');
    expect(date('2026-11-02T00:15:00Z')).toBe('2026-11-02');
  });
  it('PHP json_encode of a DateTime: the `date` member, whatever the time zone', () => {
    expect(date({ date: '2026-11-02 10:15:00.000000', timezone_type: 3, timezone: 'UTC' })).toBe(
      '2026-11-02',
    );
    expect(date({ date: '2026-11-02 23:59:59.000000', timezone_type: 1, timezone: '+02:00' })).toBe(
      '2026-11-02',
    );
    // As form fields (qs gives strings) and JSON-encoded in a multipart field.
    expect(
      date({ date: '2026-11-02 10:15:00.000000', timezone_type: '3', timezone: 'Europe/Bucharest' }),
    ).toBe('2026-11-02');
    expect(date('{"date":"2026-11-02 10:15:00.000000","timezone_type":3,"timezone":"UTC"}')).toBe(
      '2026-11-02',
    );
  });
  it('not given → undefined', () => {
    for (const v of NOT_GIVEN) expect(date(v)).toBeUndefined();
  });
  it.each([
    ['2026-02-29T10:00:00+0000'],
    ['2026-11-02T10:15:00+2400'],
    ['2026-11-02T10:15+0200'],
    ['2026-11-02 10:15:00+0200'],
    [{ date: '2026-02-30 10:15:00.000000', timezone_type: 3, timezone: 'UTC' }],
    [{ date: '2026-11-02', timezone_type: 3, timezone: 'UTC' }],
    [{ timezone_type: 3, timezone: 'UTC' }],
    [{ date: 20261102 }],
    ['{"date":"2026-11-02 10:15:00.000000"'],
    [['2026-11-02']],
    ['2026-02-29'], // not a leap year
    ['2026-02-30'],
    ['2026-13-01'],
    ['2026-00-10'],
    ['2026-11-31'],
    ['2026-11-2'],
    ['26-11-02'],
    ['2026/11/02'],
    ['02.11.2026'],
    ['2026-11-02 24:00:00'],
    ['2026-11-02 10:60:00'],
    ['2026-11-02T10:15:00'],
    ['yesterday'],
    [20261102],
    [true],
  ])('%j → 406', (v) => {
    expectInvalid(() => date(v), 'start_date');
  });
  it('names the param it reads', () => {
    expectInvalid(() => optionalDate({ stop_date: 'x' }, 'stop_date'), 'stop_date');
  });
});

describe('optionalIntInRange (days)', () => {
  const days = (v: unknown, max = 731) => optionalIntInRange({ days: v }, 'days', 1, max);

  it('integers and numeric strings within range', () => {
    expect(days(1)).toBe(1);
    expect(days('7')).toBe(7);
    expect(days(731)).toBe(731);
    expect(days('731')).toBe(731);
  });
  it('not given → undefined', () => {
    for (const v of NOT_GIVEN) expect(days(v)).toBeUndefined();
  });
  it.each([[0], ['0'], [732], ['732'], [-1], ['-1'], [1.5], ['2.5'], ['seven'], [true]])('%j → 406', (v) => {
    expectInvalid(() => days(v), 'days');
  });
  it('the upper bound is the one passed (MAX_PERIOD_DAYS)', () => {
    expect(days(90, 90)).toBe(90);
    expectInvalid(() => days(91, 90), 'days');
  });
});

describe('optionalMonth', () => {
  const month = (v: unknown) => optionalMonth({ month: v }, 'month');

  it('a bare month number, as a number or a string', () => {
    expect(month(1)).toEqual({ month: 1 });
    expect(month('12')).toEqual({ month: 12 });
    expect(month('05')).toEqual({ month: 5 });
  });
  it('YYYY-MM', () => {
    expect(month('2026-05')).toEqual({ year: 2026, month: 5 });
    expect(month('2025-12')).toEqual({ year: 2025, month: 12 });
  });
  it('not given → undefined', () => {
    for (const v of NOT_GIVEN) expect(month(v)).toBeUndefined();
  });
  it('YYYY-MM for any four-digit year the dates accept', () => {
    expect(month('0999-05')).toEqual({ year: 999, month: 5 });
    expect(month('9999-12')).toEqual({ year: 9999, month: 12 });
  });
  it('years the dates refuse (0000-0099) are refused for the month too', () => {
    expectInvalid(() => optionalDate({ start_date: '0050-05-01' }, 'start_date'), 'start_date');
    expectInvalid(() => month('0050-05'), 'month');
    expectInvalid(() => month('0000-05'), 'month');
  });
  it.each([[0], ['0'], [13], ['13'], ['2026-13'], ['2026-00'], ['2026-5'], ['May'], [1.5], ['2026-05-01']])(
    '%j → 406',
    (v) => {
      expectInvalid(() => month(v), 'month');
    },
  );
});
