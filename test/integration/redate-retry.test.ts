// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { Restartable } from '../support/restartable.js';
import { sha256 } from '../support/service.js';
import { rng } from '../support/rng.js';

/**
 * docs/records.md "Counted once" and "Dating", ARCHITECTURE.md "Counted once" (the group commit): a
 * batch whose `events` insert landed and whose ids never reached the ledger (the process died in
 * between, while another batch of its group waited) is retried with its token after its list was
 * re-dated. The retry is dated in the new generation; its `events` insert is dropped by the token, but
 * the view's block into `daily_sets` is deduplicated per partition of `daily_sets` (a month of `day`),
 * and `day` moved: a month the first attempt's block never reached (or a view block that never landed
 * at all) is inserted in the new generation, which the re-dating had already filled from the stored
 * rows — those records counted twice. The list here gets its activity first (dated in DEFAULT_TIMEZONE,
 * Bucharest) at the start of a month, and then a `list` record in Los Angeles, where those instants
 * fall on the last day of the month before.
 */
const USER = 6;
const KEY = 'retry-key';
const LIST = 61;
const OTHER = 62;
const ZONE = 'America/Los_Angeles';
const FROM = '2026-09-25';
const TO = '2026-10-05';
const PERIOD = `&start_date=${FROM}&stop_date=${TO}`;

/** `n` records of `list`, on 2026-10-01 between 00:00 and 06:00 UTC (Bucharest: 1 October; LA: 30 September). */
function batch(list: number, n: number, seed: number, prefix: string) {
  const rnd = rng(seed);
  const types = ['send', 'open', 'click', 'purchase', 'event'];
  const wire: Record<string, unknown>[] = [];
  const model: RawActivity[] = [];
  for (let i = 0; i < n; i++) {
    const type = types[Math.floor(rnd() * types.length)]!;
    const r: RawActivity = {
      type,
      event_id: `${prefix}-${i}`,
      list_id: list,
      workflow_id: 1 + Math.floor(rnd() * 3),
      subscriber_id: 1 + Math.floor(rnd() * 40),
      at: Date.parse('2026-10-01T00:00:00Z') + Math.floor(rnd() * 6 * 3_600_000),
    };
    const w: Record<string, unknown> = { ...r, timestamp: r.at };
    delete w.at;
    if (type === 'purchase') {
      r.value_ron = '10';
      r.value_eur = '2';
      Object.assign(w, { order_id: `o-${prefix}-${i}`, value_ron: '10', value_eur: '2' });
    }
    if (type === 'event') r.status = w.status = 'ok';
    wire.push(w);
    model.push(r);
  }
  return { wire, model, records: wire.map(parse) };
}

function parse(w: unknown): MailstatsRecord {
  const check = checkRecord(w);
  if (!check.ok) throw new Error(check.reason);
  return check.record;
}

const access = (list: number) => [
  { type: 'user', user_id: USER, api_key_sha256: sha256(KEY) },
  { type: 'list_access', user_id: USER, list_id: list, granted: true },
];
const listRecord = (list: number) => ({
  type: 'list',
  list_id: list,
  name: 'la',
  timezone: ZONE,
  currency: 'RON',
});

async function expectCountedOnce(node: Restartable, list: number, model: RawActivity[]) {
  const q = { listId: list, tz: ZONE, currency: 'RON', from: FROM, to: TO };
  const expected = expectedStats(model, q);
  expect(expected.map((d) => d.date)).toEqual(['2026-09-30']);
  const base = `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list}${PERIOD}`;
  expect(await node.get(base)).toEqual(expected);
  expect(await node.get(`${base}&workflow_ids=2`)).toEqual(expectedStats(model, { ...q, workflowIds: [2] }));
  expect(await node.get(`${base}&workflow_ids=1,3`)).toEqual(
    expectedStats(model, { ...q, workflowIds: [1, 3] }),
  );
}

/**
 * The process dies right after the first `events` insert from now on (every later operation fails, as
 * after a SIGKILL); with `withoutView`, that insert's `daily_sets` part (the view's) never landed. The
 * returned function undoes the hook and says whether it fired.
 */
