import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import type { RawActivity } from '../support/expected-stats.js';
import { activityStream, STREAM_LISTS, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import { scrape, metricValue } from '../support/metrics.js';
import { Restartable } from '../support/restartable.js';
import { tenant } from '../support/service.js';

const USER = 4;
const KEY = 'erase-key';
const LISTS = STREAM_LISTS;
const ADMIN = 'test-admin-token-0123456789-abcdef0123456789';
const SHAPES = ['', '&workflow_ids=2', '&workflow_ids=1,3,4', '&workflow_ids=2,3'];
const cli = (args: string[], env: Record<string, string>) => adminCli(args, env, { timeout: 120_000 });

/**
 * Erasure (docs/lifecycle.md, "erase"): every answer for the list is what it would be had the
 * subscriber's activity on it never arrived; other lists untouched; late copies not counted; later
 * activity counted; an erasure killed part-way completes at the next start.
 */
describe('erase', () => {
  const svc = new Restartable({ ADMIN_TOKEN: ADMIN });
  let model: RawActivity[];
  let wire: Record<string, unknown>[];

  beforeAll(async () => {
    await svc.start();
    expect((await svc.ingest(tenant({ userId: USER, apiKey: KEY, lists: LISTS }))).status).toBe(200);
    ({ wire, model } = activityStream(6000, 21));
    expect((await svc.ingest(wire)).body.rejected).toEqual([]);
  }, 300_000);
  afterAll(() => svc.destroy());

  const stats = (listId: number, extra = '') =>
    svc.get(`/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${listId}${STREAM_PERIOD}${extra}`);
  const admin = async (path: string, body: unknown, token = ADMIN) => {
    const res = await fetch(`${svc.svc!.url}/admin${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  /** Every shape of both lists answers what the model of `records` says. */
  async function expectAnswers(records: RawActivity[]) {
    for (const list of LISTS)
      for (const shape of SHAPES)
        expect(await stats(list.list_id, shape)).toEqual(streamStats(records, list, shape));
  }

  it('the ingest token cannot erase; a missing or unknown list is a clear error', async () => {
    expect(
      (
        await admin(
          '/erase',
          { pairs: [{ list_id: 10, subscriber_id: 1 }] },
          'restart-token-0123456789abcdef0123',
        )
      ).status,
    ).toBe(401);
    expect((await admin('/erase', { pairs: [] })).body.message).toMatch(/at least one/);
    const unknown = await admin('/erase', { pairs: [{ list_id: 999, subscriber_id: 1 }] });
    expect(unknown).toMatchObject({ status: 404, body: { message: 'no such list: 999' } });
  });

  it('answers as if the subscriber never arrived on that list; the other list is untouched', async () => {
    await expectAnswers(model); // primes the answer cache too
    const subscriber = model.find((r) => r.list_id === 10)!.subscriber_id;
    const erased = model.filter((r) => r.list_id === 10 && r.subscriber_id === subscriber);
    expect(erased.length).toBeGreaterThan(0);
    const r = await admin('/erase', { pairs: [{ list_id: 10, subscriber_id: subscriber }] });
    expect(r).toEqual({
      status: 200,
      body: { lists: [{ list_id: 10, subscribers: 1, deleted: erased.length }] },
    });
    model = model.filter((x) => !(x.list_id === 10 && x.subscriber_id === subscriber));
    await expectAnswers(model);
    // No stored trace either: raw rows at once; per-day sets of older generations once their
    // background delete has run.
    const traces = async () => {
      const [row] = await svc.svc!.db.query<{ raw: number; sets: number }>(
        `SELECT (SELECT count() FROM events WHERE list_id = 10 AND subscriber_id = {s:UInt64}) AS raw,
                (SELECT count() FROM daily_sets WHERE list_id = 10 AND bitmapContains(subs, {s:UInt64})) AS sets`,
        { s: subscriber },
        { output_format_json_quote_64bit_integers: 0 },
      );
      return row;
    };
    expect((await traces())!.raw).toBe(0);
    await vi.waitFor(async () => expect(await traces()).toEqual({ raw: 0, sets: 0 }), {
      timeout: 60_000,
      interval: 250,
    });

    // A late copy (a redelivery, with the same ids) and a late record with a new id, both timestamped
    // before the erasure: acknowledged, not counted, counted as erased.
    const before = metricValue(await scrape(svc.svc!.url!), 'mailstats_ingest_records_erased_total');
    const copies = wire.filter((w) => w.list_id === 10 && w.subscriber_id === subscriber);
    const fresh = { ...copies[0]!, event_id: 'late-new-id' };
    const late = await svc.ingest([...copies, fresh]);
    expect(late.body).toEqual({ accepted: copies.length + 1, rejected: [] });
    await expectAnswers(model);
    const after = metricValue(await scrape(svc.svc!.url!), 'mailstats_ingest_records_erased_total');
    expect(after - before).toBe(copies.length + 1);

    // Activity after the erasure counts normally.
    const now = Date.now();
    const later = {
      type: 'send',
      event_id: 'after-erase',
      list_id: 10,
      workflow_id: 1,
      subscriber_id: subscriber,
    };
    expect((await svc.ingest([{ ...later, timestamp: now }])).body.accepted).toBe(1);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Bucharest' }).format(now);
    const answer = await svc.get(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=10&start_date=${today}&stop_date=${today}`,
    );
    expect(answer.find((d: { date: string }) => d.date === today)?.sends_total).toBe(1);
    model.push({ ...later, at: now });
  }, 300_000);

  it('several pairs from a file-like list, over both lists', async () => {
    const a = model.find((r) => r.list_id === 11)!.subscriber_id;
    const b = model.find((r) => r.list_id === 10 && r.subscriber_id !== a)!.subscriber_id;
    const r = await admin('/erase', {
      pairs: [
        { list_id: 11, subscriber_id: a },
        { list_id: 10, subscriber_id: b },
        { list_id: 11, subscriber_id: b },
      ],
    });
    expect(r.status).toBe(200);
    model = model.filter(
      (x) =>
        !(
          (x.list_id === 11 && (x.subscriber_id === a || x.subscriber_id === b)) ||
          (x.list_id === 10 && x.subscriber_id === b)
        ),
    );
    await expectAnswers(model);
  }, 300_000);

  it('the CLI: --list/--subscriber, --file, and its mistakes', async () => {
    const env = { MAILSTATS_URL: svc.svc!.url!, ADMIN_TOKEN: ADMIN };
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-erase-'));
    try {
      const [a, b] = [...new Set(model.filter((r) => r.list_id === 10).map((r) => r.subscriber_id))];
      const one = await cli(['erase', '--list', '10', '--subscriber', String(a)], env);
      expect(one.code, one.err).toBe(0);
      expect(one.out).toMatch(/^list 10: 1 subscriber erased, [1-9]\d* records deleted$/m);
      const file = join(dir, 'pairs.csv');
      writeFileSync(file, `list_id,subscriber_id\n10,${b}\n\n11,${b}\n`);
      const many = await cli(['erase', '--file', file], env);
      expect(many.code, many.err).toBe(0);
      expect(many.out).toMatch(/^list 10: 1 subscriber erased/m);
      expect(many.out).toMatch(/^list 11: 1 subscriber erased/m);
      model = model.filter((x) => !(x.subscriber_id === b || (x.list_id === 10 && x.subscriber_id === a)));
      await expectAnswers(model);

      const bad = join(dir, 'bad.csv');
      writeFileSync(bad, '10,1\n10;2\n');
      const badFile = await cli(['erase', '--file', bad], env);
      expect(badFile.code).toBe(2);
      expect(badFile.err).toMatch(/--file .*bad\.csv line 2: expected list_id,subscriber_id/);
      const noList = await cli(['erase', '--list', '999', '--subscriber', '1'], env);
      expect(noList.code).toBe(1);
      expect(noList.err).toMatch(/answered 404: no such list: 999/);
      const noSubscriber = await cli(['erase', '--list', '10'], env);
      expect(noSubscriber.code).toBe(2);
      expect(noSubscriber.err).toMatch(/--subscriber must be a positive integer/);
      const wrong = await cli(['erase', '--list', '10', '--subscriber', '1'], {
        ...env,
        ADMIN_TOKEN: 'restart-token-0123456789abcdef0123',
      });
      expect(wrong.err).toMatch(/refused the admin token/);
      // Dead letters exist only in Kafka mode.
      const dlq = await cli(['dlq', 'stats'], env);
      expect(dlq.code).toBe(1);
      expect(dlq.err).toMatch(/answered 409: dead letters exist only in Kafka mode/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await expectAnswers(model);
  }, 300_000);

  it('an erasure killed part-way completes at the next start', async () => {
    const subscriber = model.find((r) => r.list_id === 11)!.subscriber_id;
    // "Kill" right after the intent is recorded: every ClickHouse operation fails from the next one on.
    const fault = svc.armAfterInsert('erasures', 1, 'kill');
    const r = await admin('/erase', { pairs: [{ list_id: 11, subscriber_id: subscriber }] });
    expect(fault.fired()).toBe(true);
    expect(r.status).toBe(500);
    await svc.stop();
    await svc.start();
    model = model.filter((x) => !(x.list_id === 11 && x.subscriber_id === subscriber));
    await expectAnswers(model);
  }, 300_000);
});
