import { createHash } from 'node:crypto';
import type { KafkaProgress, RecordedRange } from '../../shared/clickhouse/kafka-progress.js';
import { DEFAULT_FETCH_MAX_BYTES } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import { backoffMs } from '../../shared/retry.js';
import { countKafkaChunk } from '../../shared/metrics.js';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import type { Pipeline } from '../pipeline.js';
import {
  RecordsRefused,
  type BatchHandle,
  type KafkaAdmin,
  type KafkaClient,
  type KafkaConsumer,
  type KafkaProducer,
  type KafkaRecord,
  type OutgoingRecord,
} from './client.js';
import { byteBatches, MAX_REQUEST_BYTES, messageBytes } from './messages.js';
import { digest, fingerprint, matchRange, resumeOffset } from './ranges.js';
import { withTimeout } from './topics.js';

export interface WorkerOptions {
  groupId: string;
  topics: { events: string; catalog: string; dlq: string };
  maxBatchRecords: number;
  maxBatchMs: number;
  sessionTimeoutMs: number;
  /** What one fetch may bring, all partitions together (KAFKA_FETCH_MAX_BYTES): the worker's byte budget. */
  fetchMaxBytes?: number;
}

/**
 * A fetch's share per partition of KAFKA_FETCH_MAX_BYTES: half, so that one busy partition cannot take
 * the whole response while another waits (8 MiB of the default 16: a full 50,000-record write of records
 * of ~150 bytes; larger records make smaller writes, docs/configuration.md).
 */
const PARTITION_SHARE = 2;
/** A record larger than this goes to the dead-letter topic unread. */
const MAX_RECORD_BYTES = 1024 * 1024;
const MAX_BACKOFF_MS = 10_000;
/**
 * A dead letter carries at most this much of its message: the DLQ topic may keep the broker's default
 * 1 MiB limit while its source topic allows more. The full size and SHA-256 go in headers.
 */
const DLQ_VALUE_BYTES = 512 * 1024;
/** How long a DLQ send may take before the batch is retried (the send may still land: a duplicate). */
const DLQ_TIMEOUT_MS = 30_000;
/** How long reading the group's committed offset or a log start may take (the batch is retried after). */
const ADMIN_TIMEOUT_MS = 5_000;

/**
 * The ingest role: consume → validate → dead-letter the invalid → write the valid → commit. Offsets
 * are committed only after the records before them are durable. Before each write the partition's
 * offset range is recorded, so whoever re-reads the partition after a crash or rebalance re-forms the
 * same range and writes it with the same deduplication token (ARCHITECTURE.md, "Counted once").
 */
export class IngestWorker {
  private readonly consumer: KafkaConsumer;
  private readonly dlq: KafkaProducer;
  private readonly failures = new Map<string, number>();
  private member = false;
  private stopped = false;
  /**
   * Partitions whose committed offset was held against the store's progress since the last group
   * join (`resumeAssigned`, else `resumeBatch`): a store never changes under a running worker, so
   * once per assignment.
   */
  private readonly resumed = new Set<string>();
  /** The last join's check of its assignment (`resumeAssigned`, never rejects): batches wait for it. */
  private joined: Promise<void> = Promise.resolve();
  private joins = 0;
  /** For the group's committed offsets and log starts; opened when first needed. */
  private admin: KafkaAdmin | undefined;

