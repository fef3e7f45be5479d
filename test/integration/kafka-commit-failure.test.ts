// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { IngestWorker } from '../../ingest/kafka/worker.js';
import { createKafka } from '../../ingest/kafka/topics.js';
import { KafkaProgress } from '../../shared/clickhouse/kafka-progress.js';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * docs/records.md "Counted once" under a failed offset commit: a chunk is stored, its commit fails (a
 * broker flap, a rebalance), then the next chunk is cut short between its events insert and its ledger
 * write (a crash there), and another worker takes the partition over from the committed offset. The
 * stored chunk must not be followed by a new range while the committed offset still points before it:
 * re-read with other boundaries, the half-stored range would get a new token and count twice.
 */
const USER = 9;
const KEY = 'commit-failure-key';
const LIST = 19;

const sends = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    type: 'send',
    event_id: `cf-${from + i}`,
    list_id: LIST,
    workflow_id: 1,
    subscriber_id: from + i + 1,
    timestamp: '2026-11-10T10:00:00Z',
  }));

describe('a failed offset commit, then a crash mid-chunk', () => {
  const brokers = inject('kafkaBrokers');
  const env = { ...kafkaEnv(brokers), KAFKA_PARTITIONS: '1' };
  const kafka = testKafka(brokers);
  let svc: TestService;
  let second: IngestWorker | undefined;

  beforeAll(async () => {
    svc = await startTestService(env);
    await produce(
      kafka,
      env.KAFKA_CATALOG_TOPIC,
      tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }),
    );
  });
  afterAll(async () => {
    await second?.stop();
    await svc?.stop();
  });

  const sendsTotal = async () => {
    const res = await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=2026-11-10&stop_date=2026-11-10`,
    );
    expect(res.status).toBe(200);
    return (res.body as { sends_total: number }[]).reduce((n, d) => n + d.sends_total, 0);
  };

  it('counts every record once when another worker takes the partition over', async () => {
    await vi.waitFor(
      async () => expect((await svc.call(`/api/1.2/rest/${USER}/${KEY}/list.all.json`)).status).toBe(200),
      {
        timeout: 60_000,
        interval: 250,
      },
    );
    const worker = svc.worker!;
    const consumer = (worker as unknown as { consumer: { commitOffsets(o: unknown): Promise<void> } })
      .consumer;
    const commit = consumer.commitOffsets.bind(consumer);
    let failedCommits = 0;
    let eventsCommits = 0;
    consumer.commitOffsets = async (offsets) => {
      const [o] = offsets as { topic: string }[];
      // The first commit of the events partition fails, as with a broker flap.
      if (o?.topic === env.KAFKA_EVENTS_TOPIC && eventsCommits++ === 0) {
        failedCommits++;
        throw new Error('injected commit failure');
      }
      return commit(offsets);
    };

    await produce(kafka, env.KAFKA_EVENTS_TOPIC, sends(0, 100));
    await vi.waitFor(() => expect(failedCommits).toBe(1), { timeout: 60_000, interval: 50 });
    // From now on every ledger write fails: a chunk gets its events stored but never its ids taken.
    let ledgerFailures = 0;
    svc.db.faultInjector = async (what) => {
      if (what.includes('INSERT INTO event_ids')) {
        ledgerFailures++;
        throw new Error('injected failure before the ledger write');
      }
    };
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, sends(100, 100));
    await vi.waitFor(() => expect(ledgerFailures).toBeGreaterThan(0), { timeout: 60_000, interval: 50 });

    // The process "dies" here: its worker stops without committing anything more.
    await worker.stop();
    svc.db.faultInjector = undefined;
    second = new IngestWorker(
      createKafka({ ...svc.config, KAFKA_CLIENT_ID: 'takes-over' }, svc.log),
      svc.pipeline,
      new KafkaProgress(svc.db, env.KAFKA_GROUP_ID),
      {
        groupId: env.KAFKA_GROUP_ID,
        topics: {
          events: env.KAFKA_EVENTS_TOPIC,
          catalog: env.KAFKA_CATALOG_TOPIC,
          dlq: env.KAFKA_DLQ_TOPIC,
        },
        maxBatchRecords: 1000,
        maxBatchMs: 100,
        sessionTimeoutMs: 6000,
      },
      svc.log,
    );
    await second.start();
    // Once the group has committed past every record, all that will ever be counted is stored.
    const admin = kafka.admin();
    await admin.connect();
    try {
      await vi.waitFor(
        async () => {
          const [topic] = await admin.fetchOffsets({
            groupId: env.KAFKA_GROUP_ID,
            topics: [env.KAFKA_EVENTS_TOPIC],
          });
          expect(topic!.partitions[0]!.offset).toBe('200');
        },
        { timeout: 60_000, interval: 250 },
      );
    } finally {
      await admin.disconnect();
    }
    // Today's bug: the second worker re-read 0-199 as one new range, and the 100 records whose ids never
    // reached the ledger were stored a second time (300).
    expect(await sendsTotal()).toBe(200);
  });
});
