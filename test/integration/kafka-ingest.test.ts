// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { IngestWorker } from '../../ingest/kafka/worker.js';
import { createKafka } from '../../ingest/kafka/topics.js';
import { KafkaProgress } from '../../shared/clickhouse/kafka-progress.js';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { activityStream, kafkaEnv, produce, STREAM_PERIOD, testKafka } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

const USER = 3;
const KEY = 'kafka-key';
const LISTS = [
  { list_id: 10, timezone: 'Europe/Bucharest' },
  { list_id: 11, timezone: 'America/New_York' },
];

describe('Kafka → worker → ClickHouse', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const kafka = testKafka(brokers);
  let svc: TestService;
  const delivered: RawActivity[] = [];

  beforeAll(async () => {
    svc = await startTestService(env);
    await produce(
      kafka,
      env.KAFKA_CATALOG_TOPIC!,
      tenant({ userId: USER, apiKey: KEY, lists: LISTS }),
      () => 'catalog',
    );
  });
  afterAll(() => svc?.stop());

  const stats = async (listId: number) =>
    (await svc.call(`/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${listId}${STREAM_PERIOD}`))
      .body;

  /** Wait until both lists answer exactly what the model of everything delivered so far says. */
  async function expectCounted() {
    for (const list of LISTS) {
      const expected = expectedStats(delivered, {
        listId: list.list_id,
        tz: list.timezone,
        currency: 'RON',
        from: '2026-11-01',
        to: '2026-11-20',
      });
      await vi.waitFor(async () => expect(await stats(list.list_id)).toEqual(expected), {
        timeout: 60_000,
        interval: 500,
      });
    }
  }

  it('counts produced records exactly once, also when producers send duplicates', async () => {
    const { wire, model } = activityStream(4000, 1);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, wire);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, wire.slice(0, 1000)); // a producer's retry
    delivered.push(...model);
    await expectCounted();
  });

  it('dead-letters bad messages with their reason and source, and counts the good ones around them', async () => {
    const { wire, model } = activityStream(300, 2);
    const bad = [
      '{"type": "send", "event_id": ',
      { ...wire[0], event_id: 'bad-1', list_id: 'ten' },
      { ...wire[0], event_id: 'bad-2', type: 'teleport' },
      { ...wire[0], event_id: 'bad-3', subscriber_id: undefined },
    ];
    await produce(
      kafka,
      env.KAFKA_EVENTS_TOPIC!,
      [...wire.slice(0, 150), ...bad, ...wire.slice(150)],
      () => '10',
    );
    delivered.push(...model);
    await expectCounted();

    const consumer = kafka.consumer({ groupId: `dlq-reader-${Date.now()}` });
    const dead: { value: string; headers: Record<string, string> }[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: env.KAFKA_DLQ_TOPIC!, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
        );
        dead.push({ value: message.value!.toString(), headers });
      },
    });
    await vi.waitFor(() => expect(dead.length).toBe(4), { timeout: 30_000 });
    await consumer.disconnect();
    const reasons = dead.map((d) => d.headers['mailstats-reason']);
    expect(reasons[0]).toMatch(/^not valid JSON/);
    expect(reasons[1]).toMatch(/^list_id: /);
    expect(reasons[2]).toMatch(/^type: must be one of/);
    expect(reasons[3]).toBe('subscriber_id: is required');
    expect(dead[0]!.value).toBe(bad[0]); // the original bytes
    for (const d of dead) {
      expect(d.headers['mailstats-source-topic']).toBe(env.KAFKA_EVENTS_TOPIC);
      expect(Number(d.headers['mailstats-source-offset'])).toBeGreaterThanOrEqual(150);
      expect(d.headers['mailstats-source-partition']).toMatch(/^\d+$/);
    }
  });

  it('rides out ClickHouse failing at random points of a batch, without a crash or a double count', async () => {
    const { wire, model } = activityStream(3000, 3);
    let failing = true;
    let calls = 0;
    svc.db.faultInjector = async () => {
      // Fail about a third of ClickHouse calls, also those between a batch's events insert and its ledger.
      if (failing && ++calls % 3 === 0) throw new Error('injected ClickHouse failure');
    };
    try {
      await produce(kafka, env.KAFKA_EVENTS_TOPIC!, wire);
      delivered.push(...model);
      await new Promise((r) => setTimeout(r, 4000));
      expect(calls).toBeGreaterThan(3);
      failing = false;
      await expectCounted();
    } finally {
      svc.db.faultInjector = undefined;
    }
  });

  it('counts exactly once across a rebalance between two workers', async () => {
    const config = { ...env };
    const second = new IngestWorker(
      createKafka({ ...svc.config, KAFKA_CLIENT_ID: 'second' }, svc.log),
      svc.pipeline,
      new KafkaProgress(svc.db, config.KAFKA_GROUP_ID!),
      {
        groupId: config.KAFKA_GROUP_ID!,
        topics: {
          events: config.KAFKA_EVENTS_TOPIC!,
          catalog: config.KAFKA_CATALOG_TOPIC!,
          dlq: config.KAFKA_DLQ_TOPIC!,
        },
        maxBatchRecords: 500,
        maxBatchMs: 100,
        sessionTimeoutMs: 6000,
      },
      svc.log,
    );
    const parts = [0, 1, 2, 3].map((k) => activityStream(1500, 10 + k));
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, parts[0]!.wire);
    await second.start(); // joins: the partitions are split between the two
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, parts[1]!.wire);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, parts[2]!.wire);
    await second.stop(); // leaves mid-stream: its partitions go back
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, parts[3]!.wire);
    for (const p of parts) delivered.push(...p.model);
    await expectCounted();
  });
});
