// Modes: embedded and server (listed in vitest.config.ts SERVER_SUITES): the period's distinct people
// and the grouped per-workflow answer read daily_sets' bitmaps in the engine, in both modes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../shared/dates.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * automation.statsTotals' distinct people over the period and automation.statsByWorkflow (docs/api.md),
 * checked against an independent count over the raw records this test sends. The records are drawn so
 * that subscribers repeat across days, workflows and triggers: a sum of per-day uniques (subscriber-days)
 * is then far above the people counted once.
 */
const USER = 5301;
const KEY = 'people-key-0123456789';
const LIST = 53;
const OTHER_LIST = 54;
const TZ = 'Europe/Bucharest';
const WORKFLOWS = [1, 2, 3, 4];
const TRIGGERS = [0, 7, 8];
const DAYS = 12;
const SUBSCRIBERS = 40;

interface Raw {
  type: string;
  workflow_id: number;
  trigger_id?: number;
  subscriber_id: number;
  date: string;
  value_ron?: string;
  value_eur?: string;
}

let svc: TestService;
const raws: Raw[] = [];
const dayBefore = (n: number) => localDate(Date.now() - n * 86_400_000, TZ);

/** A deterministic pseudo-random sequence (the same records every run). */
function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

async function call(operation: string, params: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/api/1.2/rest/${USER}/${KEY}/${operation}.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The independent count: distinct subscribers per type among the raw records that match. */
function expected(filter: { workflows?: number[]; trigger?: number; from: string; to: string }) {
  const match = raws.filter(
    (r) =>
      r.date >= filter.from &&
      r.date <= filter.to &&
      (filter.workflows === undefined || filter.workflows.includes(r.workflow_id)) &&
      (filter.trigger === undefined || r.trigger_id === filter.trigger),
  );
  const people = (type: string) =>
    new Set(match.filter((r) => r.type === type).map((r) => r.subscriber_id)).size;
  const count = (type: string) => match.filter((r) => r.type === type).length;
  const units = (f: 'value_ron' | 'value_eur') =>
    match.filter((r) => r.type === 'purchase').reduce((s, r) => s + Math.round(Number(r[f]) * 10_000), 0);
  return {
    recipients: people('send'),
    openers: people('open'),
    clickers: people('click'),
    buyers: people('purchase'),
    sends: count('send'),
    opens: count('open'),
    clicks: count('click'),
    purchases: count('purchase'),
    ron: units('value_ron'),
    eur: units('value_eur'),
  };
}

/** Units of 10^-4 ÷ n, in cents half away from zero, as a 2-decimal number (0 when n is 0). */
const perCents = (units: number, n: number) =>
  n === 0 ? 0 : Math.floor((2 * units + 100 * n) / (200 * n)) / 100;
const pct = (part: number, whole: number) =>
  whole === 0 ? 0 : Math.floor((2 * part * 10_000 + whole) / (2 * whole)) / 100;

beforeAll(async () => {
  svc = await startTestService();
  const rand = rng(53);
  const records: unknown[] = [];
  let n = 0;
  for (let d = 1; d <= DAYS; d++) {
    const date = dayBefore(d);
    for (let i = 0; i < 60; i++) {
      const workflow_id = WORKFLOWS[Math.floor(rand() * WORKFLOWS.length)]!;
      const trigger = TRIGGERS[Math.floor(rand() * TRIGGERS.length)]!;
      const subscriber_id = 1 + Math.floor(rand() * SUBSCRIBERS);
      const base = { workflow_id, subscriber_id, date, ...(trigger ? { trigger_id: trigger } : {}) };
      const kinds: Raw[] = [{ ...base, type: 'send' }];
      if (rand() < 0.5) kinds.push({ ...base, type: 'open' });
      if (rand() < 0.25) kinds.push({ ...base, type: 'click' });
      if (rand() < 0.12) {
        const ron = (Math.floor(rand() * 1_000_000) / 10_000).toFixed(4);
        kinds.push({ ...base, type: 'purchase', value_ron: ron, value_eur: (Number(ron) / 5).toFixed(4) });
      }
      for (const k of kinds) {
        raws.push(k);
        const { date: day, ...rest } = k;
        records.push({
          ...rest,
          event_id: `p-${n++}`,
          list_id: LIST,
          timestamp: Date.parse(`${day}T09:00:00Z`) + i * 1000,
          ...(k.type === 'purchase' ? { order_id: `o-${n}` } : {}),
        });
      }
    }
  }
  // Another list's records of the same subscribers and workflows: never counted here.
  records.push({
    type: 'send',
    event_id: 'other-1',
    list_id: OTHER_LIST,
    workflow_id: 1,
    subscriber_id: 999,
    timestamp: Date.parse(`${dayBefore(2)}T09:00:00Z`),
  });
  const res = await svc.ingest([
    ...tenant({
      userId: USER,
      apiKey: KEY,
      lists: [
        { list_id: LIST, timezone: TZ },
        { list_id: OTHER_LIST, timezone: TZ },
      ],
    }),
    { type: 'workflow', workflow_id: 1, list_id: LIST, name: 'Welcome' },
    { type: 'workflow', workflow_id: 2, list_id: LIST, name: 'Abandoned cart' },
    ...records,
  ]);
  expect(res.status).toBe(200);
  expect(res.body.rejected).toEqual([]);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

const SHAPES: {
  name: string;
  params: Record<string, unknown>;
  filter: { workflows?: number[]; trigger?: number };
}[] = [
  { name: 'all workflows', params: {}, filter: {} },
  { name: 'one workflow', params: { workflow_ids: [2] }, filter: { workflows: [2] } },
  { name: 'a workflow subset', params: { workflow_ids: [1, 3] }, filter: { workflows: [1, 3] } },
  { name: 'a trigger', params: { trigger_id: 7 }, filter: { trigger: 7 } },
  {
    name: 'a subset with a trigger',
    params: { workflow_ids: [2, 4], trigger_id: 8 },
    filter: { workflows: [2, 4], trigger: 8 },
  },
];

describe('automation.statsTotals: distinct people over the period', () => {
  it('the data makes the point: per-day uniques add up to far more than the people', async () => {
    const days = await call('automation.stats', { list_id: LIST, days: 30 });
    const subscriberDays = days.body.reduce((s: number, r: any) => s + r.sends_unique, 0);
    const { recipients } = expected({ from: dayBefore(29), to: dayBefore(0) });
    expect(recipients).toBeLessThanOrEqual(SUBSCRIBERS);
    expect(subscriberDays).toBeGreaterThan(5 * recipients);
  });

  for (const shape of SHAPES) {
    it(`${shape.name}: recipients, openers, clickers, buyers, revenue per recipient and conversion equal an independent count`, async () => {
      for (const period of [
        { from: dayBefore(29), to: dayBefore(0), params: { days: 30 } },
        {
          from: dayBefore(7),
          to: dayBefore(3),
          params: { start_date: dayBefore(7), stop_date: dayBefore(3) },
        },
      ]) {
        const { status, body } = await call('automation.statsTotals', {
          list_id: LIST,
          ...shape.params,
          ...period.params,
        });
        expect(status).toBe(200);
        const e = expected({ ...shape.filter, from: period.from, to: period.to });
        expect(e.recipients).toBeGreaterThan(0);
        expect({
          recipients: body.recipients,
          openers: body.openers,
          clickers: body.clickers,
          buyers: body.buyers,
        }).toEqual({ recipients: e.recipients, openers: e.openers, clickers: e.clickers, buyers: e.buyers });
        expect(body.revenue_per_recipient_ron).toBe(perCents(e.ron, e.recipients));
        expect(body.revenue_per_recipient_eur).toBe(perCents(e.eur, e.recipients));
        expect(body.conversion_rate_percent).toBe(pct(e.buyers, e.recipients));
        expect(body.opens_unique_percent).toBe(pct(e.openers, e.recipients));
        expect(body.clicks_unique_percent).toBe(pct(e.clickers, e.recipients));
        expect(Array.isArray(body.alerts)).toBe(true);
      }
    });
  }

  it('a period without records: zeros, no division by zero', async () => {
    const { body } = await call('automation.statsTotals', {
      list_id: LIST,
      start_date: '2020-01-01',
      stop_date: '2020-01-31',
    });
    expect(body).toMatchObject({
      recipients: 0,
      openers: 0,
      clickers: 0,
      buyers: 0,
      revenue_per_recipient_ron: 0,
      revenue_per_recipient_eur: 0,
      conversion_rate_percent: 0,
    });
  });
});

describe('automation.statsByWorkflow', () => {
  for (const shape of SHAPES.filter((s) => s.name !== 'one workflow')) {
    it(`${shape.name}: one row per workflow with activity, each equal to an independent count and to statsTotals of that workflow alone`, async () => {
      const params = { list_id: LIST, ...shape.params, days: 30 };
      const { status, body } = await call('automation.statsByWorkflow', params);
      expect(status).toBe(200);
      const workflows = shape.filter.workflows ?? WORKFLOWS;
      const from = dayBefore(29);
      const to = dayBefore(0);
      const active = workflows.filter(
        (w) => expected({ ...shape.filter, workflows: [w], from, to }).sends > 0,
      );
      expect(body.map((r: any) => r.workflow_id)).toEqual(active.map(String));
      for (const row of body) {
        const w = Number(row.workflow_id);
        const e = expected({ ...shape.filter, workflows: [w], from, to });
        expect(row).toEqual({
          workflow_id: String(w),
          workflow_name: w === 1 ? 'Welcome' : w === 2 ? 'Abandoned cart' : null,
          sends_total: e.sends,
          opens_total: e.opens,
          clicks_total: e.clicks,
          recipients: e.recipients,
          openers: e.openers,
          clickers: e.clickers,
          buyers: e.buyers,
          purchase_count: e.purchases,
          purchases_value_ron: perCents(e.ron, 1),
          purchases_value_eur: perCents(e.eur, 1),
          opens_unique_percent: pct(e.openers, e.recipients),
          clicks_unique_percent: pct(e.clickers, e.recipients),
        });
        // The same figures as the operations answer for that workflow alone.
        const single = { ...params, workflow_ids: [w] };
        const totals = (await call('automation.statsTotals', single)).body;
        const days = (await call('automation.stats', single)).body;
        const sum = (f: string) => days.reduce((s: number, d: any) => s + d[f], 0);
        expect({
          recipients: totals.recipients,
          openers: totals.openers,
          clickers: totals.clickers,
          buyers: totals.buyers,
          purchase_count: totals.purchase_count,
          purchases_value_ron: totals.purchases_value_ron,
          purchases_value_eur: totals.purchases_value_eur,
          opens_unique_percent: totals.opens_unique_percent,
          clicks_unique_percent: totals.clicks_unique_percent,
          sends_total: sum('sends_total'),
          opens_total: sum('opens_total'),
          clicks_total: sum('clicks_total'),
        }).toEqual({
          recipients: row.recipients,
          openers: row.openers,
          clickers: row.clickers,
          buyers: row.buyers,
          purchase_count: row.purchase_count,
          purchases_value_ron: row.purchases_value_ron,
          purchases_value_eur: row.purchases_value_eur,
          opens_unique_percent: row.opens_unique_percent,
          clicks_unique_percent: row.clicks_unique_percent,
          sends_total: row.sends_total,
          opens_total: row.opens_total,
          clicks_total: row.clicks_total,
        });
      }
    });
  }

  it('workflow ids not in the list match nothing; errors as automation.stats', async () => {
    expect(
      (await call('automation.statsByWorkflow', { list_id: LIST, workflow_ids: [99], days: 30 })).body,
    ).toEqual([]);
    const other = await call('automation.statsByWorkflow', { list_id: OTHER_LIST, days: 30 });
    expect(other.body.map((r: any) => r.recipients)).toEqual([1]);
    expect((await call('automation.statsByWorkflow', {})).body).toMatchObject({ err: true, code: 407 });
    const denied = await call('automation.statsByWorkflow', { list_id: 999, days: 30 });
    expect(denied).toMatchObject({ status: 403, body: { code: 101 } });
  });

  it('served at the REST path by GET with a query string, and in /openapi.json', async () => {
    const res = await fetch(
      `${svc.url}/api/1.2/rest/${USER}/${KEY}/automation.statsByWorkflow.json?list_id=${LIST}&days=30`,
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBeGreaterThan(0);
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as any;
    expect(doc.paths['/api/1.2/rest/{user_id}/{api_key}/automation.statsByWorkflow.json']).toBeDefined();
  });
});
