import { Kafka, logLevel } from 'kafkajs';
import type { Config } from '../../shared/config.js';
import type { PartitionLag } from '../../shared/metrics.js';
import { kafkaTopics } from './topics.js';

/** A scrape must not hang on a broker that does not answer. */
const LAG_TIMEOUT_MS = 3_000;

/**
 * Reads the consumer group's lag (log end offset − committed offset, per partition of the events and
 * catalog topics) with a short-lived admin connection. Called when /metrics is scraped, so nothing
 * runs between scrapes and the reading is never stale; a partition without a commit lags by all it holds.
 */
export function consumerLagReader(config: Config): () => Promise<PartitionLag[]> {
  // Its own client: the service's retries 50 times, which would hold a scrape for minutes.
  const kafka = new Kafka({
    clientId: `${config.KAFKA_CLIENT_ID}-lag`,
    brokers: config.KAFKA_BROKERS,
    retry: { retries: 1, initialRetryTime: 100 },
    connectionTimeout: LAG_TIMEOUT_MS,
    logLevel: logLevel.NOTHING,
  });
  const { events, catalog } = kafkaTopics(config);
  const topics = [catalog, events];
  return async () => {
    const admin = kafka.admin();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error('Kafka did not answer in time')), LAG_TIMEOUT_MS);
    });
    try {
      const read = async () => {
        await admin.connect();
        const committed = await admin.fetchOffsets({ groupId: config.KAFKA_GROUP_ID, topics });
        const out: PartitionLag[] = [];
        for (const { topic, partitions } of committed) {
          const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p] as const));
          for (const { partition, offset } of partitions) {
            const end = ends.get(partition);
            if (!end) continue;
            const from = BigInt(offset) >= 0n ? BigInt(offset) : BigInt(end.low);
            const lag = BigInt(end.high) - from;
            out.push({ topic, partition, lag: Number(lag > 0n ? lag : 0n) });
          }
        }
        return out;
      };
      return await Promise.race([read(), timeout]);
    } finally {
      clearTimeout(timer);
      void admin.disconnect().catch(() => undefined);
    }
  };
}
