// Modes: embedded only — the test harness's Kafka broker itself, no store
// The test harness's Kafka itself: the broker the global setup provides carries acknowledged messages
// to a consumer group exactly once, and a local broker keeps its data and group offsets over a restart.
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { startKafkaBroker } from '../../scripts/kafka/broker.mjs';

interface Received {
  key: string;
  value: string;
  partition: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function kafkaClient(brokers: string): Kafka {
  return new Kafka({
    clientId: 'kafka-broker-test',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    // Generous retries: a restarted broker takes a few seconds to serve again.
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 5_000 },
  });
}

/** Create `topic` with `partitions` partitions; returns how many partitions the broker reports. */
async function createTopic(kafka: Kafka, topic: string, partitions: number): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions }] });
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]?.partitions.length ?? 0;
  } finally {
    await admin.disconnect();
  }
}

/** Messages k<i> → v<i> for i in [from, to), in batches, each acknowledged by all in-sync replicas. */
async function produce(producer: Producer, topic: string, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 100) {
    const end = Math.min(start + 100, to);
    const messages = Array.from({ length: end - start }, (_, j) => ({
      key: `k${start + j}`,
      value: `v${start + j}`,
    }));
    await producer.send({ topic, acks: -1, messages });
  }
}

/**
 * Read `topic` with consumer group `groupId` until `expected` messages arrived, then a little longer so
 * that duplicates or extra messages would be seen too. Offsets are committed as the group reads.
 */
async function consume(kafka: Kafka, topic: string, groupId: string, expected: number): Promise<Received[]> {
  const received: Received[] = [];
  // A short fetch wait: disconnect() waits for the fetch in flight (5 s by default).
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let reached!: () => void;
    const allArrived = new Promise<void>((resolve) => (reached = resolve));
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        received.push({ key: String(message.key), value: String(message.value), partition });
        if (received.length >= expected) reached();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      allArrived,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`only ${received.length} of ${expected} messages arrived in 60 s`)),
          60_000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    await sleep(1_500);
  } finally {
    await consumer.disconnect();
  }
  return received;
}

/** "k<i>=v<i>" for i in [from, to), sorted: what a consumer must have seen, each exactly once. */
const expectedPairs = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, j) => `k${from + j}=v${from + j}`).sort();
const pairs = (received: Received[]) => received.map((m) => `${m.key}=${m.value}`).sort();

const source = inject('kafkaBrokerSource');

describe(`the test Kafka broker (${source})`, () => {
  const kafka = kafkaClient(inject('kafkaBrokers'));

  it(
    'delivers 1,000 acknowledged messages over 3 partitions to a consumer group exactly once',
    { timeout: 120_000 },
    async () => {
      const topic = `broker-test-${randomUUID()}`;
      expect(await createTopic(kafka, topic, 3)).toBe(3);

      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        await produce(producer, topic, 0, 1_000);
      } finally {
        await producer.disconnect();
      }

      const received = await consume(kafka, topic, `broker-test-${randomUUID()}`, 1_000);
      expect(received).toHaveLength(1_000);
      expect(pairs(received)).toEqual(expectedPairs(0, 1_000));
      // Keys spread over all partitions, and each partition kept the order it was written in.
      expect(new Set(received.map((m) => m.partition))).toEqual(new Set([0, 1, 2]));
      for (const partition of [0, 1, 2]) {
        const seq = received.filter((m) => m.partition === partition).map((m) => Number(m.key.slice(1)));
        expect(seq).toEqual([...seq].sort((a, b) => a - b));
      }
    },
  );

  // The test owns a second, private broker, so restarting it disturbs no other test file. It needs
  // the local jars (Java and Maven), which the run has when its shared broker is the local one.
  it.runIf(source === 'local')(
    'keeps acknowledged messages and committed group offsets over a broker restart',
    { timeout: 180_000 },
    async () => {
      const broker = await startKafkaBroker();
      try {
        const own = kafkaClient(broker.brokers);
        const topic = `restart-test-${randomUUID()}`;
        const group = `restart-test-${randomUUID()}`;
        expect(await createTopic(own, topic, 3)).toBe(3);

        const producer = own.producer({ idempotent: true, maxInFlightRequests: 1 });
        await producer.connect();
        try {
          await produce(producer, topic, 0, 500);
          expect(pairs(await consume(own, topic, group, 500))).toEqual(expectedPairs(0, 500));

          const pidBefore = broker.pid;
          await broker.restart();
          expect(broker.pid).not.toBe(pidBefore);

          // The same producer reconnects to the restarted broker, at the same address. It is
          // idempotent: a plain producer resends a request whose answer was lost (a busy or
          // restarting broker) and the broker writes it twice; with a producer id and sequence
          // numbers the broker drops the repeat.
          await produce(producer, topic, 500, 1_000);
        } finally {
          await producer.disconnect();
        }

        // The group resumes from its committed offsets: only the new messages, each once.
        const resumed = await consume(own, topic, group, 500);
        expect(pairs(resumed)).toEqual(expectedPairs(500, 1_000));
        // And nothing written before the restart was lost.
        const all = await consume(own, topic, `${group}-all`, 1_000);
        expect(pairs(all)).toEqual(expectedPairs(0, 1_000));
      } finally {
        await broker.stop();
      }
    },
  );
});
