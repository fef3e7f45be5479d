import { createHash } from 'node:crypto';
import type { RecordedRange } from '../../shared/clickhouse/kafka-progress.js';
import type { KafkaRecord } from './client.js';

/**
 * Whether the recorded range is what this fetch starts with: the re-formed head ('incomplete' when
 * the fetch ends inside it while the partition holds more), 'past' when the fetch starts after it
 * (it was committed), else 'stale'.
 * A fetch starts at the committed offset, which is the range's first offset while the range is
 * unfinished: any other start inside or before the range means the offsets do not describe it.
 */
export function matchRange(
  range: RecordedRange,
  messages: KafkaRecord[],
  highWatermark?: string,
): KafkaRecord[] | 'past' | 'incomplete' | 'stale' {
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

/**
 * Where a partition must be read from, given the group's committed offset (Kafka's, "-1" when none)
 * and the partition's log start offset, when the committed offset is past the store's recorded progress.
 * In normal operation the committed offset is at most the recorded range's last + 1 (a range is
 * recorded before its write, and `last + 1` committed after it); beyond it, the store lacks what the
 * group already committed (a restored older backup, a lost DATA_DIR), so the partition is read again:
 * - from the recorded range's first offset, re-formed with its token (dropped when the store holds it);
 * - when the broker no longer holds that offset, from the log start (`lost`: the offsets after the
 *   range that the store lacks and the broker deleted; `offset` undefined when none is left to read);
 * - with no recorded range, from the log start (the store never read this partition).
 * Undefined: the committed offset is where the store's progress says (nothing to do).
 */
export function resumeOffset(
  range: RecordedRange | undefined,
  committed: string,
  logStart: string,
): { offset?: string; lost?: { from: string; to: string } } | undefined {
  const [c, low] = [BigInt(committed), BigInt(logStart)];
  if (c < 0n) return undefined;
  if (!range) return c > low ? { offset: logStart } : undefined;
  const [first, next] = [BigInt(range.first), BigInt(range.last) + 1n];
  if (c <= next) return undefined;
  if (low <= first) return { offset: range.first };
  return {
    ...(low < c && { offset: logStart }),
    ...(low > next && { lost: { from: next.toString(), to: (low - 1n).toString() } }),
  };
}

/** What identifies a message's data: its key, value and timestamp. */
export function fingerprint(m: KafkaRecord): string {
  return hashMessages([m]).digest('hex').slice(0, 32);
}

/** SHA-256 over a chunk's messages (lengths prefixed, so no two different chunks collide by concatenation). */
export function digest(chunk: KafkaRecord[]): string {
  return hashMessages(chunk).digest('hex').slice(0, 32);
}

/** Bytes gathered before each hash update: one native call per this much data, not six per message. */
const HASH_BUFFER_BYTES = 64 * 1024;

/**
 * Per message, key, value and timestamp, each as a 32-bit big-endian length (0xffffffff for none) and
 * its bytes. Gathered in a buffer first: the stream hashed, hence every digest, is the same as hashing
 * part by part (ranges recorded by an earlier version still match), at a fraction of the calls.
 */
function hashMessages(messages: KafkaRecord[]) {
  const h = createHash('sha256');
  let buf = Buffer.allocUnsafe(HASH_BUFFER_BYTES);
  let at = 0;
  const put = (part: Buffer | string | null) => {
    const size = part === null ? 0 : typeof part === 'string' ? Buffer.byteLength(part) : part.length;
    if (at + 4 + size > buf.length) {
      h.update(buf.subarray(0, at));
      at = 0;
      if (4 + size > buf.length) buf = Buffer.allocUnsafe(4 + size);
    }
    buf.writeUInt32BE(part === null ? 0xffffffff : size, at);
    at += 4;
    if (typeof part === 'string') at += buf.write(part, at);
    else if (part !== null) at += part.copy(buf, at);
  };
  for (const m of messages) {
    put(m.key ?? null);
    put(m.value ?? null);
    put(m.timestamp);
  }
  h.update(buf.subarray(0, at));
  return h;
}
