// Modes: embedded and server (listed in vitest.config.ts SERVER_SUITES): the period totals read the same
// per-day rows as automation.stats, from the engine and from the rows held in memory.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../query-api/openapi/document.js';
import { localDate } from '../../shared/dates.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * automation.statsTotals (docs/api.md): the period's money summed exactly over the days and rounded once.
 * The data is chosen so that rounding each day first gives another total: every day of ten, workflow 1
 * takes 1.0050 RON / 0.2010 EUR and workflow 2 (trigger 7) 2.0000 RON / 0.4000 EUR, so a day's
 * 3.0050 RON is 3.01 in the per-day answer (ten days: 30.10) where the period holds 30.05 RON; its
 * 0.6010 EUR is 0.60 (6.00) where the period holds 6.01 EUR.
 */
const USER = 5101;
const KEY = 'totals-key-0123456789';
const LIST = 51;
const OTHER_LIST = 52;
const DAYS = 10;
const TZ = 'Europe/Bucharest';

let svc: TestService;
let today: string;

const dayBefore = (n: number) => localDate(Date.now() - n * 86_400_000, TZ);
const noonOf = (date: string) => Date.parse(`${date}T10:00:00Z`);

/** Decimal(38,4) units → cents, half away from zero (non-negative), as the contract rounds. */
const centsOf = (units: number) => Math.floor((units + 50) / 100);
const toNumber = (cents: number) => cents / 100;

