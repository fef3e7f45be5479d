// Modes: embedded — the held months are the same code in both modes (stats-correctness answers from held rows and sets in both)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { startTestService, tenant, type TestService } from '../support/service.js';
import { rng } from '../support/rng.js';
import { isCatalogPoll, isChangePoll } from '../support/statements.js';

/**
 * One list with four months of activity (June–September 2026, UTC). Workflow subsets are answered from
 * the subscriber sets of the months their days fall in, read at the first ask of each month
 * (docs/operations.md "Memory"): never the list's whole history, and exact against an independent model.
 */
const USER = 9;
const KEY = 'held-months-key';
const LIST = 30;
const WORKFLOWS = [1, 2, 3];
const TYPES = ['send', 'send', 'open', 'click', 'purchase', 'bounce'];

function generate(): { wire: unknown[]; model: RawActivity[] } {
  const rnd = rng(7);
  const wire: unknown[] = [];
  const model: RawActivity[] = [];
  const start = Date.parse('2026-06-01T00:00:00Z');
  const span = Date.parse('2026-10-01T00:00:00Z') - start;
  for (let i = 0; i < 4000; i++) {
    const type = TYPES[Math.floor(rnd() * TYPES.length)]!;
    const r: RawActivity = {
      type,
      event_id: `m-${i}`,
      list_id: LIST,
      workflow_id: WORKFLOWS[Math.floor(rnd() * WORKFLOWS.length)]!,
      subscriber_id: 1 + Math.floor(rnd() * 300),
      at: start + Math.floor(rnd() * span),
      ...(rnd() < 0.5 ? { trigger_id: 100 } : {}),
    };
    const w: Record<string, unknown> = { ...r, timestamp: r.at };
    delete w.at;
    if (type === 'purchase') {
      r.value_ron = '10.05';
      r.value_eur = '2.01';
      Object.assign(w, { order_id: `o-${i}`, value_ron: '10.05', value_eur: '2.01' });
    }
    wire.push(w);
    model.push(r);
  }
  return { wire, model };
}

const { wire, model } = generate();

async function filled(env: Record<string, string> = {}): Promise<TestService> {
  const svc = await startTestService(env);
  const setup = await svc.ingest([
    ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'UTC', currency: 'RON' }] }),
    ...WORKFLOWS.map((w) => ({ type: 'workflow', workflow_id: w, list_id: LIST })),
  ]);
  expect(setup.body.rejected).toEqual([]);
  const res = await svc.ingest(wire);
  expect(res.body.rejected).toEqual([]);
  // Answers computed each time (the answer cache off): held sets or the engine, never a cached answer.
  svc.statsCache.enabled = false;
  return svc;
}

const expected = (from: string, to: string, workflowIds: number[]) =>
  expectedStats(model, { listId: LIST, tz: 'UTC', currency: 'RON', from, to, workflowIds });

/** automation.stats of a period and a workflow subset, and the stats statements it ran. */
async function ask(svc: TestService, from: string, to: string, workflowIds: number[]) {
  const reads: string[] = [];
  svc.db.faultInjector = async (what) => void reads.push(what);
  try {
    const { body } = await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=${from}&stop_date=${to}&workflow_ids=${workflowIds.join(',')}`,
    );
    const statsReads = reads.filter(
      (s) => !/ FROM catalog\b/.test(s) && !isCatalogPoll(s) && !isChangePoll(s),
    );
    return { body, statsReads };
  } finally {
    svc.db.faultInjector = undefined;
  }
}

/**
 * A dashboard's first ask (all workflows) has the list's day rows read; a read during which the list's
 * version moved is not kept (DayRows), so the ask is repeated until they are held.
 */
async function holdRows(svc: TestService): Promise<void> {
  for (let i = 0; i < 10 && !svc.dayRows!.heldOf(LIST); i++) {
    await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=2026-06-01&stop_date=2026-09-30`,
    );
    await svc.dayRows!.settled();
  }
  expect(svc.dayRows!.heldOf(LIST), "the list's rows are held").toBeDefined();
}

