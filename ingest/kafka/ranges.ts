import { createHash } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import type { RecordedRange } from '../../shared/clickhouse/kafka-progress.js';

/**
 * Whether the recorded range is what this fetch starts with: the re-formed head ('incomplete' when
 * the fetch ends inside it while the partition holds more), 'past' when the fetch starts after it
 * (it was committed), else 'stale'.
 * A fetch starts at the committed offset, which is the range's first offset while the range is
 * unfinished: any other start inside or before the range means the offsets do not describe it.
 */
export function matchRange(
  range: RecordedRange,
  messages: KafkaMessage[],
  highWatermark?: string,
): KafkaMessage[] | 'past' | 'incomplete' | 'stale' {
  const start = BigInt(messages[0]!.offset);
  const [first, last] = [BigInt(range.first), BigInt(range.last)];
  if (start > last) return 'past';
  if (start !== first || fingerprint(messages[0]!) !== range.firstHash) return 'stale';
  const end = messages.findIndex((m) => BigInt(m.offset) >= last);
  // A short fetch of the same data is waited for; a partition that no longer reaches the range's
  // end (truncated, or new data not yet that long) can never complete it.
  if (end < 0) return highWatermark !== undefined && BigInt(highWatermark) <= last ? 'stale' : 'incomplete';
  if (BigInt(messages[end]!.offset) !== last || fingerprint(messages[end]!) !== range.lastHash)
    return 'stale';
  return messages.slice(0, end + 1);
}

/** What identifies a message's data: its key, value and timestamp. */
export function fingerprint(m: KafkaMessage): string {
  return hashMessages([m]).digest('hex').slice(0, 32);
}

/** SHA-256 over a chunk's messages (lengths prefixed, so no two different chunks collide by concatenation). */
export function digest(chunk: KafkaMessage[]): string {
  return hashMessages(chunk).digest('hex').slice(0, 32);
}

function hashMessages(messages: KafkaMessage[]) {
  const h = createHash('sha256');
  const len = Buffer.alloc(4);
  for (const m of messages) {
    for (const part of [m.key, m.value, Buffer.from(m.timestamp)]) {
      len.writeUInt32BE(part ? part.length : 0xffffffff);
      h.update(len);
      if (part) h.update(part);
    }
  }
  return h;
}
