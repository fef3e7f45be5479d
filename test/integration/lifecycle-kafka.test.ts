// Modes: embedded only — backup and restore of DATA_DIR under Kafka; server mode: lifecycle-server-backup.test.ts
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import type { RawActivity } from '../support/expected-stats.js';
import {
  activityStream,
  kafkaEnv,
  produce,
  STREAM_LISTS,
  STREAM_PERIOD,
  streamStats,
  testKafka,
} from '../support/kafka.js';
import { metricValue, scrape } from '../support/metrics.js';
import { Restartable } from '../support/restartable.js';
import { tenant } from '../support/service.js';

const ADMIN = 'kafka-admin-token-0123456789-abcdef0123456789';
const USER = 7;
const KEY = 'kafka-lifecycle-key';
const LISTS = STREAM_LISTS;

/** Erasure and dead letters with the real broker (docs/lifecycle.md). */
describe('life cycle in Kafka mode', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const kafka = testKafka(brokers);
  const work = mkdtempSync(join(tmpdir(), 'mailstats-kafka-lc-'));
  const svc = new Restartable({ ...env, ADMIN_TOKEN: ADMIN, BACKUP_ROOT: work });
  let model: RawActivity[] = [];

  beforeAll(async () => {
    await svc.start();
    await produce(
      kafka,
      env.KAFKA_CATALOG_TOPIC,
      tenant({ userId: USER, apiKey: KEY, lists: LISTS }),
      () => 'c',
    );
  }, 120_000);
  afterAll(async () => {
    await svc.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const stats = (listId: number, extra = '') =>
    svc.get(`/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${listId}${STREAM_PERIOD}${extra}`);
  async function expectCounted(timeout = 120_000) {
    for (const list of LISTS)
      for (const shape of ['', '&workflow_ids=2', '&workflow_ids=1,3']) {
        await vi.waitFor(
          async () => expect(await stats(list.list_id, shape)).toEqual(streamStats(model, list, shape)),
          { timeout, interval: 500 },
        );
      }
  }

  it('an erasure while the worker consumes; the erased records redelivered after a restart are not counted', async () => {
    const first = activityStream(6000, 51);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, first.wire);
    model.push(...first.model);
    await expectCounted();
    const subscriber = first.model.find((r) => r.list_id === 10)!.subscriber_id;

    // More records (the subscriber's among them) are being consumed while the erasure runs.
    const second = activityStream(20_000, 52);
    const producing = produce(kafka, env.KAFKA_EVENTS_TOPIC, second.wire);
    const erased = await adminCli(['erase', '--list', '10', '--subscriber', String(subscriber)], {
      MAILSTATS_URL: svc.svc!.url!,
      ADMIN_TOKEN: ADMIN,
    });
    expect(erased.code, erased.err).toBe(0);
    expect(erased.out).toMatch(/^list 10: 1 subscriber erased, \d+ records deleted$/m);
    await producing;
    // Every record of the pair is timestamped before the erasure (the stream ends on 2026-11-15).
    const gone = (r: RawActivity) => r.list_id === 10 && r.subscriber_id === subscriber;
    model = [...model, ...second.model].filter((r) => !gone(r));
    await expectCounted();

    // Restart, and deliver everything again from offset 0 (as after a consumer group reset).
    const metric = async () =>
      metricValue(await scrape(svc.svc!.url!), 'mailstats_ingest_records_erased_total');
    const before = await metric(); // the registry is the process's: it outlives the restart
    await svc.stop();
    const admin_ = kafka.admin();
    await admin_.connect();
    // The group may still be settling after the member left ("PreparingRebalance"): asked again until empty.
    await vi.waitFor(
      () =>
        admin_.resetOffsets({ groupId: env.KAFKA_GROUP_ID, topic: env.KAFKA_EVENTS_TOPIC, earliest: true }),
      { timeout: 60_000, interval: 1_000 },
    );
    await admin_.disconnect();
    await svc.start();
    const erasedCopies = [...first.wire, ...second.wire].filter(
      (w) => w.list_id === 10 && w.subscriber_id === subscriber,
    ).length;
    expect(erasedCopies).toBeGreaterThan(0);
    await vi.waitFor(async () => expect((await metric()) - before).toBe(erasedCopies), {
      timeout: 120_000,
      interval: 500,
    });
    await expectCounted(10_000);
  }, 600_000);

  it('dlq stats and export; the export, fixed, is imported', async () => {
    const url = { MAILSTATS_URL: svc.svc!.url!, ADMIN_TOKEN: ADMIN };
    const broken = [1, 2, 3].map((i) => ({
      type: 'send',
      event_id: `dlq-${i}`,
      list_id: 11,
      subscriber_id: 900 + i,
      timestamp: '2026-11-12T10:00:00Z',
    })); // no workflow_id
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, [...broken, 'not json at all']);
    await vi.waitFor(
      async () => {
        const s = await adminCli(['dlq', 'stats'], url);
        expect(s.code, s.err).toBe(0);
        expect(s.out).toMatch(/^4 dead letters$/m);
      },
      { timeout: 120_000, interval: 1_000 },
    );
    const stats_ = await adminCli(['dlq', 'stats'], url);
    expect(stats_.out).toMatch(/^\s+3 {2}workflow_id: is required$/m);

    const file = join(work, 'dead.ndjson');
    const ex = await adminCli(['dlq', 'export', '--reason', 'workflow_id', file], url);
    expect(ex.code, ex.err).toBe(0);
    const letters = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(letters).toHaveLength(3);
    for (const l of letters) {
      expect(l).toMatchObject({ reason: 'workflow_id: is required', topic: env.KAFKA_EVENTS_TOPIC });
      expect(Number.isInteger(l.partition)).toBe(true);
      expect(l.offset).toMatch(/^\d+$/);
      expect(Number.isFinite(Date.parse(l.time))).toBe(true);
    }
    const since = await adminCli(['dlq', 'export', '--since', '2999-01-01T00:00:00Z'], url);
    expect(since.out).toBe('');
    const badSince = await adminCli(['dlq', 'export', '--since', 'yesterday'], url);
    expect(badSince.code).toBe(2);
    expect(badSince.err).toMatch(/--since "yesterday" is not a time/);

    // Fixed (the missing field added) and imported: counted like any record.
    const fixed = join(work, 'fixed.ndjson');
    writeFileSync(
      fixed,
      letters.map((l) => JSON.stringify({ ...JSON.parse(l.value as string), workflow_id: 2 })).join('\n') +
        '\n',
    );
    const imp = await adminCli(['import', fixed], url);
    expect(imp.code, imp.err).toBe(0);
    model.push(...broken.map((b) => ({ ...b, workflow_id: 2, at: Date.parse(b.timestamp) })));
    await expectCounted();
  }, 600_000);

  it('backup in Kafka mode carries the Kafka progress; the restored store answers the same', async () => {
    const dir = join(work, 'backup');
    const b = await adminCli(['backup', dir], { MAILSTATS_URL: svc.svc!.url!, ADMIN_TOKEN: ADMIN });
    expect(b.code, b.err).toBe(0);
    // The newest range per partition (the table is a ReplacingMergeTree: merges fold older rows away).
    const progress = () =>
      svc.svc!.db.query<Record<string, unknown>>(
        'SELECT * FROM kafka_progress FINAL ORDER BY ALL',
        {},
        { output_format_json_quote_64bit_integers: 0 },
      );
    const before = await progress();
    expect(before.length).toBeGreaterThan(0);
    const answers = [];
    for (const list of LISTS) answers.push(await stats(list.list_id));
    await svc.stop();

    const restored = new Restartable({ ...env, ADMIN_TOKEN: ADMIN });
    try {
      const r = await adminCli(['restore', dir], { DATA_DIR: restored.dir });
      expect(r.code, r.err).toBe(0);
      await restored.start();
      const db = restored.svc!.db;
      expect(
        await db.query(
          'SELECT * FROM kafka_progress FINAL ORDER BY ALL',
          {},
          { output_format_json_quote_64bit_integers: 0 },
        ),
      ).toEqual(before);
      for (const [i, list] of LISTS.entries())
        expect(
          await restored.get(
            `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list.list_id}${STREAM_PERIOD}`,
          ),
        ).toEqual(answers[i]);
    } finally {
      await restored.destroy();
    }
  }, 600_000);
});