async function call(operation: string, params: Record<string, unknown>, user = USER, key = KEY) {
  const res = await fetch(`${svc.url}/api/1.2/rest/${user}/${key}/${operation}.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  svc = await startTestService();
  today = localDate(Date.now(), TZ);
  const purchases = Array.from({ length: DAYS }, (_, i) => {
    const date = dayBefore(i + 1);
    const base = { type: 'purchase', list_id: LIST, subscriber_id: i + 1, timestamp: noonOf(date) };
    return [
      {
        ...base,
        event_id: `t1-${i}`,
        workflow_id: 1,
        order_id: `o1-${i}`,
        value_ron: '1.0050',
        value_eur: '0.2010',
      },
      {
        ...base,
        event_id: `t2-${i}`,
        workflow_id: 2,
        trigger_id: 7,
        order_id: `o2-${i}`,
        value_ron: '2.0000',
        value_eur: '0.4000',
      },
    ];
  }).flat();
  const res = await svc.ingest([
    ...tenant({
      userId: USER,
      apiKey: KEY,
      lists: [
        { list_id: LIST, timezone: TZ },
        { list_id: OTHER_LIST, timezone: TZ, currency: 'EUR' },
      ],
    }),
    ...purchases,
  ]);
  expect(res.status).toBe(200);
  expect(res.body.rejected).toEqual([]);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

describe('automation.statsTotals', () => {
  it('the data makes the point: the per-day answer’s amounts add up to other cents than the period holds', async () => {
    const { status, body } = await call('automation.stats', { list_id: LIST, days: 30 });
    expect(status).toBe(200);
    expect(body).toHaveLength(DAYS);
    const sumCents = (f: string) => body.reduce((s: number, r: any) => s + Math.round(r[f] * 100), 0);
    expect(sumCents('purchases_value_ron')).toBe(DAYS * 301);
    expect(sumCents('purchases_value_eur')).toBe(DAYS * 60);
  });

  it('all workflows: the exact sum rounded once, AOV = exact revenue ÷ purchases, the period resolved as stats resolves it', async () => {
    const { status, body } = await call('automation.statsTotals', { list_id: LIST, days: 30 });
    expect(status).toBe(200);
    const ron = DAYS * (10_050 + 20_000);
    const eur = DAYS * (2_010 + 4_000);
    const purchases = 2 * DAYS;
    expect(body).toEqual({
      list_id: String(LIST),
      currency: 'RON',
      start_date: localDate(Date.now() - 29 * 86_400_000, TZ),
      stop_date: today,
      days: DAYS,
      purchase_count: purchases,
      purchases_value_ron: toNumber(centsOf(ron)),
      purchases_value_eur: toNumber(centsOf(eur)),
      formatted_revenue_ron: '30,05',
      formatted_revenue_eur: '6,01',
      purchases_value_aov_ron: toNumber(centsOf(ron / purchases)),
      formatted_value_aov_ron: '1,50',
      purchases_value_aov_eur: toNumber(centsOf(eur / purchases)),
      formatted_value_aov_eur: '0,30',
      // Purchases without sends: ten buyers, no recipients (the people fields: marketer-people.test.ts).
      recipients: 0,
      openers: 0,
      clickers: 0,
      buyers: DAYS,
      revenue_per_recipient_ron: 0,
      revenue_per_recipient_eur: 0,
      conversion_rate_percent: 0,
      opens_unique_percent: 0,
      clicks_unique_percent: 0,
      alerts: [],
    });
    expect(body.purchases_value_ron).toBe(30.05);
    expect(body.purchases_value_eur).toBe(6.01);
  });

  it('one workflow, a workflow subset and a trigger: each its own exact sum', async () => {
    const one = await call('automation.statsTotals', { list_id: LIST, workflow_ids: [1], days: 30 });
    expect(one.body.purchases_value_ron).toBe(toNumber(centsOf(DAYS * 10_050)));
    expect(one.body.formatted_revenue_ron).toBe('10,05');
    expect(one.body.purchases_value_eur).toBe(toNumber(centsOf(DAYS * 2_010)));
    const subset = await call('automation.statsTotals', { list_id: LIST, workflow_ids: [1, 2], days: 30 });
    expect(subset.body.formatted_revenue_ron).toBe('30,05');
    expect(subset.body.formatted_revenue_eur).toBe('6,01');
    const trigger = await call('automation.statsTotals', { list_id: LIST, trigger_id: 7, days: 30 });
    expect(trigger.body.formatted_revenue_ron).toBe('20,00');
    expect(trigger.body.purchase_count).toBe(DAYS);
    // A period of five of the ten days: 5 × 3.0050.
    const part = await call('automation.statsTotals', {
      list_id: LIST,
      start_date: dayBefore(5),
      stop_date: dayBefore(1),
    });
    expect(part.body.formatted_revenue_ron).toBe('15,03');
    expect(part.body.days).toBe(5);
  });

  it('the same totals from the rows held in memory, and from the answer cache', async () => {
    // The list's day rows are read into memory by the asks above; then a new period is answered from them.
    await svc.dayRows?.settled();
    const query = { listId: LIST, workflowIds: null, triggerId: null, from: dayBefore(40), to: today };
    if (svc.dayRows) expect(await svc.dayRows.rows(query), 'the rows are held').toBeDefined();
    const held = await call('automation.statsTotals', { list_id: LIST, days: 41 });
    expect(held.body.formatted_revenue_ron).toBe('30,05');
    expect(held.body.formatted_revenue_eur).toBe('6,01');
    const again = await call('automation.statsTotals', { list_id: LIST, days: 41 });
    expect(again.body).toEqual(held.body);
    // The stats answer of the same query is not the totals answer (the cache keeps them apart).
    const stats = await call('automation.stats', { list_id: LIST, days: 41 });
    expect(Array.isArray(stats.body)).toBe(true);
  });

  it('the answer is what /openapi.json documents', async () => {
    const doc = openApiDocument('test') as any;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const path = doc.paths['/api/1.2/rest/{user_id}/{api_key}/automation.statsTotals.json'];
    const validate = ajv.compile({
      ...path.post.responses['200'].content['application/json'].schema,
      components: doc.components,
    });
    const { body } = await call('automation.statsTotals', { list_id: LIST, days: 30 });
    expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
    expect(validate({ ...body, extra: 1 }), 'no field beyond the documented ones').toBe(false);
  });

  it('a list without activity: zeros in the list’s currency', async () => {
    const { status, body } = await call('automation.statsTotals', { list_id: OTHER_LIST, month: 1 });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      currency: 'EUR',
      days: 0,
      purchase_count: 0,
      purchases_value_ron: 0,
      formatted_revenue_eur: '0,00',
      purchases_value_aov_eur: 0,
    });
  });

  it('the checks and errors of automation.stats: 407, 406, 101', async () => {
    expect((await call('automation.statsTotals', {})).body).toEqual({
      err: true,
      code: 407,
      message: 'Missing required param list_id',
    });
    const bad = await call('automation.statsTotals', { list_id: LIST, days: 99999 });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe(406);
    expect(bad.body.message).toMatch(/^Invalid param days/);
    const reversed = await call('automation.statsTotals', {
      list_id: LIST,
      start_date: today,
      stop_date: dayBefore(3),
    });
    expect(reversed.body.message).toBe('Invalid param stop_date: is before start_date');
    const stranger = await call('automation.statsTotals', { list_id: LIST }, USER, 'wrong-key-000000');
    expect(stranger.status).toBe(403);
    expect(stranger.body.code).toBe(101);
    const noGrant = await call('automation.statsTotals', { list_id: 999 });
    expect(noGrant.body).toEqual({ err: true, code: 101, message: 'Not allowed for list_id = 999' });
  });

  it('by position, as the PHP client sends it (the parameter table of automation.stats)', async () => {
    const { body } = await call('automation.statsTotals', { __0__: LIST, __1__: [1], __5__: 30 });
    expect(body.formatted_revenue_ron).toBe('10,05');
  });
});
