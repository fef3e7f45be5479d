/**
 * The seam between mailstats and its Kafka client library: exactly what the worker, the producer sink,
 * the dead-letter reader, the lag reader and the publish CLI use of a client, and nothing more. Only
 * the adapter (`kafkajs.ts`, today's client) imports a client library; everything else in
 * `ingest/kafka/` is written against these types, so that another client (@platformatic/kafka,
 * @confluentinc/kafka-javascript) replaces kafkajs by writing one adapter (ARCHITECTURE.md, "The Kafka
 * client"). The shapes follow what the code used of kafkajs (offsets as decimal strings, a batch per
 * fetched partition), which keeps the exactly-once code unchanged and costs kafkajs nothing to adapt.
 */

/** Header values as a client delivers them (a header may repeat). */
export type HeaderValue = Buffer | string | (Buffer | string)[] | undefined;

/** A consumed message. Offsets and timestamps are decimal strings (64-bit, beyond a JS number). */
export interface KafkaRecord {
  offset: string;
  key?: Buffer | null;
  /** Null for a tombstone, which must stay distinguishable from an empty message. */
  value: Buffer | null;
  /** Milliseconds since the epoch. */
  timestamp: string;
  headers?: Record<string, HeaderValue>;
}

/** A message to produce. */
export interface OutgoingRecord {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, HeaderValue>;
}

export interface TopicRecords {
  topic: string;
  messages: OutgoingRecord[];
}

/**
 * Idempotent (the broker drops a resent request: each message is held once), one request in flight
 * (order kept per partition), every send acknowledged by all in-sync replicas (acks = all). Retries are
 * the adapter's and unbounded (a retry that gave up would leave a sequence gap); callers bound their
 * wait instead (`withTimeout`).
 */
export interface KafkaProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** One request per call (callers keep it within the broker's limits: `byteBatches`). */
  send(records: TopicRecords[]): Promise<void>;
}

/** A partition's log start (`low`) and end (`high`, the next offset to be written). */
export interface PartitionOffsets {
  partition: number;
  low: string;
  high: string;
}

/** A group's committed offsets per topic; "-1" for a partition without a commit. */
export interface CommittedOffsets {
  topic: string;
  partitions: { partition: number; offset: string }[];
}

export interface KafkaAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  listTopics(): Promise<string[]>;
  /** Creates the topics and returns once each partition has a leader. */
  createTopics(topics: { topic: string; numPartitions: number }[]): Promise<void>;
  /** The group's committed offsets of every partition of `topics`. */
  fetchOffsets(query: { groupId: string; topics: string[] }): Promise<CommittedOffsets[]>;
  fetchTopicOffsets(topic: string): Promise<PartitionOffsets[]>;
  deleteGroups(groupIds: string[]): Promise<void>;
}

/** The messages of one partition from one fetch, in offset order. */
export interface FetchedBatch {
  topic: string;
  partition: number;
  messages: KafkaRecord[];
  /** The partition's end when fetched: the offset the next message will get. */
  highWatermark: string;
  /** The last offset the fetch covered, messages or not (transaction markers, compacted offsets). */
  lastOffset(): string;
}

/** One batch handed to `eachBatch`, with the controls the worker needs while it works through it. */
export interface BatchHandle {
  batch: FetchedBatch;
  /** A rebalance or a seek since the fetch: its messages must not be written. */
  isStale(): boolean;
  /** False once the consumer is stopping. */
  isRunning(): boolean;
  /** Mark this offset processed (the next fetch of this consumer starts after it). */
  resolveOffset(offset: string): void;
  /** Tell the group coordinator this member is alive (a long write must not cost a rebalance). */
  heartbeat(): Promise<void>;
  /** Stop fetching this partition; the function returned resumes it. */
  pause(): () => void;
}

export interface ConsumerOptions {
  groupId: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs?: number;
  /** How long the broker may gather a fetch (up to `minBytes`). */
  maxWaitMs?: number;
  minBytes?: number;
  maxBytesPerPartition?: number;
  maxBytes?: number;
  /**
   * Ride out broker restarts: retry for minutes and start again after any failure (the service's
   * worker). Otherwise the adapter's defaults (the CLI's dead-letter read).
   */
  patient?: boolean;
  allowAutoTopicCreation?: boolean;
}

/**
 * A member of a consumer group. Offsets are never committed by the client itself: only `commitOffsets`
 * commits (after the store holds what precedes the offset: ARCHITECTURE.md, "Through Kafka").
 */
export interface KafkaConsumer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  subscribe(query: { topics: string[]; fromBeginning: boolean }): Promise<void>;
  /** Start fetching; resolves once running. `eachBatch` is called per partition and fetch, awaited. */
  run(options: {
    partitionsConsumedConcurrently?: number;
    eachBatch: (handle: BatchHandle) => Promise<void>;
  }): Promise<void>;
  /** The next fetch of this partition starts at `offset` (batches fetched before are stale). */
  seek(position: { topic: string; partition: number; offset: string }): void;
  /** Commit the group's offsets: the next offset to read, per partition. */
  commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void>;
  pause(partitions: { topic: string; partitions: number[] }[]): void;
  /** The group assigned this member its partitions (by topic): before any batch of the assignment. */
  onJoin(listener: (assignment: Record<string, number[]>) => void): void;
  /**
   * The consumer stopped on an error. `restart`: the client starts it again itself; otherwise it stays
   * disconnected until `run` is called again.
   */
  onCrash(listener: (error: unknown, restart: boolean) => void): void;
  /** The member is out of its group: crashed, stopped or disconnected. */
  onLeave(listener: () => void): void;
}

/** A client for one cluster: the factory of the three roles above. */
export interface KafkaClient {
  consumer(options: ConsumerOptions): KafkaConsumer;
  producer(): KafkaProducer;
  admin(): KafkaAdmin;
}

/** TLS and SASL as configured (docs/configuration.md), in no client's terms: each adapter maps them. */
export interface KafkaSecurity {
  /** true: TLS with the system CAs; else with the given CA, and a client certificate and key for mutual TLS. */
  ssl?: true | { ca?: string[]; cert?: string; key?: string };
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
}

/** What a client is created with. */
export interface ClientSettings extends KafkaSecurity {
  clientId: string;
  brokers: string[];
  /** How often a failed request is retried (the service rides out a broker restart: 50). */
  retries: number;
  /** The first retry's wait; it doubles up to a few seconds. */
  initialRetryMs?: number;
  connectionTimeoutMs?: number;
}

/**
 * The broker refused the records themselves (size, format): sending them again can never succeed.
 * Adapters throw this from `KafkaProducer.send` for such refusals, so that callers can tell them from
 * a broker that is away.
 */
export class RecordsRefused extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RecordsRefused';
  }
}