  constructor(
    private readonly kafka: KafkaClient,
    private readonly pipeline: Pipeline,
    private readonly progress: KafkaProgress,
    private readonly opts: WorkerOptions,
    private readonly log: Logger,
  ) {
    const fetchMaxBytes = opts.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES;
    this.consumer = kafka.consumer({
      groupId: opts.groupId,
      sessionTimeoutMs: opts.sessionTimeoutMs,
      heartbeatIntervalMs: Math.floor(opts.sessionTimeoutMs / 10),
      // The broker gathers a batch for up to maxBatchMs (or until minBytes): batching by time and size.
      maxWaitMs: opts.maxBatchMs,
      minBytes: 1024 * 1024,
      // Fetches large enough that a write carries up to maxBatchRecords (each write has a fixed cost of
      // several engine statements: fewer, fuller writes), and no larger: all of a fetch — the response
      // and a decoded message per record — is held until its last write ends (docs/operations.md "Memory").
      maxBytesPerPartition: Math.ceil(fetchMaxBytes / PARTITION_SHARE),
      maxBytes: fetchMaxBytes,
      // A broker restart is ridden out: retried for minutes, started again after any failure.
      patient: true,
    });
    this.dlq = kafka.producer();
    // The log lines name kafkajs as docs/operations.md quotes them: another adapter changes both.
    this.consumer.onCrash((error, restart) => {
      if (restart) {
        this.log.warn({ err: error }, 'kafka consumer crashed; kafkajs restarts it');
        return;
      }
      // kafkajs restarts only after errors it deems retriable. Others (e.g. the group coordinator not
      // found while a broker restarts during a join) leave the consumer disconnected for good: records
      // would stop flowing with no one to notice. Faults only delay (docs/records.md "Counted once"): start it again.
      this.log.error(
        { err: error },
        'kafka consumer stopped on an error kafkajs does not retry; starting it again',
      );
      if (!this.stopped) void this.keepStarting();
    });
    // Group membership for /readyz: in from a join until a crash, stop or disconnect.
    this.consumer.onJoin((assignment) => {
      this.member = true;
      this.resumed.clear();
      this.joined = this.resumeAssigned(assignment, ++this.joins);
    });
    this.consumer.onLeave(() => (this.member = false));
  }

