import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  optionalDate,
  optionalId,
  optionalIdList,
  optionalIntInRange,
  optionalMonth,
  requiredId,
} from '../../query-api/api12/params.js';
import { renderParams, statsParams } from '../../query-api/openapi/schemas.js';

/**
 * The OpenAPI document describes parameters with zod schemas of their own (query-api/openapi/schemas.ts),
 * beside the validators that coerce what PHP clients send (api12/params.ts). They must agree: every value
 * a validator takes is documented as valid, and what the schema documents as a wrong shape is refused.
 */
const accepts = (check: () => unknown) => {
  try {
    check();
    return true;
  } catch {
    return false;
  }
};

type Case = [name: string, schema: z.ZodType, validate: (v: unknown) => unknown, values: unknown[]];

const stats = statsParams.shape;
const cases: Case[] = [
  [
    'list_id',
    stats.list_id,
    (v) => requiredId({ list_id: v }, 'list_id'),
    [1, '42', ' 7 ', 9007199254740991, 0, -1, 1.5, 'abc', '1e3', [1], {}],
  ],
  [
    'trigger_id',
    stats.trigger_id,
    (v) => optionalId({ trigger_id: v }, 'trigger_id'),
    [3, '3', false, 'false', '', null, -3, 'x', 2.5],
  ],
  [
    'workflow_ids',
    stats.workflow_ids,
    (v) => optionalIdList({ workflow_ids: v }, 'workflow_ids', 1000),
    [
      [1, 2],
      ['1', '2'],
      '1,2, 3',
      '[1,2]',
      false,
      '',
      null,
      [0],
      ['x'],
      '[1,',
      'a,b',
      Array.from({ length: 1001 }, (_, i) => i + 1),
    ],
  ],
  [
    'start_date',
    stats.start_date,
    (v) => optionalDate({ start_date: v }, 'start_date'),
    [
      '2026-11-02',
      '2026-11-02 10:15:00',
      '2026-11-02T10:15:00+0200',
      '2026-11-02T10:15:00Z',
      { date: '2026-11-02 10:15:00.000000', timezone_type: 3, timezone: 'UTC' },
      false,
      null,
      5,
      [],
    ],
  ],
  [
    'days',
    stats.days,
    (v) => optionalIntInRange({ days: v }, 'days', 1, 731),
    [7, '30', ' 30 ', false, '0', 0, -1, 'x', 1.5],
  ],
  [
    'month',
    stats.month,
    (v) => optionalMonth({ month: v }, 'month'),
    [1, 12, '3', ' 3 ', ' 2026-02 ', '2026-02', false, '0', 13, '2026-13', 'x', -1],
  ],
];

describe('documented parameter schemas agree with the validators', () => {
  it.each(cases)('%s', (_name, schema, validate, values) => {
    for (const v of values) {
      const valid = accepts(() => validate(v));
      const documented = schema.safeParse(v).success;
      // A value the service takes is never documented as invalid.
      if (valid) expect(documented, `${JSON.stringify(v)} is taken but not documented`).toBe(true);
      // A value of a documented wrong shape (not a number/string/array/object the docs allow) is refused.
      if (!documented) expect(valid, `${JSON.stringify(v)} is documented as invalid but taken`).toBe(false);
    }
  });

  it('render: template_id and account_id are the documented opaque strings; the engine is handlebars', () => {
    const r = renderParams.shape;
    expect(r.template_id.safeParse('order-1.v2:x_y').success).toBe(true);
    expect(r.template_id.safeParse('a b').success).toBe(false);
    expect(r.template_id.safeParse('x'.repeat(129)).success).toBe(false);
    expect(r.account_id.safeParse(false).success).toBe(true);
    expect(r.template_engine.safeParse('handlebars').success).toBe(true);
    expect(r.template_engine.safeParse('mustache').success).toBe(false);
  });
});