function dieAfterEventsInsert(node: Restartable, withoutView: boolean): () => boolean {
  const db = node.svc!.db;
  const insertEncoded = db.insertEncoded.bind(db);
  let dead = false;
  db.insertEncoded = async (table, columns, payload, token) => {
    if (dead) throw new Error('process killed (test)');
    if (table !== 'events') return insertEncoded(table, columns, payload, token);
    dead = true;
    if (withoutView) await db.command('DETACH TABLE daily_sets_mv');
    try {
      await insertEncoded(table, columns, payload, token);
    } finally {
      if (withoutView) await db.command('ATTACH TABLE daily_sets_mv');
    }
    db.faultInjector = () => Promise.reject(new Error('process killed (test)'));
    throw new Error('process killed (test)');
  };
  return () => {
    db.insertEncoded = insertEncoded;
    db.faultInjector = undefined;
    return dead;
  };
}

describe('a batch of a group commit retried after its list was re-dated', () => {
  const node = new Restartable({ CATALOG_POLL_MS: '60000' });
  beforeAll(() => node.start(), 60_000);
  afterAll(() => node.destroy());

  /**
   * Two Kafka-like batches (each with the token its range gives it) written as one group: both calls
   * come while the queue has not started, so the second joins the first's group (the same promise).
   */
  const writeGroup = (parts: { records: MailstatsRecord[]; token: string }[]) => {
    const runs = parts.map((p) => node.svc!.pipeline.write(p.records, p.token));
    for (const run of runs) expect(run).toBe(runs[0]);
    return Promise.allSettled(runs);
  };

  it('killed between the first batch’s events insert and its ledger insert (the second waiting): counted once', async () => {
    expect((await node.ingest([...access(LIST), ...access(OTHER)])).status).toBe(200);
    const a = batch(LIST, 300, 1, 'ka');
    const b = batch(OTHER, 200, 2, 'kb');
    const parts = [
      { records: a.records, token: 'g:events:0:100-399:aaaa' },
      { records: b.records, token: 'g:events:1:40-239:bbbb' },
    ];
    // From the operation after the first `events` insert on, every operation fails: the process died there.
    const restore = dieAfterEventsInsert(node, false);
    const results = await writeGroup(parts);
    expect(restore()).toBe(true);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await node.stop();

    await node.start();
    // The list record arrives (another partition) before the batches are read again: a re-dating.
    expect((await node.ingest([listRecord(LIST), listRecord(OTHER)])).status).toBe(200);
    // The worker re-forms both ranges: the same records, the same tokens.
    const again = await writeGroup(parts);
    expect(again.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    await expectCountedOnce(node, LIST, a.model);
    await expectCountedOnce(node, OTHER, b.model);
  }, 120_000);

  it('killed after the events part of an insert and before its view’s part: counted once', async () => {
    const list = LIST + 10;
    const other = OTHER + 10;
    expect((await node.ingest([...access(list), ...access(other)])).status).toBe(200);
    const a = batch(list, 300, 3, 'ma');
    const b = batch(other, 200, 4, 'mb');
    const parts = [
      { records: a.records, token: 'g:events:2:100-399:cccc' },
      { records: b.records, token: 'g:events:3:40-239:dddd' },
    ];
    // ClickHouse commits the `events` part of an insert before the view's `daily_sets` part (a view that
    // fails leaves the events rows stored): a SIGKILL in between leaves this state. Made here by
    // inserting with the view detached, then failing every later operation (the process is dead).
    const restore = dieAfterEventsInsert(node, true);
    const results = await writeGroup(parts);
    expect(restore()).toBe(true);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await node.stop();

    await node.start();
    expect((await node.ingest([listRecord(list), listRecord(other)])).status).toBe(200);
    const again = await writeGroup(parts);
    expect(again.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    await expectCountedOnce(node, list, a.model);
    await expectCountedOnce(node, other, b.model);
  }, 120_000);
});
