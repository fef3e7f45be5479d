import { fromDayNumber } from '../dates.js';
import type { ActivityRecord } from '../records/index.js';

/** An activity record placed on its grouping date, in the time zone of its list's dating generation. */
export interface DatedActivity {
  record: ActivityRecord;
  day: string;
  /** The list's dating generation `day` was computed in (list_dating); 0 for a list never dated. */
  gen?: number;
}

/**
 * The `events` rows of a batch as TabSeparated bytes (EVENT_COLUMNS order), written straight into one
 * buffer: byte for byte what `encodeRows(batch.map((a) => eventRow(a, ingestedAt)))` gives, without a
 * row array, sixteen cell strings and a line string per record. Encoding rows was 12% of the Kafka
 * worker's main thread and a share of its garbage (GC 19%; BENCHMARKS.md "What limits Kafka →
 * ClickHouse"): building strings cost ~3 µs of CPU a record (GC included), writing bytes ~0.7 µs
 (75k bench records, Node 26, separate processes: 225-264 against 48-58 ms a batch).
 * test/unit/event-rows.test.ts holds the two equal on every type and field, escapes included.
 */
export function encodeEventRows(batch: readonly DatedActivity[], ingestedAt: string): Buffer {
  const w = new ByteWriter(batch.length * 160 + 64);
  const tail = Buffer.from(`\t${ingestedAt}\t`, 'latin1');
  for (const { record: r, day, gen = 0 } of batch) {
    w.text(r.event_id);
    w.tab();
    w.ascii(r.type);
    w.tab();
    w.int(r.list_id);
    w.tab();
    w.int(r.workflow_id);
    w.tab();
    w.int(r.trigger_id ?? 0);
    w.tab();
    w.int(r.subscriber_id);
    w.tab();
    w.dateTime64(r.timestamp);
    w.tab();
    const sentAt = 'sent_at' in r ? r.sent_at : undefined;
    if (sentAt === undefined) w.ascii('\\N');
    else w.dateTime64(sentAt);
    w.tab();
    w.ascii(day);
    w.tab();
    if (r.type === 'event' || r.type === 'condition' || r.type === 'action') {
      w.ascii(r.status);
      w.tab();
      if (r.reason !== undefined) w.text(r.reason);
      w.ascii('\t\t0\t0');
    } else if (r.type === 'purchase') {
      w.ascii('none\t\t');
      w.text(r.order_id);
      w.tab();
      w.ascii(r.value_ron);
      w.tab();
      w.ascii(r.value_eur);
    } else w.ascii('none\t\t\t0\t0');
    w.bytes(tail);
    w.int(gen);
    w.byte(0x0a);
  }
  return w.done();
}

/**
 * The `ingest_batches` rows of a batch (batch_id, event_id, list_id, day, gen, workflow_id, trigger_id),
 * as `encodeRows` gives them.
 */
export function encodeBatchRows(batchId: string, batch: readonly DatedActivity[]): Buffer {
  const w = new ByteWriter(batch.length * 96 + 64);
  for (const { record: r, day, gen = 0 } of batch) {
    w.text(batchId);
    w.tab();
    w.text(r.event_id);
    w.tab();
    w.int(r.list_id);
    w.tab();
    w.ascii(day);
    w.tab();
    w.int(gen);
    w.tab();
    w.int(r.workflow_id);
    w.tab();
    w.int(r.trigger_id ?? 0);
    w.byte(0x0a);
  }
  return w.done();
}

/** The `event_ids` rows (event_id, first_seen) of a batch, as `encodeRows` gives them. */
export function encodeLedgerRows(batch: readonly DatedActivity[], firstSeen: string): Buffer {
  const w = new ByteWriter(batch.length * 48 + 64);
  const tail = Buffer.from(`\t${firstSeen}\n`, 'latin1');
  for (const { record } of batch) {
    w.text(record.event_id);
    w.bytes(tail);
  }
  return w.done();
}

const TAB = 0x09;
const BACKSLASH = 0x5c;
/** Per ASCII code, the letter TabSeparated escapes it with after a backslash (0: written as it is). */
const ESCAPED = new Uint8Array(128);
ESCAPED[0x09] = 0x74; // \t
ESCAPED[0x0a] = 0x6e; // \n
ESCAPED[0x0d] = 0x72; // \r
ESCAPED[0x5c] = 0x5c; // \\

/** A growing byte buffer with the few cell writers the events rows need. */
class ByteWriter {
  private buf: Buffer;
  private at = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  tab(): void {
    this.byte(TAB);
  }

  bytes(b: Buffer): void {
    this.room(b.length);
    this.at += b.copy(this.buf, this.at);
  }

  /** Text known to be ASCII without TSV specials (enums, dates, validated money). */
  ascii(s: string): void {
    this.room(s.length);
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
    this.at = at;
  }

  /** Free text (ids, reasons): UTF-8, with TSV's escapes. ASCII without specials is copied in place. */
  text(s: string): void {
    this.room(s.length * 6);
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        // Not ASCII: the rest through the UTF-8 encoder, escaped first (rare: ids are usually ASCII).
        this.at = at;
        const rest = s
          .slice(i)
          .replace(/[\t\n\r\\]/g, (x) => `\\${String.fromCharCode(ESCAPED[x.charCodeAt(0)]!)}`);
        this.at += this.buf.write(rest, this.at, 'utf8');
        return;
      }
      const e = ESCAPED[c]!;
      if (e !== 0) {
        buf[at++] = BACKSLASH;
        buf[at++] = e;
      } else buf[at++] = c;
    }
    this.at = at;
  }

  /** A non-negative integer below 2^53 (ids; validated), in decimal. */
  int(n: number): void {
    this.room(16);
    const buf = this.buf;
    if (n < 10) {
      buf[this.at++] = 0x30 + n;
      return;
    }
    let digits = 0;
    for (let x = n; x >= 1; x = Math.floor(x / 10)) digits++;
    let at = this.at + digits;
    this.at = at;
    for (let x = n; x >= 1; x = Math.floor(x / 10)) buf[--at] = 0x30 + (x % 10);
  }

  /** `toDateTime64(ms)`: `YYYY-MM-DD hh:mm:ss.mmm` in UTC. */
  dateTime64(ms: number): void {
    const day = Math.floor(ms / 86_400_000);
    let rest = ms - day * 86_400_000;
    this.ascii(fromDayNumber(day));
    this.room(13);
    const buf = this.buf;
    let at = this.at;
    buf[at++] = 0x20;
    const h = Math.floor(rest / 3_600_000);
    rest -= h * 3_600_000;
    const m = Math.floor(rest / 60_000);
    rest -= m * 60_000;
    const s = Math.floor(rest / 1000);
    rest -= s * 1000;
    buf[at++] = 0x30 + Math.floor(h / 10);
    buf[at++] = 0x30 + (h % 10);
    buf[at++] = 0x3a;
    buf[at++] = 0x30 + Math.floor(m / 10);
    buf[at++] = 0x30 + (m % 10);
    buf[at++] = 0x3a;
    buf[at++] = 0x30 + Math.floor(s / 10);
    buf[at++] = 0x30 + (s % 10);
    buf[at++] = 0x2e;
    buf[at++] = 0x30 + Math.floor(rest / 100);
    buf[at++] = 0x30 + (Math.floor(rest / 10) % 10);
    buf[at++] = 0x30 + (rest % 10);
    this.at = at;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}
