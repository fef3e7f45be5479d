import type { Config } from '../../shared/config.js';
import type { PartitionLag } from '../../shared/metrics.js';
import type { KafkaAdmin } from './client.js';
import { createKafka, kafkaTopics } from './topics.js';

/** A scrape must not hang on a broker that does not answer. */
const LAG_TIMEOUT_MS = 3_000;

export interface ConsumerLagReader {
  (): Promise<PartitionLag[]>;
  /** Admin connections opened so far (one, unless the broker dropped it). */
  connections(): number;
  close(): Promise<void>;
}

/**
 * Reads the consumer group's lag (log end offset − committed offset, per partition of the events and
 * catalog topics) when /metrics is scraped, through one admin connection kept open between scrapes (a
 * scrape used to open one of its own), and scrapes while one is under way share it. A partition without a
 * commit lags by all it holds. A failed reading drops the connection; the next scrape opens a new one.
 */
export function consumerLagReader(config: Config): ConsumerLagReader {
  // Its own client: the service's retries 50 times, which would hold a scrape for minutes.
  const kafka = createKafka(config, undefined, {
    clientId: `${config.KAFKA_CLIENT_ID}-lag`,
    retries: 1,
    initialRetryMs: 100,
    connectionTimeoutMs: LAG_TIMEOUT_MS,
  });
  const { events, catalog } = kafkaTopics(config);
  const topics = [catalog, events];
  let admin: KafkaAdmin | undefined;
  let connections = 0;
  let inFlight: Promise<PartitionLag[]> | undefined;

  const connected = async (): Promise<KafkaAdmin> => {
    if (admin) return admin;
    const fresh = kafka.admin();
    connections++;
    await fresh.connect();
    admin = fresh;
    return fresh;
  };
  const drop = () => {
    const old = admin;
    admin = undefined;
    void old?.disconnect().catch(() => undefined);
  };
  const read = async (): Promise<PartitionLag[]> => {
    const a = await connected();
    const committed = await a.fetchOffsets({ groupId: config.KAFKA_GROUP_ID, topics });
    const out: PartitionLag[] = [];
    for (const { topic, partitions } of committed) {
      const ends = new Map((await a.fetchTopicOffsets(topic)).map((p) => [p.partition, p] as const));
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
  const timed = async (): Promise<PartitionLag[]> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error('Kafka did not answer in time')), LAG_TIMEOUT_MS);
    });
    try {
      return await Promise.race([read(), timeout]);
    } catch (err) {
      drop();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };

  // Scrapes while a reading is under way share it; a reading is never served after it ended, so a
  // scrape right after a change sees it.
  const reader = () => {
    inFlight ??= timed().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
  return Object.assign(reader, {
    connections: () => connections,
    close: async () => {
      const old = admin;
      admin = undefined;
      await old?.disconnect().catch(() => undefined);
    },
  });
}
