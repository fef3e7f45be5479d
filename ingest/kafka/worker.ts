import {
  Partitioners,
  type Consumer,
  type EachBatchPayload,
  type Kafka,
  type KafkaMessage,
  type Producer,
} from 'kafkajs';
import type { KafkaProgress } from '../../shared/clickhouse/kafka-progress.js';
import type { Logger } from '../../shared/log.js';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import type { Pipeline } from '../pipeline.js';

export interface WorkerOptions {
  groupId: string;
  topics: { events: string; catalog: string; dlq: string };
  maxBatchRecords: number;
  maxBatchMs: number;
  sessionTimeoutMs: number;
}

/** A record larger than this goes to the dead-letter topic unread. */
const MAX_RECORD_BYTES = 1024 * 1024;
const MAX_BACKOFF_MS = 10_000;

/**
 * The ingest role: consume → validate → dead-letter the invalid → write the valid → commit. Offsets
 * are committed only after the records before them are durable. Before each write the partition's
 * offset range is recorded, so whoever re-reads the partition after a crash or rebalance re-forms the
 * same range and writes it with the same deduplication token (ARCHITECTURE.md, "Counted once").
 */
export class IngestWorker {
  private readonly consumer: Consumer;
  private readonly dlq: Producer;
  private readonly failures = new Map<string, number>();

  constructor(
    kafka: Kafka,
    private readonly pipeline: Pipeline,
    private readonly progress: KafkaProgress,
    private readonly opts: WorkerOptions,
    private readonly log: Logger,
  ) {
    this.consumer = kafka.consumer({
      groupId: opts.groupId,
      sessionTimeout: opts.sessionTimeoutMs,
      heartbeatInterval: Math.floor(opts.sessionTimeoutMs / 10),
      // The broker gathers a batch for up to maxBatchMs (or until minBytes): batching by time and size.
      maxWaitTimeInMs: opts.maxBatchMs,
      minBytes: 1024 * 1024,
      maxBytesPerPartition: 16 * 1024 * 1024,
      retry: { retries: 50, initialRetryTime: 200, maxRetryTime: 5_000, restartOnFailure: async () => true },
    });
    this.dlq = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      // kafkajs 2's default (murmur2, as Java clients), named so that it does not warn at start.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  async start(): Promise<void> {
    await this.dlq.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({
      topics: [this.opts.topics.catalog, this.opts.topics.events],
      fromBeginning: true,
    });
    this.consumer.on(this.consumer.events.CRASH, (e) =>
      this.log.warn({ err: e.payload.error }, 'kafka consumer crashed; restarting'),
    );
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // Partitions are decoded and validated concurrently; their writes queue in the pipeline.
      partitionsConsumedConcurrently: 4,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  /** Stop consuming (the batch in progress finishes), leave the group, close the DLQ producer. */
  async stop(): Promise<void> {
    await this.consumer.disconnect();
    await this.dlq.disconnect();
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const key = `${batch.topic}:${batch.partition}`;
    let firstUnwritten = batch.messages[0]?.offset;
    try {
      for (const chunk of await this.chunks(batch.topic, batch.partition, batch.messages)) {
        if (!payload.isRunning() || payload.isStale()) return;
        await this.writeChunk(batch.topic, batch.partition, chunk);
        const last = chunk.at(-1)!.offset;
        payload.resolveOffset(last);
        firstUnwritten = next(last);
        await this.consumer.commitOffsets([
          { topic: batch.topic, partition: batch.partition, offset: firstUnwritten },
        ]);
        await payload.heartbeat();
      }
      this.failures.delete(key);
    } catch (err) {
      // ClickHouse (or the DLQ) failed: nothing past the last durable chunk was committed. Re-read from
      // there after a backoff; the partition is paused meanwhile, the process keeps running.
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const delay = Math.min(MAX_BACKOFF_MS, 200 * 2 ** (n - 1));
      this.log.warn(
        { err, topic: batch.topic, partition: batch.partition, retry_in_ms: delay },
        'batch not stored; will retry',
      );
      if (firstUnwritten)
        this.consumer.seek({ topic: batch.topic, partition: batch.partition, offset: firstUnwritten });
      const resume = payload.pause();
      setTimeout(resume, delay).unref();
    }
  }

  /** Split a fetch into writes; a range recorded but maybe not finished before is re-formed first. */
  private async chunks(
    topic: string,
    partition: number,
    messages: KafkaMessage[],
  ): Promise<KafkaMessage[][]> {
    const out: KafkaMessage[][] = [];
    const pending = await this.progress.last(topic, partition);
    let rest = messages;
    if (pending && messages.length > 0 && BigInt(messages[0]!.offset) <= BigInt(pending.last)) {
      const head = messages.filter((m) => BigInt(m.offset) <= BigInt(pending.last));
      if (BigInt(head.at(-1)!.offset) < BigInt(pending.last)) {
        throw new Error(`fetch ended before the pending range ${pending.first}-${pending.last}; retrying`);
      }
      out.push(head);
      rest = messages.slice(head.length);
    }
    for (let i = 0; i < rest.length; i += this.opts.maxBatchRecords)
      out.push(rest.slice(i, i + this.opts.maxBatchRecords));
    return out;
  }

  private async writeChunk(topic: string, partition: number, chunk: KafkaMessage[]): Promise<void> {
    const range = { first: chunk[0]!.offset, last: chunk.at(-1)!.offset };
    const records: MailstatsRecord[] = [];
    const dead: { message: KafkaMessage; reason: string }[] = [];
    for (const message of chunk) {
      const decoded = decode(message);
      if ('reason' in decoded) dead.push({ message, reason: decoded.reason });
      else records.push(decoded.record);
    }
    await this.progress.begin(topic, partition, range);
    if (dead.length > 0) await this.deadLetter(topic, partition, dead);
    await this.pipeline.write(
      records,
      `${this.opts.groupId}:${topic}:${partition}:${range.first}-${range.last}`,
    );
  }

  private async deadLetter(
    topic: string,
    partition: number,
    dead: { message: KafkaMessage; reason: string }[],
  ) {
    await this.dlq.send({
      topic: this.opts.topics.dlq,
      acks: -1,
      messages: dead.map(({ message, reason }) => ({
        key: message.key,
        value: message.value,
        headers: {
          ...message.headers,
          'mailstats-reason': reason,
          'mailstats-source-topic': topic,
          'mailstats-source-partition': String(partition),
          'mailstats-source-offset': message.offset,
        },
      })),
    });
    this.log.info({ topic, partition, count: dead.length }, 'records dead-lettered');
  }
}

const next = (offset: string) => (BigInt(offset) + 1n).toString();

function decode(message: KafkaMessage): { record: MailstatsRecord } | { reason: string } {
  if (!message.value || message.value.length === 0) return { reason: 'empty message' };
  if (message.value.length > MAX_RECORD_BYTES)
    return { reason: `record larger than ${MAX_RECORD_BYTES} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(message.value.toString('utf8'));
  } catch (err) {
    return { reason: `not valid JSON: ${(err as Error).message}` };
  }
  const check = checkRecord(value);
  return check.ok ? { record: check.record } : { reason: check.reason };
}
