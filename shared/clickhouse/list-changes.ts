import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { Db } from './client.js';

/**
 * Server mode's change signal (ARCHITECTURE.md, "The stats answer cache"): every process that writes
 * through a Pipeline appends one `list_changes` row per finished write (migration 7), and every API
 * process reads the rows it has not seen yet once per STATS_CHANGE_POLL_MS, so that what it holds in
 * memory (answers, day rows, subscriber sets) is dropped for exactly the lists another process changed.
 * One statement per interval per process, whatever the request rate.
 *
 * A writing process numbers its rows 1, 2, 3 … under a random id of its own, and writes them one at a
 * time in that order (each after the previous one committed), so a reader that sees row n + 1 of a
 * writer without having seen row n has missed one (it fell out of the poll's window, or was written
 * before a reader's baseline it is not in): it then drops everything, never too little.
 */

/** How the readers' poll narrows its scan: rows newer than the newest seen, less this margin (µs). */
const LOOKBACK_US = 10_000_000;

/** What the poll tells when other processes changed lists (the answer cache and the day rows). */
export interface ChangeListener {
  /** Answers of these lists may have changed. */
  bump(listIds: Iterable<number>): void;
  /** Any answer may have changed (a writer's recovery, or a change the poll may have missed). */
  bumpAll(): void;
  /**
   * Until this time (epoch ms) what is held may be served: every change committed before the last
   * successful poll began is in it. After it (polls failing or late) nothing held is served.
   */
  freshUntil: number;
  /** Set by the poll: makes what is held fresh again (a poll now, shared), for a reader that found it stale. */
  freshen?: () => Promise<void>;
}

/** The statement a reader's poll runs (exported so tests can tell it from stats reads). */
export const LIST_CHANGES_POLL = `
  SELECT toString(writer) AS writer_id, seq, lists, every, toUnixTimestamp64Micro(at) AS at_us
  FROM list_changes
  WHERE at > fromUnixTimestamp64Micro({since:Int64}, 'UTC') AND writer != {self:UUID}
    AND seq > {seqs:Array(UInt64)}[indexOf({writers:Array(UUID)}, writer)]
  ORDER BY writer, seq`;

const BASELINE = `
  SELECT toString(writer) AS writer_id, max(seq) AS last, toUnixTimestamp64Micro(max(at)) AS at_us
  FROM list_changes GROUP BY writer`;

const SETTINGS = { output_format_json_quote_64bit_integers: 0 } as const;

/**
 * A write's records are stored but its change row is not: other processes do not know of the write yet.
 * Resending the records is safe (deduplicated); the row itself is retried by the writer on its own
 * (`ListChangeWriter`). The API answers it 503 with Retry-After (docs/operations.md, "Catalog changes
 * across processes" and docs/deployment.md).
 */
export class ChangeSignalNotStored extends Error {
  constructor(cause: unknown) {
    super('the change signal of a stored write could not be written', { cause });
    this.name = 'ChangeSignalNotStored';
  }
}

/** How long after a failed change row the writer tries it again by itself (ms). */
const RETRY_MS = 1_000;

/**
 * The writing side: `note` appends a row naming the lists (resolves once it is committed). Calls are
 * written one after another; lists noted while a row is being written go together in the next one. A
 * failed row's lists go into the next row too (under the next number: if the failed row was stored
 * after all, a reader sees both; if not, it sees a gap and drops everything), which is written by the
 * next write or, without one, by a retry every `retryMs` until it is stored.
 */
export class ListChangeWriter {
  /** This process's writer id (its own rows are skipped by its own poll: its writes bump at once). */
  readonly id = randomUUID();
  private seq = 0;
  private readonly pending = new Set<number>();
  private every = false;
  private tail: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly log?: Logger,
    private readonly retryMs = RETRY_MS,
  ) {}

  /**
   * The lists (or all lists) whose answers a finished write may have changed. The returned promise is
   * already handled (a caller that does not wait for it leaves no unhandled rejection); one that waits
   * sees the failure, as a ChangeSignalNotStored.
   */
  note(lists: Iterable<number> | 'all'): Promise<void> {
    if (lists === 'all') this.every = true;
    else for (const id of lists) this.pending.add(id);
    return this.write();
  }

  /** Rows not stored yet (lists noted, or a failed row's), for tests and the retry. */
  get hasPending(): boolean {
    return this.every || this.pending.size > 0;
  }

  /** Stops the retries (the service is closing). */
  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
  }

  private write(): Promise<void> {
    if (!this.hasPending) return this.tail;
    const run = this.tail.then(() => this.flush());
    this.tail = run.catch(() => undefined);
    run.catch(() => undefined);
    return run;
  }

  private async flush(): Promise<void> {
    // Carried by an earlier row already (noted while that one waited for its turn).
    if (!this.hasPending) return;
    const every = this.every;
    const lists = every ? [] : [...this.pending];
    this.pending.clear();
    this.every = false;
    const seq = ++this.seq;
    try {
      await this.db.insert(
        'list_changes',
        ['writer', 'seq', 'lists', 'every'],
        [[this.id, seq, `[${lists.join(',')}]`, every ? 1 : 0]],
      );
    } catch (err) {
      for (const id of lists) this.pending.add(id);
      this.every ||= every;
      this.retryLater();
      throw new ChangeSignalNotStored(err);
    }
  }

  /** Without a further write the failed row would wait for one: it is tried again on a timer. */
  private retryLater(): void {
    if (this.closed || this.retry !== undefined) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.closed) return;
      this.write().catch((err: unknown) => {
        if (!this.closed) this.log?.warn({ err }, 'change signal retry failed');
      });
    }, this.retryMs);
    this.retry.unref();
  }
}

