import { Kafka, Partitioners, logLevel, type KafkaConfig } from 'kafkajs';
import type { Logger } from '../../shared/log.js';
import {
  RecordsRefused,
  type ClientSettings,
  type ConsumerOptions,
  type KafkaAdmin,
  type KafkaClient,
  type KafkaConsumer,
  type KafkaProducer,
  type KafkaSecurity,
} from './client.js';

/**
 * The seam's adapter for kafkajs 2 (client.ts): the one module of the service that imports a Kafka
 * client library (a dependency-cruiser rule holds it so). kafkajs' own shapes are the seam's (offsets
 * as strings, a batch per partition), so batches and messages pass through as they are: the adapter
 * costs nothing per record.
 */

/** A kafkajs client from the seam's settings; its log goes to `log` (warnings and errors), or nowhere. */
export function kafkajsClient(settings: ClientSettings, log?: Logger): KafkaClient {
  const retryMs = settings.initialRetryMs ?? 200;
  return wrapKafkajs(
    new Kafka({
      clientId: settings.clientId,
      brokers: settings.brokers,
      ...security(settings),
      retry: { retries: settings.retries, initialRetryTime: retryMs, maxRetryTime: 5_000 },
      ...(settings.connectionTimeoutMs !== undefined && { connectionTimeout: settings.connectionTimeoutMs }),
      logLevel: log ? logLevel.WARN : logLevel.NOTHING,
      ...(log && {
        logCreator:
          () =>
          ({ level, log: entry }) => {
            const { message, ...rest } = entry;
            if (level <= logLevel.ERROR) log.error(rest, `kafka: ${message}`);
            else log.warn(rest, `kafka: ${message}`);
          },
      }),
    }),
  );
}

function security(s: KafkaSecurity): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  return {
    ...(s.ssl && { ssl: s.ssl }),
    ...(s.sasl && { sasl: { ...s.sasl } as KafkaConfig['sasl'] }),
  };
}

/** The seam over an existing kafkajs client (also what a test's stand-in of kafkajs goes through). */
export function wrapKafkajs(kafka: Kafka): KafkaClient {
  return {
    consumer: (options) => consumer(kafka, options),
    producer: () => producer(kafka),
    admin: () => admin(kafka),
  };
}

function consumer(kafka: Kafka, o: ConsumerOptions): KafkaConsumer {
  const c = kafka.consumer({
    groupId: o.groupId,
    sessionTimeout: o.sessionTimeoutMs,
    ...(o.heartbeatIntervalMs !== undefined && { heartbeatInterval: o.heartbeatIntervalMs }),
    ...(o.maxWaitMs !== undefined && { maxWaitTimeInMs: o.maxWaitMs }),
    ...(o.minBytes !== undefined && { minBytes: o.minBytes }),
    ...(o.maxBytesPerPartition !== undefined && { maxBytesPerPartition: o.maxBytesPerPartition }),
    ...(o.maxBytes !== undefined && { maxBytes: o.maxBytes }),
    ...(o.allowAutoTopicCreation !== undefined && { allowAutoTopicCreation: o.allowAutoTopicCreation }),
    // kafkajs gives up on a consumer after 5 retries by default: a broker restart is ridden out instead.
    ...(o.patient && {
      retry: { retries: 50, initialRetryTime: 200, maxRetryTime: 5_000, restartOnFailure: async () => true },
    }),
  });
  return {
    connect: () => c.connect(),
    disconnect: () => c.disconnect(),
    subscribe: (q) => c.subscribe(q),
    // Offsets are resolved and committed by the caller only (after the store holds the records).
    run: ({ partitionsConsumedConcurrently, eachBatch }) =>
      c.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        ...(partitionsConsumedConcurrently !== undefined && { partitionsConsumedConcurrently }),
        // kafkajs' payload is a BatchHandle as it is: no copy per batch or message.
        eachBatch,
      }),
    seek: (p) => c.seek(p),
    commitOffsets: (offsets) => c.commitOffsets(offsets),
    pause: (partitions) => c.pause(partitions),
    onJoin: (listener) => void c.on(c.events.GROUP_JOIN, (e) => listener(e.payload.memberAssignment)),
    // After a crash kafkajs disconnects the consumer, then emits CRASH with `restart` = whether it
    // starts the consumer again itself (only after errors it deems retriable).
    onCrash: (listener) => void c.on(c.events.CRASH, (e) => listener(e.payload.error, e.payload.restart)),
    onLeave: (listener) => {
      for (const e of [c.events.CRASH, c.events.STOP, c.events.DISCONNECT]) c.on(e, () => listener());
    },
  };
}

/** The broker refused the records themselves: kafkajs wraps that protocol error (its `type`) as `cause`. */
const REFUSED = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);
function refusal(err: unknown): boolean {
  for (let e = err as { type?: string; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (e.type && REFUSED.has(e.type)) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/**
 * Idempotent with one request in flight. kafkajs keeps the idempotent producer's guarantee only with
 * unlimited retries (it warns "Limiting retries for the idempotent producer may invalidate EoS
 * guarantees" otherwise): a retry that gave up would leave a sequence gap the next send cannot close.
 */
function producer(kafka: Kafka): KafkaProducer {
  const p = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 5_000 },
    // kafkajs 2's default (murmur2, as Java clients), named so that it does not warn at start.
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  return {
    connect: () => p.connect(),
    disconnect: () => p.disconnect(),
    send: async (topicMessages) => {
      try {
        await p.sendBatch({ acks: -1, topicMessages });
      } catch (err) {
        if (refusal(err)) throw new RecordsRefused((err as Error).message, { cause: err });
        throw err;
      }
    },
  };
}

function admin(kafka: Kafka): KafkaAdmin {
  const a = kafka.admin();
  return {
    connect: () => a.connect(),
    disconnect: () => a.disconnect(),
    listTopics: () => a.listTopics(),
    createTopics: async (topics) => {
      await a.createTopics({ waitForLeaders: true, topics });
    },
    fetchOffsets: async (q) =>
      (await a.fetchOffsets(q)).map(({ topic, partitions }) => ({
        topic,
        partitions: partitions.map(({ partition, offset }) => ({ partition, offset })),
      })),
    fetchTopicOffsets: async (topic) =>
      (await a.fetchTopicOffsets(topic)).map(({ partition, low, high }) => ({ partition, low, high })),
    deleteGroups: async (ids) => {
      await a.deleteGroups(ids);
    },
  };
}
