// Modes: embedded only — the dead-letter topic, independent of the store
// docs/records.md "Counted once": a record too large for the dead-letter topic is still dead-lettered
// (truncated, with its size and digest in the headers), never lost and never blocking its partition.
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { expectedStats } from '../support/expected-stats.js';
import { activityStream, kafkaEnv, produce, STREAM_PERIOD, testKafka } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

describe('a 2 MB poison message on a broker with the default 1 MB message limit', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const kafka = testKafka(brokers);
  let svc: TestService | undefined;
  afterAll(() => svc?.stop());

  it('is dead-lettered truncated with its size and SHA-256, and its neighbours are counted', async () => {
    // Only the events topic takes messages this large (a topic-level override); the DLQ topic keeps
    // the broker's default limit.
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: env.KAFKA_EVENTS_TOPIC,
          numPartitions: 1,
          configEntries: [{ name: 'max.message.bytes', value: String(4 * 1024 * 1024) }],
        },
      ],
    });
    await admin.disconnect();

    svc = await startTestService(env);
    await produce(
      kafka,
      env.KAFKA_CATALOG_TOPIC,
      tenant({ userId: 4, apiKey: 'p', lists: [{ list_id: 10 }, { list_id: 11 }] }),
      () => 'c',
    );
    const { wire, model } = activityStream(400, 81);
    const poison = `{"type":"send","event_id":"poison","note":"${'x'.repeat(2 * 1024 * 1024)}"}`;
    await produce(
      kafka,
      env.KAFKA_EVENTS_TOPIC,
      [...wire.slice(0, 200), poison, ...wire.slice(200)],
      () => '10',
    );

    for (const listId of [10, 11]) {
      const expected = expectedStats(model, {
        listId,
        tz: 'Europe/Bucharest',
        currency: 'RON',
        from: '2026-11-01',
        to: '2026-11-20',
      });
      await vi.waitFor(
        async () =>
          expect(
            (await svc!.call(`/api/1.2/rest/4/p/automation.stats.json?list_id=${listId}${STREAM_PERIOD}`))
              .body,
          ).toEqual(expected),
        { timeout: 90_000, interval: 1000 },
      );
    }

    const consumer = kafka.consumer({ groupId: `dlq-reader-${Date.now()}` });
    const dead: { value: Buffer; headers: Record<string, string> }[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: env.KAFKA_DLQ_TOPIC, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
        );
        dead.push({ value: message.value!, headers });
      },
    });
    await vi.waitFor(() => expect(dead.length).toBeGreaterThanOrEqual(1), { timeout: 30_000 });
    await consumer.disconnect();
    const original = Buffer.from(poison);
    for (const d of dead) {
      expect(d.headers['mailstats-reason']).toMatch(/larger than/);
      expect(d.headers['mailstats-source-topic']).toBe(env.KAFKA_EVENTS_TOPIC);
      expect(d.headers['mailstats-source-offset']).toBe('200');
      expect(d.headers['mailstats-original-size']).toBe(String(original.length));
      expect(d.headers['mailstats-original-sha256']).toBe(
        createHash('sha256').update(original).digest('hex'),
      );
      expect(d.value.length).toBeLessThan(1024 * 1024);
      expect(d.value.length).toBeGreaterThan(0);
      expect(original.subarray(0, d.value.length).equals(d.value)).toBe(true);
    }
  }, 240_000);
});
