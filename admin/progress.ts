/**
 * Import progress: on a terminal a bar redrawn in place (records, rate, ETA from the bytes read); else
 * a plain line every few seconds (logs, CI). Written to stderr, so stdout keeps only the summary.
 */
export class Progress {
  private done = 0;
  private bytes: number;
  private readonly began = Date.now();
  private readonly timer: NodeJS.Timeout;
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly name: string,
    /** Bytes of the file on disk (0: unknown, e.g. stdin). */
    private readonly total: number,
    skipped: number,
  ) {
    this.bytes = skipped;
    this.timer = setInterval(() => this.draw(), this.tty ? 250 : 5_000);
    this.timer.unref();
  }

  read(n: number): void {
    this.bytes += n;
  }

  records(n: number): void {
    this.done += n;
  }

  private line(): string {
    const s = (Date.now() - this.began) / 1000;
    const rate = Math.round(this.done / Math.max(s, 0.001));
    const share = this.total > 0 ? Math.min(1, this.bytes / this.total) : undefined;
    const eta = share && share > 0 ? Math.max(0, (s / share) * (1 - share)) : undefined;
    const pct = share === undefined ? '' : ` ${(share * 100).toFixed(1)}%`;
    const bar =
      this.tty && share !== undefined ? ` [${'#'.repeat(Math.round(share * 30)).padEnd(30, '.')}]` : '';
    return `${this.name}:${bar}${pct} ${this.done} records, ${rate} records/s${eta === undefined ? '' : `, ETA ${Math.ceil(eta)} s`}`;
  }

  private draw(): void {
    if (this.tty) process.stderr.write(`\r${this.line()}\x1b[K`);
    else process.stderr.write(`${this.line()}\n`);
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.tty) process.stderr.write(`\r\x1b[K`);
  }
}
