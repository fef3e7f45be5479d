// Modes: embedded only — erasure with backups of DATA_DIR; server-mode erasure under kills is lifecycle-erase-kill
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import type { RawActivity } from '../support/expected-stats.js';
import { activityStream, STREAM_LISTS, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import { scrape, metricValue } from '../support/metrics.js';
import { Restartable } from '../support/restartable.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

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

/**
 * Restores and replays (docs/lifecycle.md, "erase"): an erasure keeps its original time. After restoring
 * a backup older than an erasure, `erase --file` of the exported erasure log removes what was erased
 * then and keeps the subscriber's activity timestamped after it.
 */
describe('erasures replayed with their original time', () => {
  const LIST = 20;
  const OTHER = 21;
  const SUBSCRIBER = 7;
  let a: TestService | undefined;
  let b: TestService | undefined;

  const lists = [
    { list_id: LIST, timezone: 'UTC' },
    { list_id: OTHER, timezone: 'UTC' },
  ];
  /** One embedded store per process at a time: `a` is stopped before `b` starts. */
  const startWithTenant = async () => {
    const s = await startTestService({ ADMIN_TOKEN: ADMIN });
    expect((await s.ingest(tenant({ userId: USER, apiKey: KEY, lists }))).status).toBe(200);
    return s;
  };
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  const day = 86_400_000;
  const send = (event_id: string, list_id: number, subscriber_id: number, timestamp: number) => ({
    type: 'send',
    event_id,
    list_id,
    workflow_id: 1,
    subscriber_id,
    timestamp,
  });
  const period = (now: number) => {
    const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    return `&start_date=${date(now - 5 * day)}&stop_date=${date(now + day)}`;
  };
  const stats = (s: TestService, list: number, now: number) =>
    s.call(`/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list}${period(now)}`);
  const sends = (answer: { sends_total: number }[]) => answer.reduce((n, d) => n + d.sends_total, 0);

  it('erase at T1, later activity, a store without the erasure, erase --file of the export: the later activity still counts', async () => {
    const env = (s: TestService) => ({ MAILSTATS_URL: s.url!, ADMIN_TOKEN: ADMIN });
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-erase-replay-'));
    try {
      const original = await startWithTenant();
      a = original;
      const start = Date.now();
      const earlier = [
        send('r-early-1', LIST, SUBSCRIBER, start - 3 * day),
        send('r-early-2', LIST, SUBSCRIBER, start - 2 * day),
        send('r-other-sub', LIST, 8, start - 2 * day),
        send('r-other-list', OTHER, SUBSCRIBER, start - 2 * day),
      ];
      expect((await original.ingest(earlier)).body).toEqual({ accepted: 4, rejected: [] });
      const erased = await cli(
        ['erase', '--list', String(LIST), '--subscriber', String(SUBSCRIBER)],
        env(original),
      );
      expect(erased.code, erased.err).toBe(0);
      expect(erased.out).toMatch(/^list 20: 1 subscriber erased, 2 records deleted$/m);
      // The subscriber's genuine activity after the erasure (timestamped after T1), and a late copy of
      // an erased record (before T1: not counted).
      const t = Date.now() + 1000;
      const later = [send('r-later-1', LIST, SUBSCRIBER, t), send('r-later-2', LIST, SUBSCRIBER, t + 1)];
      expect(
        (await original.ingest([...later, send('r-late-a', LIST, SUBSCRIBER, start - day)])).body,
      ).toEqual({
        accepted: 3,
        rejected: [],
      });
      const truth = await stats(original, LIST, start);
      expect(sends(truth.body)).toBe(3); // subscriber 8's and the two later ones

      const file = join(dir, 'erasures.csv');
      const exported = await cli(['erasures', 'export', file], env(original));
      expect(exported.code, exported.err).toBe(0);
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      expect(lines[0]).toBe('list_id,subscriber_id,erased_at');
      expect(lines).toHaveLength(2);
      const [, , erasedAt] = lines[1]!.split(',');
      expect(lines[1]).toBe(`${LIST},${SUBSCRIBER},${erasedAt}`);
      const t1 = Date.parse(erasedAt!);
      expect(t1).toBeGreaterThanOrEqual(start);
      expect(t1).toBeLessThan(t);

      const truthOther = await stats(original, OTHER, start);
      await original.stop();
      a = undefined;

      // A store without the erasure (as after restoring an older backup), given the same records.
      const restored = await startWithTenant();
      b = restored;
      expect((await restored.ingest([...earlier, ...later])).body.rejected).toEqual([]);
      expect(sends((await stats(restored, LIST, start)).body)).toBe(5);
      const replay = await cli(['erase', '--file', file], env(restored));
      expect(replay.code, replay.err).toBe(0);
      expect(replay.out).toMatch(/^list 20: 1 subscriber erased, 2 records deleted$/m);
      expect(await stats(restored, LIST, start)).toEqual(truth);
      expect(await stats(restored, OTHER, start)).toEqual(truthOther);
      expect(sends((await stats(restored, OTHER, start)).body)).toBe(1);
      // And the replayed erasure filters late copies from before T1 only, as the original does.
      expect(
        (
          await restored.ingest([
            send('r-late-b', LIST, SUBSCRIBER, start - day),
            send('r-later-3', LIST, SUBSCRIBER, t + 2),
          ])
        ).body.accepted,
      ).toBe(2);
      expect(sends((await stats(restored, LIST, start)).body)).toBe(4);
      // The log of the replayed store is the original's.
      const again = join(dir, 'again.csv');
      expect((await cli(['erasures', 'export', again], env(restored))).code).toBe(0);
      expect(readFileSync(again, 'utf8')).toBe(readFileSync(file, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('an erasure time in the future is refused; --at and a bad time are checked', async () => {
    const env = { MAILSTATS_URL: b!.url!, ADMIN_TOKEN: ADMIN };
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const res = await fetch(`${b!.url}/admin/erase`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ pairs: [{ list_id: LIST, subscriber_id: 8, erased_at: future }] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/erased_at: .* is in the future/);
    const cliFuture = await cli(['erase', '--list', String(LIST), '--subscriber', '8', '--at', future], env);
    expect(cliFuture.code).toBe(1);
    expect(cliFuture.err).toMatch(/answered 400: .*is in the future/);
    const notATime = await cli(
      ['erase', '--list', String(LIST), '--subscriber', '8', '--at', 'yesterday'],
      env,
    );
    expect(notATime.code).toBe(2);
    expect(notATime.err).toMatch(/--at: "yesterday" is not a time/);
    // Nothing was erased: subscriber 8's send still counts.
    expect(
      (await stats(b!, LIST, Date.now())).body.some((d: { sends_total: number }) => d.sends_total > 0),
    ).toBe(true);
  }, 120_000);
});
