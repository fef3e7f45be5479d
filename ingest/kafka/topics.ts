import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';

export const kafkaTopics = (c: Config) => ({
  events: c.KAFKA_EVENTS_TOPIC,
  catalog: c.KAFKA_CATALOG_TOPIC,
  dlq: c.KAFKA_DLQ_TOPIC,
});

export function createKafka(c: Config, log: Logger, probe?: { retries: number; quiet: boolean }): Kafka {
  return new Kafka({
    clientId: c.KAFKA_CLIENT_ID,
    brokers: c.KAFKA_BROKERS,
    // A broker restart is ridden out: keep retrying instead of giving up after kafkajs' default 5.
    retry: { retries: probe?.retries ?? 50, initialRetryTime: 200, maxRetryTime: 5_000 },
    logLevel: probe?.quiet ? logLevel.NOTHING : logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }) => {
        const { message, ...rest } = entry;
        if (level <= logLevel.ERROR) log.error(rest, `kafka: ${message}`);
        else log.warn(rest, `kafka: ${message}`);
      },
  });
}

/** Create the service's topics when missing. */
export async function ensureTopics(kafka: Kafka, c: Config): Promise<void> {
  const admin: Admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = Object.values(kafkaTopics(c)).filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions: c.KAFKA_PARTITIONS })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}
