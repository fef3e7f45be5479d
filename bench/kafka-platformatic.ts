/**
 * The Kafka seam (ingest/kafka/client.ts) over @platformatic/kafka, as far as the peer bench needs it:
 * a group consumer's `run`/`eachBatch` (whole-topic reads) and the idempotent, acks = all producer.
 * Bench-only (installed on first use, bench/peer-package.ts): it measures what the service's path would get from this client behind
 * the same interface, and shows what an adapter has to bridge (ARCHITECTURE.md, "The Kafka client").
 * What it does not do — seek, pause, group join and crash events, admin — throws, naming the gap.
 */
import type {
  BatchHandle,
  KafkaClient,
  KafkaConsumer,
  KafkaProducer,
  KafkaRecord,
  OutgoingRecord,
} from '../ingest/kafka/client.js';
import { importPeer } from './peer-package.js';

/** A message as @platformatic/kafka's consumer stream gives it (the part used here). */
interface Message {
  topic: string;
  partition: number;
  offset: bigint;
  key?: Buffer | null;
  value?: Buffer | null;
  timestamp: bigint;
  headers: Map<Buffer, Buffer>;
}

/** The part of @platformatic/kafka used here (installed on first use: ./peer-package.ts). */
// Its own type declarations come with it into .cache/bench-peers, out of the type checker's reach.
/* eslint-disable @typescript-eslint/no-explicit-any */
interface PlatformaticKafka {
  Consumer: new (options: object) => any;
  Producer: new (options: object) => any;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Messages the consumer's stream buffers: 65,536 (about one fetch) measured faster than its 1,024. */
const STREAM_BUFFER = 65_536;

const gap = (what: string) => () => {
  throw new Error(
    `${what}: not in the bench's @platformatic/kafka adapter (ARCHITECTURE.md, "The Kafka client")`,
  );
};

const buffer = (v: Buffer | string | null | undefined) =>
  v === null || v === undefined ? undefined : typeof v === 'string' ? Buffer.from(v) : v;

/**
 * A platformatic message as the seam's record: offsets and timestamps from bigint to decimal strings,
 * headers from a Map of Buffers to an object (one allocation per message that kafkajs does not need).
 */
function record(m: Message): KafkaRecord {
  let headers: Record<string, Buffer> | undefined;
  if (m.headers.size > 0) {
    headers = {};
    for (const [k, v] of m.headers) headers[k.toString()] = v;
  }
  return {
    offset: m.offset.toString(),
    key: m.key ?? null,
    // A tombstone's value comes as undefined (an empty message's as an empty Buffer): null, as the seam says.
    value: m.value ?? null,
    timestamp: m.timestamp.toString(),
    ...(headers && { headers }),
  };
}

export async function platformaticClient(settings: {
  clientId: string;
  brokers: string[];
}): Promise<KafkaClient> {
  const { Consumer, Producer } = await importPeer<PlatformaticKafka>('@platformatic/kafka', '1.35.0');
  return {
    consumer: (o): KafkaConsumer => {
      const consumer = new Consumer({
        groupId: o.groupId,
        clientId: settings.clientId,
        bootstrapBrokers: settings.brokers,
        sessionTimeout: o.sessionTimeoutMs,
        ...(o.heartbeatIntervalMs !== undefined && { heartbeatInterval: o.heartbeatIntervalMs }),
      });
      let topics: string[] = [];
      let earliest = true;
      let close: (() => Promise<void>) | undefined;
      return {
        connect: async () => {},
        subscribe: async (q) => {
          topics = q.topics;
          earliest = q.fromBeginning;
        },
        // platformatic streams messages one by one; the seam hands out a batch per partition. The
        // adapter gathers what the stream delivered in one turn of the event loop, per partition, and
        // holds the stream while `eachBatch` runs (the worker's back-pressure).
        run: async ({ eachBatch }) => {
          const stream = await consumer.consume({
            topics,
            mode: earliest ? 'earliest' : 'committed',
            autocommit: false,
            ...(o.maxBytesPerPartition !== undefined && { maxBytesPerPartition: o.maxBytesPerPartition }),
            ...(o.maxBytes !== undefined && { maxBytes: o.maxBytes }),
            ...(o.minBytes !== undefined && { minBytes: o.minBytes }),
            ...(o.maxWaitMs !== undefined && { maxWaitTime: o.maxWaitMs }),
            highWaterMark: STREAM_BUFFER,
          });
          close = () => stream.close();
          let gathered = new Map<string, { topic: string; partition: number; messages: KafkaRecord[] }>();
          let flushing = false;
          const flush = async () => {
            const batches = [...gathered.values()];
            gathered = new Map();
            stream.pause();
            try {
              for (const b of batches) {
                const last = b.messages.at(-1)!.offset;
                const handle: BatchHandle = {
                  batch: {
                    ...b,
                    // Not in the stream's messages: a full adapter reads it from the fetch response.
                    highWatermark: (BigInt(last) + 1n).toString(),
                    lastOffset: () => last,
                  },
                  isStale: () => false,
                  isRunning: () => true,
                  resolveOffset: () => {},
                  heartbeat: async () => {}, // platformatic heartbeats by itself
                  pause: gap('BatchHandle.pause'),
                };
                await eachBatch(handle);
              }
            } finally {
              flushing = false;
              stream.resume();
            }
          };
          stream.on('data', (m: Message) => {
            const key = `${m.topic}:${m.partition}`;
            let b = gathered.get(key);
            if (!b) gathered.set(key, (b = { topic: m.topic, partition: m.partition, messages: [] }));
            b.messages.push(record(m));
            if (!flushing) {
              flushing = true;
              setImmediate(() => void flush());
            }
          });
        },
        disconnect: async () => {
          await close?.();
          await consumer.close(true);
        },
        seek: gap('KafkaConsumer.seek'),
        commitOffsets: async (offsets) => {
          await consumer.commit({
            // The next offset to read, as the seam's (what platformatic's own message.commit() sends).
            offsets: offsets.map((p) => ({
              topic: p.topic,
              partition: p.partition,
              offset: BigInt(p.offset),
              leaderEpoch: 0,
            })),
          });
        },
        pause: gap('KafkaConsumer.pause'),
        onJoin: gap('KafkaConsumer.onJoin'),
        onCrash: gap('KafkaConsumer.onCrash'),
        onLeave: gap('KafkaConsumer.onLeave'),
      };
    },
    producer: (): KafkaProducer => {
      const producer = new Producer({
        clientId: settings.clientId,
        bootstrapBrokers: settings.brokers,
        idempotent: true,
        acks: -1,
      });
      return {
        connect: async () => {},
        disconnect: () => producer.close(),
        send: async (records) => {
          const messages = records.flatMap(({ topic, messages: ms }) =>
            ms.map((m: OutgoingRecord) => ({
              topic,
              key: buffer(m.key),
              value: buffer(m.value),
              ...(m.headers && {
                headers: new Map(
                  Object.entries(m.headers).flatMap(([k, v]) =>
                    v === undefined ? [] : [[Buffer.from(k), buffer(Array.isArray(v) ? v[0] : v)!] as const],
                  ),
                ),
              }),
            })),
          );
          await producer.send({ messages });
        },
      };
    },
    admin: gap('KafkaClient.admin'),
  };
}