describe("a list's subscriber sets, held by month", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await filled();
    await holdRows(svc);
  });
  afterAll(() => svc?.stop());

  it('reads only the months of the days asked, then answers from them, exactly', async () => {
    const first = await ask(svc, '2026-09-01', '2026-09-30', [1, 2]);
    expect(first.body).toEqual(expected('2026-09-01', '2026-09-30', [1, 2]));
    await svc.dayRows!.settled();
    // September only: not the list's four months.
    expect(svc.dayRows!.heldOf(LIST)?.months).toEqual(['2026-09']);
    const again = await ask(svc, '2026-09-03', '2026-09-20', [2, 3]);
    expect(again.body).toEqual(expected('2026-09-03', '2026-09-20', [2, 3]));
    expect(again.statsReads, 'answered from the held month').toEqual([]);

    // A period across a month's end reads the month it lacks, and only that one.
    await ask(svc, '2026-08-25', '2026-09-05', [1, 3]);
    await svc.dayRows!.settled();
    expect(svc.dayRows!.heldOf(LIST)?.months).toEqual(['2026-08', '2026-09']);
    const across = await ask(svc, '2026-08-25', '2026-09-05', [1, 3]);
    expect(across.body).toEqual(expected('2026-08-25', '2026-09-05', [1, 3]));
    expect(across.statsReads).toEqual([]);
  });
});

describe('held months within STATS_MEMORY_ROWS', () => {
  let svc: TestService;
  let limit: number;
  beforeAll(async () => {
    // The size of the list's rows with one month of sets, measured on a service without a tight limit.
    const probe = await filled();
    try {
      await holdRows(probe);
      await ask(probe, '2026-07-01', '2026-07-31', [1, 2]);
      await probe.dayRows!.settled();
      expect(probe.dayRows!.heldOf(LIST)?.months).toEqual(['2026-07']);
      const oneMonth = probe.dayRows!.heldOf(LIST)!.size;
      await ask(probe, '2026-08-01', '2026-08-31', [1, 2]);
      await probe.dayRows!.settled();
      const twoMonths = probe.dayRows!.heldOf(LIST)!.size;
      expect(twoMonths).toBeGreaterThan(oneMonth + 1);
      // Room for the rows and a month and a half of sets: never two months.
      limit = oneMonth + Math.floor((twoMonths - oneMonth) / 2);
    } finally {
      await probe.stop();
    }
    svc = await filled({ STATS_MEMORY_ROWS: String(limit) });
    await holdRows(svc);
  });
  afterAll(() => svc?.stop());

  it('makes room by dropping the least recently asked month; a period whose months cannot fit together reads the engine', async () => {
    await ask(svc, '2026-07-01', '2026-07-31', [1, 2]);
    await svc.dayRows!.settled();
    expect(svc.dayRows!.heldOf(LIST)?.months).toEqual(['2026-07']);
    // August is read; July, asked less recently, makes room for it.
    await ask(svc, '2026-08-02', '2026-08-30', [2, 3]);
    await svc.dayRows!.settled();
    expect(svc.dayRows!.heldOf(LIST)?.months).toEqual(['2026-08']);
    const held = await ask(svc, '2026-08-01', '2026-08-31', [1, 3]);
    expect(held.body).toEqual(expected('2026-08-01', '2026-08-31', [1, 3]));
    expect(held.statsReads).toEqual([]);

    // Three months cannot be held together: the engine answers, exactly, every time.
    for (let i = 0; i < 3; i++) {
      const wide = await ask(svc, '2026-06-10', '2026-08-20', [1, 2]);
      expect(wide.body).toEqual(expected('2026-06-10', '2026-08-20', [1, 2]));
      await svc.dayRows!.settled();
    }
    const wide = await ask(svc, '2026-06-10', '2026-08-20', [1, 2]);
    expect(
      wide.statsReads.some((s) => /daily_sets/.test(s)),
      'the engine answered',
    ).toBe(true);
    expect(svc.dayRows!.heldOf(LIST)!.size).toBeLessThanOrEqual(limit);
  });
});
