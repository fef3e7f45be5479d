import { randomUUID } from 'node:crypto';
import type { DeadLetter } from '../../shared/dead-letter.js';
import type { Logger } from '../../shared/log.js';
import type { KafkaClient, KafkaRecord } from './client.js';

const header = (m: KafkaRecord, name: string): string => {
  const v = m.headers?.[name];
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined || one === null ? '' : String(one);
};

/** How long reading the DLQ may take at most (a broker that stops answering must not hang the CLI). */
const READ_LIMIT_MS = 10 * 60_000;

/**
 * Every dead letter from the beginning of the DLQ topic to its high watermark at the start of the read,
 * with a consumer of a fresh group that commits nothing (and whose group is deleted afterwards): the
 * service's own consumer group is never touched.
 */
export async function readDeadLetters(
  kafka: KafkaClient,
  topic: string,
  filter: { reason?: string; since?: number },
  each: (letter: DeadLetter) => Promise<void> | void,
  log: Logger,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `mailstats-dlq-read-${randomUUID()}`;
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    // The last offset to read per partition (high watermark − 1); empty partitions need no read.
    const remaining = new Map<number, bigint>();
    for (const o of offsets)
      if (BigInt(o.high) > BigInt(o.low)) remaining.set(o.partition, BigInt(o.high) - 1n);
    if (remaining.size === 0) return;
    const consumer = kafka.consumer({ groupId, sessionTimeoutMs: 10_000, allowAutoTopicCreation: false });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      let finish!: () => void;
      let fail!: (err: unknown) => void;
      const done = new Promise<void>((ok, ko) => {
        finish = ok;
        fail = ko;
      });
      const timer = setTimeout(
        () => fail(new Error(`reading ${topic} took over ${READ_LIMIT_MS / 1000} s`)),
        READ_LIMIT_MS,
      );
      // Nothing is committed (the consumer's client commits only when told to).
      await consumer.run({
        eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
          const last = remaining.get(batch.partition);
          if (last === undefined) return;
          try {
            for (const m of batch.messages) {
              if (BigInt(m.offset) > last) break;
              const time = Number(m.timestamp);
              const reason = header(m, 'mailstats-reason');
              if (
                (filter.reason === undefined || reason.includes(filter.reason)) &&
                (filter.since === undefined || time >= filter.since)
              )
                await each({
                  value: m.value === null ? null : m.value.toString('utf8'),
                  reason,
                  topic: header(m, 'mailstats-source-topic'),
                  partition: Number(header(m, 'mailstats-source-partition')),
                  offset: header(m, 'mailstats-source-offset'),
                  time: new Date(time).toISOString(),
                });
              resolveOffset(m.offset);
              if (BigInt(m.offset) >= last) {
                remaining.delete(batch.partition);
                consumer.pause([{ topic, partitions: [batch.partition] }]);
                break;
              }
            }
            // Offsets without a message (transaction markers, compacted ones) end a partition too.
            if (remaining.has(batch.partition) && BigInt(batch.lastOffset()) >= last) {
              remaining.delete(batch.partition);
              consumer.pause([{ topic, partitions: [batch.partition] }]);
            }
            await heartbeat();
            if (remaining.size === 0) finish();
          } catch (err) {
            fail(err);
          }
        },
      });
      try {
        await done;
      } finally {
        clearTimeout(timer);
      }
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
  } finally {
    await admin
      .deleteGroups([groupId])
      .catch((err: unknown) => log.debug({ err }, 'dead-letter reader group not deleted'));
    await admin.disconnect();
  }
}