/**
 * A restore of an older backup while the consumer group, in Kafka, committed past it: the group's
 * offsets are not in a backup, so the restored worker must go back to the store's recorded progress
 * (docs/lifecycle.md, "backup and restore") and count what Kafka delivered after the backup once.
 */
describe('restore in Kafka mode after the group committed past the backup', () => {
  const brokers = inject('kafkaBrokers');
  const kafka = testKafka(brokers);
  const work = mkdtempSync(join(tmpdir(), 'mailstats-kafka-restore-'));
  const env = { ...kafkaEnv(brokers), ADMIN_TOKEN: ADMIN, BACKUP_ROOT: work };
  const services: Restartable[] = [];
  const service = () => {
    const s = new Restartable(env);
    services.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of services) await s.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  async function expectCounted(svc: Restartable, model: RawActivity[], timeout = 120_000) {
    // The raw figure first (a failure then names it): every record stored, each once.
    await vi.waitFor(
      async () =>
        expect(
          await svc.svc!.db.query<{ rows: number; ids: number }>(
            'SELECT count() AS rows, uniqExact(event_id) AS ids FROM events',
            {},
            { output_format_json_quote_64bit_integers: 0 },
          ),
        ).toEqual([{ rows: model.length, ids: model.length }]),
      { timeout, interval: 500 },
    );
    for (const list of LISTS)
      for (const shape of ['', '&workflow_ids=2', '&workflow_ids=1,3']) {
        await vi.waitFor(
          async () =>
            expect(
              await svc.get(
                `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list.list_id}${STREAM_PERIOD}${shape}`,
              ),
            ).toEqual(streamStats(model, list, shape)),
          { timeout, interval: 500 },
        );
      }
  }
  /** Until the group's committed offset is the end of every partition of the events topic. */
  async function committedToEnd() {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await vi.waitFor(
        async () => {
          const ends = await admin.fetchTopicOffsets(env.KAFKA_EVENTS_TOPIC);
          const [committed] = await admin.fetchOffsets({
            groupId: env.KAFKA_GROUP_ID,
            topics: [env.KAFKA_EVENTS_TOPIC],
          });
          const at = new Map(committed!.partitions.map((p) => [p.partition, p.offset]));
          for (const e of ends) expect(e.high === '0' ? '0' : at.get(e.partition)).toBe(e.high);
        },
        { timeout: 60_000, interval: 500 },
      );
    } finally {
      await admin.disconnect();
    }
  }
  const admin = (svc: Restartable) => ({ MAILSTATS_URL: svc.svc!.url!, ADMIN_TOKEN: ADMIN });

  it('a restored older backup counts what Kafka delivered after it once, and goes on', async () => {
    const source = service();
    await source.start();
    await produce(
      kafka,
      env.KAFKA_CATALOG_TOPIC,
      tenant({ userId: USER, apiKey: KEY, lists: LISTS }),
      () => 'c',
    );
    const model: RawActivity[] = [];
    await expectCounted(source, model); // the catalog is in
    // A backup before the events topic was first read: no recorded progress for its partitions.
    const early = join(work, 'early');
    const b0 = await adminCli(['backup', early], admin(source));
    expect(b0.code, b0.err).toBe(0);

    const a = activityStream(4000, 61);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, a.wire);
    model.push(...a.model);
    await expectCounted(source, model);
    const late = join(work, 'late');
    const b1 = await adminCli(['backup', late], admin(source));
    expect(b1.code, b1.err).toBe(0);

    // Consumed and committed after the backup: the group's offsets are now past the backup's progress.
    const b = activityStream(5000, 62);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, b.wire);
    model.push(...b.model);
    await expectCounted(source, model);
    await committedToEnd();
    await source.stop();

    // The later backup, restored and started with the same group and topics: all of a and b, once.
    const restored = service();
    const r1 = await adminCli(['restore', late], { DATA_DIR: restored.dir });
    expect(r1.code, r1.err).toBe(0);
    await restored.start();
    await expectCounted(restored, model);
    const c = activityStream(1000, 63);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, c.wire);
    model.push(...c.model);
    await expectCounted(restored, model);
    await committedToEnd();
    await restored.stop();

    // The backup from before the events topic was read: read from the beginning, once.
    const first = service();
    const r0 = await adminCli(['restore', early], { DATA_DIR: first.dir });
    expect(r0.code, r0.err).toBe(0);
    await first.start();
    await expectCounted(first, model);
    const d = activityStream(1000, 64);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, d.wire);
    model.push(...d.model);
    await expectCounted(first, model);
  }, 900_000);
});
