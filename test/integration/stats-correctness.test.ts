// Modes: embedded and server — answers against an independent model, and the day rows held in memory in each mode
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { startTestService, tenant, type TestService } from '../support/service.js';
import { rng } from '../support/rng.js';
import { isCatalogPoll, isChangePoll } from '../support/statements.js';

/**
 * A generated dataset around the autumn DST changes of two zones (Bucharest: 2026-10-25, New York:
 * 2026-11-01), checked field by field against an independent model of the answer.
 */
const USER = 7;
const KEY = 'correctness-key';
const LISTS = [
  { list_id: 10, timezone: 'Europe/Bucharest', currency: 'RON' },
  { list_id: 20, timezone: 'America/New_York', currency: 'EUR' },
];
const WORKFLOWS: Record<number, number[]> = { 10: [1, 2, 3, 4], 20: [5, 6] };
const FROM = '2026-10-18';
const TO = '2026-11-08';
const TYPES = [
  'send',
  'open',
  'click',
  'purchase',
  'bounce',
  'unsubscribe',
  'spam',
  'event',
  'condition',
  'action',
];
/** Values whose float sums go wrong (0.1 + 0.2) and 4-decimal values that round at the half. */
const MONEY = ['0.1', '0.2', 0.3, '1.0005', '2.675', 0.0049, '19.9999', '1234.5', 1000000.01, '0.0001', '7'];