interface ChangeRow {
  writer_id: string;
  seq: number;
  lists: number[];
  every: number;
  at_us: number;
}

/**
 * The reading side: polls `list_changes` every `intervalMs` and tells `listener` what changed.
 * `start()` resolves after the baseline (the newest row of every writer so far) is read: what is held
 * from then on is kept current, so nothing may be held before it resolves.
 */
export class ListChangePoll {
  /** Per writer id, the newest row number seen. */
  private readonly seen = new Map<string, number>();
  /** The newest `at` seen (µs): the poll's window starts LOOKBACK_US before it. */
  private newest = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** The poll in flight (scheduled or asked for by a stale reader): one at a time, shared. */
  private inFlight: Promise<void> | undefined;
  /** How long after a poll began what is held may still be served without a newer poll. */
  private readonly staleAfterMs: number;

  constructor(
    private readonly db: Db,
    /** This process's own writer id (its writes are told to `listener` at once, not via the table). */
    private readonly self: string,
    private readonly listener: ChangeListener,
    private readonly intervalMs: number,
    /** The freshness promise (STATS_FRESHNESS_MS): from a write's acknowledgement to every answer. */
    freshnessMs: number,
    private readonly log: Logger,
  ) {
    // A write acknowledged just after a poll began is missed by it, and a reader that then finds what
    // is held stale waits for a whole poll: so the window is the promise less one interval (a poll that
    // takes less than its interval keeps the promise), and never under half the promise.
    this.staleAfterMs = Math.max(freshnessMs - intervalMs, freshnessMs / 2);
  }

  async start(): Promise<void> {
    const began = Date.now();
    const rows = await this.db.read<{ writer_id: string; last: number; at_us: number }>(
      BASELINE,
      {},
      SETTINGS,
    );
    for (const r of rows) {
      this.seen.set(r.writer_id, r.last);
      this.newest = Math.max(this.newest, r.at_us);
    }
    this.listener.freshUntil = began + this.staleAfterMs;
    this.listener.freshen = () => this.freshen();
    this.polling = true;
    this.schedule();
  }

  /**
   * For a reader that found what is held stale (polls late: a busy process or server): waits for a
   * poll that began after it asked, rather than sending its read to ClickHouse (each stale reader would
   * add an engine read to a server that may be why the polls are late). A failed poll leaves it stale.
   */
  async freshen(): Promise<void> {
    // Twice at most: a poll already in flight may have begun too long ago to make it fresh.
    for (let i = 0; i < 2 && Date.now() >= this.listener.freshUntil; i++)
      await this.pollShared().catch(() => undefined);
  }

  private pollShared(): Promise<void> {
    return (this.inFlight ??= this.poll().finally(() => (this.inFlight = undefined)));
  }

  stop(): void {
    this.polling = false;
    clearTimeout(this.timer);
  }

  /** One poll: the rows not seen yet, in each writer's order. */
  async poll(): Promise<void> {
    const began = Date.now();
    const writers = [...this.seen.keys()];
    const rows = await this.db.read<ChangeRow>(
      LIST_CHANGES_POLL,
      {
        since: Math.max(0, this.newest - LOOKBACK_US),
        self: this.self,
        writers,
        seqs: writers.map((w) => this.seen.get(w)!),
      },
      SETTINGS,
    );
    let all = false;
    const lists = new Set<number>();
    for (const r of rows) {
      const last = this.seen.get(r.writer_id) ?? 0;
      if (r.seq <= last) continue;
      // A row of this writer was missed: what it named is unknown.
      if (r.seq !== last + 1 || r.every) all = true;
      else for (const id of r.lists) lists.add(id);
      this.seen.set(r.writer_id, r.seq);
      this.newest = Math.max(this.newest, r.at_us);
    }
    if (all) this.listener.bumpAll();
    else if (lists.size > 0) this.listener.bump(lists);
    // Only after the bumps: every change committed before this poll began is now told.
    this.listener.freshUntil = began + this.staleAfterMs;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      void this.pollShared()
        .catch((err: unknown) => {
          // One in flight when the service stopped fails on the closing connection: not worth a warning.
          if (this.polling) this.log.warn({ err }, 'list change poll failed');
        })
        .finally(() => {
          if (this.polling) this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }
}