  /**
   * Connect, subscribe and join the group. Joining can take a session timeout after a crash (the
   * dead member's place is kept until then), so callers run this beside the API, not before it.
   */
  async start(): Promise<void> {
    await this.dlq.connect();
    await this.consumer.connect();
    await this.consumer.subscribe({
      topics: [this.opts.topics.catalog, this.opts.topics.events],
      fromBeginning: true,
    });
    // Offsets are committed by this worker only, after the store holds the records before them.
    await this.consumer.run({
      // Partitions are decoded and validated concurrently; their writes queue in the pipeline.
      partitionsConsumedConcurrently: 4,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  /** Whether the consumer is in its group now (readiness). */
  isMember(): boolean {
    return this.member;
  }

  /** `start()`, retried with backoff while Kafka is unreachable, until it succeeds or `stop()`. */
  async keepStarting(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.start();
        // Stopped while starting: leave nothing running (stop() may have found nothing to stop yet).
        if (this.stopped) await this.consumer.disconnect();
        return;
      } catch (err) {
        if (this.stopped) return;
        const retryMs = backoffMs(attempt);
        this.log.warn({ err, attempt, retry_in_ms: retryMs }, 'waiting for Kafka (consumer)');
        await new Promise((r) => setTimeout(r, retryMs).unref());
      }
    }
  }

  /** Stop consuming (the batch in progress finishes), leave the group, close the DLQ producer. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.consumer.disconnect();
    await this.dlq.disconnect();
    await this.dropAdmin();
  }

  private async onBatch(payload: BatchHandle): Promise<void> {
    // kafkajs heartbeats only when asked (`BatchHandle.heartbeat`): a write that waits long in the
    // pipeline's queue (behind an erasure, a re-dating, a starved CPU) would otherwise outlast the
    // session and cost a rebalance and a redelivery. A heartbeat refused (a rebalance under way) is left to the commit to notice.
    const beat = setInterval(
      () => void payload.heartbeat().catch(() => undefined),
      Math.floor(this.opts.sessionTimeoutMs / 10),
    );
    try {
      await this.onBatchBeating(payload);
    } finally {
      clearInterval(beat);
    }
  }

  private async onBatchBeating(payload: BatchHandle): Promise<void> {
    const { batch } = payload;
    const key = `${batch.topic}:${batch.partition}`;
    let firstUncommitted = batch.messages[0]?.offset;
    try {
      // Nothing of a partition is written before its committed offset was held against the store's
      // progress: a range recorded first would hide the gap. A seek of that check makes this fetch stale.
      await this.joined;
      if (payload.isStale()) return;
      const pending =
        batch.messages.length > 0 ? await this.progress.last(batch.topic, batch.partition) : undefined;
      if (batch.messages.length > 0 && !this.resumed.has(key)) {
        const from = await this.resumeBatch(batch.topic, batch.partition, pending, batch.messages[0]!.offset);
        this.resumed.add(key);
        if (from !== undefined) {
          this.consumer.seek({ topic: batch.topic, partition: batch.partition, offset: from });
          return;
        }
      }
      for (const chunk of this.chunks(
        batch.topic,
        batch.partition,
        batch.messages,
        batch.highWatermark,
        pending,
      )) {
        if (!payload.isRunning() || payload.isStale()) return;
        await this.writeChunk(batch.topic, batch.partition, chunk);
        const last = chunk.at(-1)!.offset;
        payload.resolveOffset(last);
        await this.consumer.commitOffsets([
          { topic: batch.topic, partition: batch.partition, offset: next(last) },
        ]);
        // Only past a committed chunk: after a failed commit the chunk is read again and re-formed
        // whole (its recorded range and token), never followed by a new range while the committed
        // offset still points before it — a crash then would re-read both with other boundaries.
        firstUncommitted = next(last);
        await payload.heartbeat();
      }
      this.failures.delete(key);
    } catch (err) {
      // ClickHouse, the DLQ or the offset commit failed: re-read from the first uncommitted offset after
      // a backoff (a stored chunk comes back re-formed with its token); the partition is paused
      // meanwhile, the process keeps running.
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const delay = Math.min(MAX_BACKOFF_MS, 200 * 2 ** (n - 1));
      this.log.warn(
        { err, topic: batch.topic, partition: batch.partition, retry_in_ms: delay },
        'batch not stored; will retry',
      );
      if (firstUncommitted)
        this.consumer.seek({ topic: batch.topic, partition: batch.partition, offset: firstUncommitted });
      const resume = payload.pause();
      setTimeout(resume, delay).unref();
    }
  }

  /**
   * Split a fetch into writes. A range recorded before (maybe not finished) is re-formed first, but
   * only when the fetch starts at it and holds the recorded messages at its ends: otherwise the
   * partition's offsets started again (topic re-created, broker replaced) and the record describes
   * data that is gone, so it is reset (the new messages form new ranges with new tokens).
   */
  private chunks(
    topic: string,
    partition: number,
    messages: KafkaRecord[],
    highWatermark: string,
    pending: RecordedRange | undefined,
  ): KafkaRecord[][] {
    const out: KafkaRecord[][] = [];
    let rest = messages;
    if (pending) {
      const match = matchRange(pending, messages, highWatermark);
      if (match === 'incomplete') {
        throw new Error(`fetch ended before the pending range ${pending.first}-${pending.last}; retrying`);
      }
      if (match === 'stale') {
        this.log.warn(
          { topic, partition, recorded: `${pending.first}-${pending.last}`, fetched: messages[0]!.offset },
          'recorded kafka progress does not describe this partition any more (offsets started again?); reset',
        );
      } else if (Array.isArray(match)) {
        out.push(match);
        rest = messages.slice(match.length);
      }
    }
    for (let i = 0; i < rest.length; i += this.opts.maxBatchRecords)
      out.push(rest.slice(i, i + this.opts.maxBatchRecords));
    return out;
  }

  /**
   * At a group join, before the assignment's first write: each assigned partition whose committed
   * offset is past the store's recorded progress — the store lacks what the group committed: a
   * restored older backup, a lost DATA_DIR — is sought back (`resumeOffset`; docs/lifecycle.md,
   * "backup and restore"). At the join, not at a partition's first fetch: a partition with nothing
   * new after its committed offset gives no fetch at all. The committed offsets are read before the
   * progress: progress is recorded before a commit, so the two never look apart while a batch of the
   * previous assignment is still being stored. When Kafka does not answer, each partition is checked
   * at its first fetch instead (`resumeBatch`).
   */
  private async resumeAssigned(assignment: Record<string, number[]>, join: number): Promise<void> {
    const topics = Object.keys(assignment).filter((t) => (assignment[t] ?? []).length > 0);
    if (topics.length === 0) return;
    try {
      const admin = await this.connectedAdmin();
      const committed = await withTimeout(
        admin.fetchOffsets({ groupId: this.opts.groupId, topics }),
        ADMIN_TIMEOUT_MS,
        'committed offset look-up',
      );
      for (const { topic, partitions } of committed) {
        let starts: Promise<Map<number, string>> | undefined;
        const logStart = (partition: number) => {
          starts ??= this.logStarts(admin, topic);
          return starts.then((m) => m.get(partition) ?? '0');
        };
        for (const { partition, offset } of partitions) {
          if (!assignment[topic]?.includes(partition)) continue;
          const pending = await this.progress.last(topic, partition);
          const from = await this.resumeFrom(topic, partition, pending, offset, () => logStart(partition));
          if (join !== this.joins) return; // another join since: its own check decides
          this.resumed.add(`${topic}:${partition}`);
          if (from !== undefined) this.consumer.seek({ topic, partition, offset: from });
        }
      }
    } catch (err) {
      await this.dropAdmin();
      this.log.warn(
        { err },
        "the group's committed offsets could not be read at the join; each partition is checked at its first fetch",
      );
    }
  }

  /**
   * `resumeAssigned` for one partition at a fetch, when the join's check did not reach it. The
   * group's offset is asked for only when the fetch starts beyond the recorded range's end (or the
   * store recorded nothing): a first fetch starts at the committed offset, so a fetch at or before
   * the range's end says that offset is not past it. Failing, the batch is retried.
   */
  private async resumeBatch(
    topic: string,
    partition: number,
    pending: RecordedRange | undefined,
    fetched: string,
  ): Promise<string | undefined> {
    const start = BigInt(fetched);
    if (pending ? start <= BigInt(pending.last) + 1n : start === 0n) return undefined;
    try {
      const admin = await this.connectedAdmin();
      const [committed] = await withTimeout(
        admin.fetchOffsets({ groupId: this.opts.groupId, topics: [topic] }),
        ADMIN_TIMEOUT_MS,
        'committed offset look-up',
      );
      const offset = committed?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
      return await this.resumeFrom(topic, partition, pending, offset, async () => {
        return (await this.logStarts(admin, topic)).get(partition) ?? '0';
      });
    } catch (err) {
      await this.dropAdmin();
      throw err;
    }
  }

  /** `resumeOffset`, logged; the log start is looked up only when it matters. */
  private async resumeFrom(
    topic: string,
    partition: number,
    pending: RecordedRange | undefined,
    committed: string,
    logStart: () => Promise<string>,
  ): Promise<string | undefined> {
    // Nothing to do whatever the log start (the lowest it can be is 0).
    if (!resumeOffset(pending, committed, '0')) return undefined;
    const low = await logStart();
    const resume = resumeOffset(pending, committed, low);
    if (!resume) return undefined;
    const where = {
      topic,
      partition,
      committed,
      log_start: low,
      recorded: pending ? `${pending.first}-${pending.last}` : 'none',
    };
    if (resume.lost)
      this.log.error(
        { ...where, lost: `${resume.lost.from}-${resume.lost.to}` },
        'kafka records lost: the group committed offsets this store lacks, and the broker no longer holds them',
      );
    if (resume.offset !== undefined)
      this.log.warn(
        { ...where, from: resume.offset },
        'the group committed past what this store recorded (a restored backup, a new DATA_DIR); reading the partition again',
      );
    return resume.offset;
  }

  private async logStarts(admin: KafkaAdmin, topic: string): Promise<Map<number, string>> {
    const offsets = await withTimeout(admin.fetchTopicOffsets(topic), ADMIN_TIMEOUT_MS, 'log start look-up');
    return new Map(offsets.map((p) => [p.partition, p.low] as const));
  }

  private async connectedAdmin(): Promise<KafkaAdmin> {
    if (this.admin) return this.admin;
    const admin = this.kafka.admin();
    try {
      await withTimeout(admin.connect(), ADMIN_TIMEOUT_MS, 'kafka admin connection');
    } catch (err) {
      await admin.disconnect().catch(() => undefined);
      throw err;
    }
    this.admin = admin;
    return admin;
  }

  private async dropAdmin(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.disconnect().catch(() => undefined);
  }

  private async writeChunk(topic: string, partition: number, chunk: KafkaRecord[]): Promise<void> {
    const range: RecordedRange = {
      first: chunk[0]!.offset,
      last: chunk.at(-1)!.offset,
      firstHash: fingerprint(chunk[0]!),
      lastHash: fingerprint(chunk.at(-1)!),
    };
    const records: MailstatsRecord[] = [];
    const dead: { message: KafkaRecord; reason: string }[] = [];
    for (const message of chunk) {
      const decoded = decode(message);
      if ('reason' in decoded) dead.push({ message, reason: decoded.reason });
      else records.push(decoded.record);
    }
    await this.progress.begin(topic, partition, range);
    if (dead.length > 0) await this.deadLetter(topic, partition, dead);
    // The token names the data, not only its offsets: a range re-formed after a crash holds the same
    // messages, hence the same digest; new data at old offsets never matches an old token.
    await this.pipeline.write(
      records,
      `${this.opts.groupId}:${topic}:${partition}:${range.first}-${range.last}:${digest(chunk)}`,
    );
    countKafkaChunk(records.length, dead.length);
  }

  /**
   * Dead-letter with acks = all, in requests within the broker's default limits; a value over
   * DLQ_VALUE_BYTES goes truncated, with its size and digest in headers. A dead letter the broker
   * still refuses as such (e.g. a DLQ topic with a smaller limit) is sent again without its value,
   * and if even that is refused it is logged with its source and skipped: a DLQ write never blocks a
   * partition. A transient failure (broker away) fails the batch, which is retried after a backoff.
   */
  private async deadLetter(
    topic: string,
    partition: number,
    dead: { message: KafkaRecord; reason: string }[],
  ) {
    const letter = (d: (typeof dead)[number], maxValue = DLQ_VALUE_BYTES) =>
      deadLetterOf(topic, partition, d.message, d.reason, maxValue);
    for (const batch of byteBatches(dead, (d) => messageBytesWithHeaders(letter(d)), MAX_REQUEST_BYTES)) {
      try {
        await this.sendDead(batch.map((d) => letter(d)));
      } catch (err) {
        if (!(err instanceof RecordsRefused)) throw err;
        for (const d of batch) {
          const bare = letter(d, 0);
          try {
            await this.sendDead([bare]);
          } catch (again) {
            if (!(again instanceof RecordsRefused)) throw again;
            this.log.error(
              { err: again, headers: bare.headers },
              'dead letter refused by the DLQ topic; logged here instead',
            );
          }
        }
      }
    }
    this.log.info({ topic, partition, count: dead.length }, 'records dead-lettered');
  }

  private sendDead(messages: OutgoingRecord[]) {
    return withTimeout(
      this.dlq.send([{ topic: this.opts.topics.dlq, messages }]),
      DLQ_TIMEOUT_MS,
      'dead-letter send',
    );
  }
}

function deadLetterOf(
  topic: string,
  partition: number,
  message: KafkaRecord,
  reason: string,
  maxValue: number,
): OutgoingRecord {
  // A tombstone stays a tombstone: a DLQ reader must tell it from an empty message (docs/records.md "Ingest over Kafka").
  const value = message.value;
  const truncated = value !== null && value.length > maxValue;
  return {
    key: message.key,
    value: value === null ? null : truncated ? value.subarray(0, maxValue) : value,
    headers: {
      ...message.headers,
      'mailstats-reason': reason,
      'mailstats-source-topic': topic,
      'mailstats-source-partition': String(partition),
      'mailstats-source-offset': message.offset,
      ...(truncated && {
        'mailstats-truncated': 'true',
        'mailstats-original-size': String(value!.length),
        'mailstats-original-sha256': createHash('sha256').update(value!).digest('hex'),
      }),
    },
  };
}

function messageBytesWithHeaders(m: OutgoingRecord): number {
  let n = messageBytes({ key: m.key ?? null, value: m.value });
  for (const [k, v] of Object.entries(m.headers ?? {})) n += k.length + (v ? String(v).length : 0) + 8;
  return n;
}

const next = (offset: string) => (BigInt(offset) + 1n).toString();

function decode(message: KafkaRecord): { record: MailstatsRecord } | { reason: string } {
  if (message.value === null) return { reason: 'tombstone (null value)' };
  if (message.value.length === 0) return { reason: 'empty message' };
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