/** One instant, in one of the accepted encodings (RFC 3339 in UTC or with an offset, epoch ms). */
function encode(ms: number, pick: number): string | number {
  if (pick < 0.33) return ms;
  if (pick < 0.66) return new Date(ms).toISOString();
  const offsetMin = pick < 0.83 ? 120 : -300;
  const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

function generate(): { wire: unknown[]; model: RawActivity[] } {
  const rnd = rng(42);
  const wire: unknown[] = [];
  const model: RawActivity[] = [];
  const start = Date.parse('2026-10-17T00:00:00Z');
  const span = Date.parse('2026-11-09T00:00:00Z') - start;
  // Instants right around local midnight, on both sides of each DST change.
  const edges = [
    '2026-10-24T20:59:59.999Z', // Bucharest 23:59:59 (+03)
    '2026-10-24T21:00:00Z', // Bucharest 00:00 on the 25th (+03)
    '2026-10-25T21:59:59Z', // Bucharest 23:59:59 on the 25th (+02 after the change)
    '2026-10-25T22:00:00Z', // Bucharest 00:00 on the 26th
    '2026-11-01T03:59:59Z', // New York 23:59:59 on Oct 31 (-04)
    '2026-11-01T04:00:00Z', // New York 00:00 on Nov 1
    '2026-11-02T04:59:59Z', // New York 23:59:59 on Nov 1 (-05 after the change)
    '2026-11-02T05:00:00Z', // New York 00:00 on Nov 2
  ].map((s) => Date.parse(s));
  for (let i = 0; i < 3000; i++) {
    const listId = rnd() < 0.6 ? 10 : 20;
    const workflows = WORKFLOWS[listId]!;
    const type = TYPES[Math.floor(rnd() * TYPES.length)]!;
    const at = i < edges.length * 4 ? edges[i % edges.length]! : start + Math.floor(rnd() * span);
    const r: RawActivity = {
      type,
      event_id: `e-${i}`,
      list_id: listId,
      workflow_id: workflows[Math.floor(rnd() * workflows.length)]!,
      subscriber_id: 1 + Math.floor(rnd() * 40),
      at,
    };
    if (rnd() < 0.7) r.trigger_id = rnd() < 0.5 ? 100 : 101;
    const w: Record<string, unknown> = { ...r, timestamp: encode(at, rnd()) };
    delete w.at;
    if (['open', 'click', 'purchase', 'bounce', 'unsubscribe', 'spam'].includes(type) && rnd() < 0.6) {
      // Reactions may come days after the send: they count on the send's date.
      r.sentAt = at - Math.floor(rnd() * 3 * 86_400_000);
      w.sent_at = encode(r.sentAt, rnd());
    }
    if (type === 'purchase') {
      const ron = MONEY[Math.floor(rnd() * MONEY.length)]!;
      const eur = MONEY[Math.floor(rnd() * MONEY.length)]!;
      r.value_ron = String(ron);
      r.value_eur = String(eur);
      Object.assign(w, { order_id: `o-${i}`, value_ron: ron, value_eur: eur });
    }
    if (['event', 'condition', 'action'].includes(type)) {
      r.status = rnd() < 0.7 ? 'ok' : 'failed';
      w.status = r.status;
    }
    wire.push(w);
    model.push(r);
  }
  return { wire, model };
}

describe('automation.stats against an independent model', () => {
  let svc: TestService;
  const { wire, model } = generate();

  beforeAll(async () => {
    svc = await startTestService();
    const setup = await svc.ingest([
      ...tenant({ userId: USER, apiKey: KEY, lists: LISTS }),
      ...Object.entries(WORKFLOWS).flatMap(([list, ws]) =>
        ws.map((w) => ({ type: 'workflow', workflow_id: w, list_id: Number(list) })),
      ),
    ]);
    expect(setup.body.rejected).toEqual([]);
    // Three separate calls; the last one re-delivers a tenth of the events with altered content.
    const first = await svc.ingest(wire.slice(0, 1500));
    const second = await svc.ingest(wire.slice(1500));
    const redelivered = wire
      .filter((_, i) => i % 10 === 3)
      .map((w) => ({ ...(w as object), subscriber_id: 999, workflow_id: 1, list_id: 10 }));
    const third = await svc.ingest(redelivered);
    for (const r of [first, second, third]) expect(r.body.rejected).toEqual([]);
  });
  afterAll(() => svc?.stop());

  const stats = async (listId: number, extra = '') =>
    (
      await svc.call(
        `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${listId}&start_date=${FROM}&stop_date=${TO}${extra}`,
      )
    ).body;

  const cases: { name: string; listId: number; extra: string; workflowIds?: number[]; triggerId?: number }[] =
    [
      { name: 'all workflows, Bucharest', listId: 10, extra: '' },
      { name: 'all workflows, New York', listId: 20, extra: '' },
      { name: 'one workflow', listId: 10, extra: '&workflow_ids=2', workflowIds: [2] },
      {
        name: 'one workflow with a trigger',
        listId: 10,
        extra: '&workflow_ids=3&trigger_id=100',
        workflowIds: [3],
        triggerId: 100,
      },
      { name: 'a trigger across workflows', listId: 10, extra: '&trigger_id=101', triggerId: 101 },
      { name: 'a workflow subset', listId: 10, extra: '&workflow_ids=1,3,4', workflowIds: [1, 3, 4] },
      {
        name: 'a subset with a trigger',
        listId: 20,
        extra: '&workflow_ids=5,6&trigger_id=100',
        workflowIds: [5, 6],
        triggerId: 100,
      },
    ];

  /** The model's answer for a case, in its list's zone and currency. */
  const expectedFor = (c: (typeof cases)[number]) => {
    const list = LISTS.find((l) => l.list_id === c.listId)!;
    return expectedStats(model, {
      listId: c.listId,
      tz: list.timezone,
      currency: list.currency,
      from: FROM,
      to: TO,
      workflowIds: c.workflowIds,
      triggerId: c.triggerId,
    });
  };

  for (const c of cases) {
    it(`matches the model: ${c.name}`, async () => {
      const expected = expectedFor(c);
      expect(expected.length).toBeGreaterThan(15);
      expect(await stats(c.listId, c.extra)).toEqual(expected);
    });
  }

  it('matches the model from memory too: every case answered from the day rows and subscriber sets held, without the engine', async () => {
    // The answer cache off: each call computes its answer. The first calls have the list's rows and then
    // its sets read (an all-workflow ask first, as a dashboard's), the last are answered from them.
    svc.statsCache.enabled = false;
    const reads: string[] = [];
    try {
      for (let round = 0; round < 2; round++) {
        for (const listId of [10, 20]) await stats(listId);
        await svc.dayRows!.settled();
        for (const c of cases) await stats(c.listId, c.extra);
        await svc.dayRows!.settled();
      }
      svc.db.faultInjector = async (what) => void reads.push(what);
      for (const c of cases) {
        const expected = expectedFor(c);
        expect(await stats(c.listId, c.extra), c.name).toEqual(expected);
        // A subset whose workflows are asked twice, and one with a workflow the list does not have.
        if (c.workflowIds && c.workflowIds.length > 1) {
          const ids = [...c.workflowIds, c.workflowIds[0]!, 999].join(',');
          const trigger = c.triggerId ? `&trigger_id=${c.triggerId}` : '';
          expect(await stats(c.listId, `&workflow_ids=${ids}${trigger}`), c.name).toEqual(expected);
        }
      }
      // Catalog reads (and its change poll), and server mode's change signal, are not stats reads.
      const statsReads = reads.filter(
        (s) => !/ FROM catalog\b/.test(s) && !isCatalogPoll(s) && !isChangePoll(s),
      );
      expect(statsReads.map((s) => s.replace(/\s+/g, ' ').slice(0, 200))).toEqual([]);
    } finally {
      svc.db.faultInjector = undefined;
      svc.statsCache.enabled = true;
    }
  });

  it('keeps every field of the seed, in order, and nothing else', async () => {
    const [first] = await stats(10);
    expect(Object.keys(first)).toEqual(
      Object.keys(expectedStats(model, { listId: 10, tz: 'UTC', currency: 'RON', from: FROM, to: TO })[0]!),
    );
  });

  it('re-dates a list when its time zone changes', async () => {
    const res = await svc.ingest([
      { type: 'list', list_id: 20, timezone: 'Asia/Tokyo', currency: 'EUR', version: 5 },
    ]);
    expect(res.body.rejected).toEqual([]);
    const expected = expectedStats(model, {
      listId: 20,
      tz: 'Asia/Tokyo',
      currency: 'EUR',
      from: FROM,
      to: TO,
    });
    expect(await stats(20)).toEqual(expected);
    expect(await stats(20, '&workflow_ids=5')).toEqual(
      expectedStats(model, {
        listId: 20,
        tz: 'Asia/Tokyo',
        currency: 'EUR',
        from: FROM,
        to: TO,
        workflowIds: [5],
      }),
    );
    // An older version arriving later changes nothing.
    await svc.ingest([
      { type: 'list', list_id: 20, timezone: 'America/New_York', currency: 'EUR', version: 1 },
    ]);
    expect(await stats(20)).toEqual(expected);
  });

  it("holds a list's (workflow, trigger) rows only once such a shape is asked, then answers it from memory", async () => {
    // A read of the list's rows the previous test started may still run (a server is slower than the
    // embedded engine): one read per list at a time, so it would stand in for the read asserted below.
    await svc.dayRows!.settled();
    // As after a write to the list: its held rows are read again at the next ask.
    svc.statsCache.bump([20]);
    const pair = {
      listId: 20,
      tz: 'Asia/Tokyo',
      currency: 'EUR',
      from: FROM,
      to: TO,
      workflowIds: [5],
      triggerId: 100,
    };
    svc.statsCache.enabled = false;
    const reads: string[] = [];
    svc.db.faultInjector = async (what) => void reads.push(what);
    try {
      await stats(20);
      await svc.dayRows!.settled();
      // The engine's answer and the held rows' read: daily_scopes only, no pair computed from the sets.
      const scopesReads = reads.filter(
        (s) => !/ FROM catalog\b/.test(s) && !isCatalogPoll(s) && !isChangePoll(s),
      );
      expect(scopesReads.filter((s) => /daily_scopes/.test(s))).toHaveLength(2);
      expect(scopesReads.filter((s) => /daily_sets/.test(s))).toEqual([]);
      reads.length = 0;
      expect(await stats(20, '&workflow_ids=5&trigger_id=100')).toEqual(expectedStats(model, pair));
      await svc.dayRows!.settled();
      // The engine answered (from the sets), and the list's pairs were read beside its held rows.
      expect(reads.filter((s) => /GROUP BY workflow_id, trigger_id, day/.test(s))).toHaveLength(1);
      reads.length = 0;
      expect(await stats(20, '&workflow_ids=5&trigger_id=100')).toEqual(expectedStats(model, pair));
      expect(await stats(20, '&workflow_ids=6&trigger_id=100')).toEqual(
        expectedStats(model, { ...pair, workflowIds: [6] }),
      );
      expect(
        reads.filter((s) => !/ FROM catalog\b/.test(s) && !isCatalogPoll(s) && !isChangePoll(s)),
      ).toEqual([]);
    } finally {
      svc.db.faultInjector = undefined;
      svc.statsCache.enabled = true;
    }
  });
});
