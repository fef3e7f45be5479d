import { SingleBar } from 'cli-progress';

/**
 * Import progress, on stderr (stdout keeps only the summary): on a terminal a bar redrawn in place by
 * `cli-progress` (records, rate, ETA from the bytes read); otherwise (logs, CI, a pipe) a plain line
 * every few seconds. `summaryLine` is the line per file printed on stdout when it is done.
 */

/** Where progress is written: a stream that may be a terminal (process.stderr). */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressOptions {
  stream?: ProgressStream;
  /** The plain line's period when the stream is not a terminal. */
  everyMs?: number;
  now?: () => number;
}

/** What the plain line tells: records sent so far, their rate, and how far into the file. */
export interface ProgressState {
  name: string;
  records: number;
  seconds: number;
  /** Bytes of the file read so far, and its size (0: unknown, e.g. stdin). */
  bytes: number;
  total: number;
}

const PLAIN_EVERY_MS = 5_000;
const BAR_EVERY_MS = 250;

const rateOf = (records: number, seconds: number) => Math.round(records / Math.max(seconds, 0.001));

/** `events.ndjson: 41.2% 400000 records, 31000 records/s, ETA 12 s` (no share nor ETA for stdin). */
export function progressLine(s: ProgressState): string {
  const share = s.total > 0 ? Math.min(1, s.bytes / s.total) : undefined;
  const eta = share && share > 0 ? Math.max(0, (s.seconds / share) * (1 - share)) : undefined;
  const pct = share === undefined ? '' : ` ${(share * 100).toFixed(1)}%`;
  return (
    `${s.name}:${pct} ${s.records} records, ${rateOf(s.records, s.seconds)} records/s` +
    (eta === undefined ? '' : `, ETA ${Math.ceil(eta)} s`)
  );
}

/** `events.ndjson: accepted 1000000, rejected 2 (see events.ndjson.rejected.ndjson), 31.2 s, 32051 records/s` */
export function summaryLine(s: {
  name: string;
  accepted: number;
  rejected: number;
  rejectedPath: string;
  seconds: number;
  /** Records sent by this run (the rate's numerator: a resumed run does not count the earlier ones). */
  sent: number;
}): string {
  return (
    `${s.name}: accepted ${s.accepted}, rejected ${s.rejected}` +
    `${s.rejected > 0 ? ` (see ${s.rejectedPath})` : ''}, ` +
    `${s.seconds.toFixed(1)} s, ${rateOf(s.sent, s.seconds)} records/s`
  );
}

export class Progress {
  private done = 0;
  private bytes: number;
  private readonly began: number;
  private readonly timer: NodeJS.Timeout;
  private readonly stream: ProgressStream;
  private readonly now: () => number;
  private readonly bar: SingleBar | undefined;

  constructor(
    private readonly name: string,
    /** Bytes of the file on disk (0: unknown, e.g. stdin). */
    private readonly total: number,
    skipped: number,
    opts: ProgressOptions = {},
  ) {
    this.stream = opts.stream ?? process.stderr;
    this.now = opts.now ?? Date.now;
    this.began = this.now();
    this.bytes = skipped;
    if (this.stream.isTTY === true) {
      this.bar = new SingleBar({
        stream: this.stream as NodeJS.WritableStream,
        format:
          total > 0
            ? '{name}: [{bar}] {percentage}% {records} records, {rate} records/s, ETA {eta_formatted}'
            : '{name}: {records} records, {rate} records/s',
        barsize: 30,
        barCompleteChar: '#',
        barIncompleteChar: '.',
        hideCursor: true,
        clearOnComplete: true,
        linewrap: false,
        fps: 1000 / BAR_EVERY_MS,
        etaBuffer: 40,
      });
      this.bar.start(Math.max(total, 1), Math.min(skipped, Math.max(total, 1)), {
        name,
        records: 0,
        rate: 0,
      });
    }
    this.timer = setInterval(() => this.draw(), this.bar ? BAR_EVERY_MS : (opts.everyMs ?? PLAIN_EVERY_MS));
    this.timer.unref();
  }

  read(n: number): void {
    this.bytes += n;
  }

  records(n: number): void {
    this.done += n;
  }

  private state(): ProgressState {
    const seconds = (this.now() - this.began) / 1000;
    return { name: this.name, records: this.done, seconds, bytes: this.bytes, total: this.total };
  }

  private draw(): void {
    const s = this.state();
    if (this.bar)
      this.bar.update(Math.min(s.bytes, Math.max(s.total, 1)), {
        records: s.records,
        rate: rateOf(s.records, s.seconds),
      });
    else this.stream.write(`${progressLine(s)}\n`);
  }

  /** Stop drawing (idempotent); on a terminal the bar is cleared, leaving the line to the summary. */
  stop(): void {
    clearInterval(this.timer);
    if (this.bar?.isActive) this.bar.stop();
  }
}
