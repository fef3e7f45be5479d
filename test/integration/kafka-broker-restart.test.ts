// Modes: embedded and server
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { startKafkaBroker, type KafkaBroker } from '../../scripts/kafka/broker.mjs';
import { expectedStats } from '../support/expected-stats.js';
import { activityStream, kafkaEnv, produce, STREAM_PERIOD, testKafka } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

describe('a broker restart', () => {
  let broker: KafkaBroker | undefined;
  let svc: TestService | undefined;
  afterAll(async () => {
    await svc?.stop();
    await broker?.stop();
  });

  // This test restarts its own broker, so it needs the local jars (it does not touch the shared one).
  it.runIf(inject('kafkaBrokerSource') === 'local')(
    'is ridden out: nothing lost, nothing twice',
    async () => {
      broker = await startKafkaBroker();
      const env = kafkaEnv(broker.brokers);
      svc = await startTestService(env);
      const kafka = testKafka(broker.brokers);
      await produce(
        kafka,
        env.KAFKA_CATALOG_TOPIC!,
        tenant({ userId: 8, apiKey: 'r', lists: [{ list_id: 10 }] }),
        () => 'c',
      );
      const before = activityStream(2000, 41);
      const after = activityStream(2000, 42);
      await produce(kafka, env.KAFKA_EVENTS_TOPIC!, before.wire);
      await broker.restart();
      await produce(kafka, env.KAFKA_EVENTS_TOPIC!, after.wire);

      const expected = expectedStats([...before.model, ...after.model], {
        listId: 10,
        tz: 'Europe/Bucharest',
        currency: 'RON',
        from: '2026-11-01',
        to: '2026-11-20',
      });
      await vi.waitFor(
        async () => {
          const res = await svc!.call(`/api/1.2/rest/8/r/automation.stats.json?list_id=10${STREAM_PERIOD}`);
          expect(res.body).toEqual(expected);
        },
        { timeout: 90_000, interval: 1000 },
      );
    },
    180_000,
  );
});
