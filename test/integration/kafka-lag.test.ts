// Modes: embedded only — the lag reader's Kafka admin connection, independent of the store
import { afterAll, describe, expect, inject, it } from 'vitest';
import { consumerLagReader } from '../../ingest/kafka/lag.js';
import { loadConfig } from '../../shared/config.js';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';

/**
 * Issue 19 G: a /metrics scrape opened a Kafka admin connection each time. The lag reader keeps one admin
 * connection across scrapes, and scrapes while a reading is under way share it; a reading is not served
 * after it ended, so a scrape right after a change sees it.
 */
describe('consumer lag reader (real broker)', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const kafka = testKafka(brokers);
  const reader = consumerLagReader(loadConfig(env));
  afterAll(() => reader.close());

  const eventsLag = (lags: { topic: string; lag: number }[]) =>
    lags.filter((l) => l.topic === env.KAFKA_EVENTS_TOPIC).reduce((sum, l) => sum + l.lag, 0);

  it('keeps one admin connection; scrapes in a burst share one reading; a later scrape is fresh', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [env.KAFKA_EVENTS_TOPIC, env.KAFKA_CATALOG_TOPIC].map((topic) => ({ topic, numPartitions: 1 })),
    });
    await admin.disconnect();
    await produce(
      kafka,
      env.KAFKA_EVENTS_TOPIC,
      [1, 2, 3, 4].map((i) => ({ i })),
    );

    // Nothing committed by the group: it lags by all 4.
    expect(eventsLag(await reader())).toBe(4);
    // A burst of scrapes: one reading.
    const burst = [reader(), reader(), reader()];
    expect(burst[1]).toBe(burst[0]);
    expect(burst[2]).toBe(burst[0]);
    expect(eventsLag(await burst[0]!)).toBe(4);
    await produce(
      kafka,
      env.KAFKA_EVENTS_TOPIC,
      [5, 6].map((i) => ({ i })),
    );
    expect(eventsLag(await reader())).toBe(6);
    // Five readings, one connection.
    expect(reader.connections()).toBe(1);
  }, 60_000);
});
