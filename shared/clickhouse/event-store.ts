import { createHash, randomUUID } from 'node:crypto';
import { addDays, localDate, toDateTime64 } from '../dates.js';
import type { Db } from './client.js';
import { encodeBatchRows, encodeEventRows, encodeLedgerRows, type DatedActivity } from './event-rows.js';

export type { DatedActivity };
import { CurrentGenerations } from './generations.js';
import {
  CARRY_SETS,
  EVENT_COLUMNS,
  REDATE_RETAINED_SETS,
  RECENT_READ_FROM,
  REDATE_SETS,
  SET_COLUMNS,
  STATS_NAMES,
  STATS_SELECT,
} from './schema.js';

/** Where a list's dating stands: its newest generation, the zone of it, and whether it is done. */
export interface Dating {
  gen: number;
  timezone: string;
  done: boolean;
  /** The EventStore instance that claimed it. */
  owner: string;
  /** Milliseconds since the (earliest) claim, by the engine's clock. */
  ageMs: number;
}

/** A record as a row of `events`, in EVENT_COLUMNS order. */
export function eventRow({ record: r, day, gen = 0 }: DatedActivity, ingestedAt: string): unknown[] {
  const purchase = r.type === 'purchase' ? r : undefined;
  const outcome = r.type === 'event' || r.type === 'condition' || r.type === 'action' ? r : undefined;
  const sentAt = 'sent_at' in r && r.sent_at !== undefined ? toDateTime64(r.sent_at) : null;
  return [
    r.event_id,
    r.type,
    r.list_id,
    r.workflow_id,
    r.trigger_id ?? 0,
    r.subscriber_id,
    toDateTime64(r.timestamp),
    sentAt,
    day,
    outcome?.status ?? 'none',
    outcome?.reason ?? '',
    purchase?.order_id ?? '',
    purchase?.value_ron ?? '0',
    purchase?.value_eur ?? '0',
    ingestedAt,
    gen,
  ];
}

/**
 * The batch's event_ids already taken within the dedup window. The ids in PREWHERE: left to itself the
 * engine filters on first_seen first (the smaller column), which every recent row passes, and then reads
 * event_id of all of them; a 25k-id batch against a 1M-id ledger of unmerged parts took 94 ms that way and
 * 39 ms this way (BENCHMARKS.md's history).
 */
const SEEN_IN_WINDOW = `
  SELECT event_id FROM event_ids
  PREWHERE event_id IN (SELECT event_id FROM ingest_batches WHERE batch_id = {batch:String})
  WHERE first_seen >= now64(3) - toIntervalDay({window:UInt32})`;

/** The columns of `ingest_batches` a write fills, in the order `encodeBatchRows` writes them. */
const BATCH_COLUMNS = ['batch_id', 'event_id', 'list_id', 'day', 'gen', 'workflow_id', 'trigger_id'];

const SCOPE_COLUMNS = `list_id, workflow_id, trigger_id, day, gen, ${STATS_NAMES.join(', ')}, version`;
/** The version is the server's clock, so recomputes by different processes order correctly. */
const VERSION = 'toUnixTimestamp64Micro(now64(6))';
/** trigger_id 0 means "no trigger" in the data but "any trigger" in daily_scopes: keep only the latter. */
const NOT_NO_TRIGGER = 'NOT (bitAnd(grouping(workflow_id, trigger_id), 1) = 0 AND trigger_id = 0)';

/**
 * Recompute every precomputed answer row (daily_scopes) of the (list, gen, day) triples chosen by `where`:
 * the shapes RECOMPUTE_BATCH writes (all workflows, each workflow, each trigger), no (workflow, trigger)
 * rows: those are read from daily_sets (stats-store.ts).
 */
const recomputeScopes = (where: string) => `
  INSERT INTO daily_scopes (${SCOPE_COLUMNS})
  SELECT list_id, workflow_id, trigger_id, day, gen, ${STATS_SELECT}, ${VERSION}
  FROM daily_sets
  WHERE ${where}
  GROUP BY GROUPING SETS ((list_id, gen, day), (list_id, gen, day, workflow_id), (list_id, gen, day, trigger_id))
  HAVING ${NOT_NO_TRIGGER}`;

/**
 * The set rows whose (list, gen, day, …columns) is one of the batch's: of its recent days from
 * recent_sets, of the others from daily_sets. Only the tuple set in each: the engine prunes partitions
 * and the key by it (EXPLAIN: "toYYYYMM(day) in set", "(list_id, day) in set"; a set with no tuple
 * reads nothing); day bounds beside it made the recompute slower, not faster (BENCHMARKS.md's history).
 */
const setsInBatch = (...columns: string[]) => {
  const tuple = ['list_id', 'gen', 'day', ...columns].join(', ');
  const cells = (days: string) =>
    `(${tuple}) IN (SELECT ${tuple} FROM ingest_batches WHERE batch_id = {batch:String} AND day ${days})`;
  return `(
    SELECT ${SET_COLUMNS} FROM recent_sets WHERE ${cells(`>= ${RECENT_READ_FROM}`)}
    UNION ALL
    SELECT ${SET_COLUMNS} FROM daily_sets WHERE ${cells(`< ${RECENT_READ_FROM}`)})`;
};

/**
 * A batch's recompute: of its days, only the answer rows whose input sets the batch changed — every
 * all-workflow row of a touched day, and the rows of the workflows and triggers its records name.
 * Another workflow's row of that day reads the same sets as before, so its stored row stays right; with
 * many lists, each with a record or two per touched day, that is about half the rows (ARCHITECTURE.md,
 * "Storage"). No (workflow, trigger) rows: daily_sets holds that shape already at its grain (one row per
 * type and day), so a read takes it from there (a period's engine read ~2× a precomputed one's, tens of
 * ms), and over 10,000 lists they were a third of the rows written and ~15–35% of the recompute's time
 * (issue 34). Each part aggregates only the rows its shapes read (columns by position: 0 is
 * "all workflows" / "any trigger"). The sets of recent days come from recent_sets (sorted by day: the
 * touched days alone), those of older days from daily_sets (a touched list's whole month).
 */
export const RECOMPUTE_BATCH_SELECT = `
  SELECT list_id, 0, 0, day, gen, ${STATS_SELECT}, ${VERSION}
  FROM ${setsInBatch()}
  GROUP BY list_id, gen, day
  UNION ALL
  SELECT list_id, workflow_id, 0, day, gen, ${STATS_SELECT}, ${VERSION}
  FROM ${setsInBatch('workflow_id')}
  GROUP BY list_id, gen, day, workflow_id
  UNION ALL
  SELECT list_id, 0, trigger_id, day, gen, ${STATS_SELECT}, ${VERSION}
  FROM ${setsInBatch('trigger_id')}
  WHERE trigger_id != 0
  GROUP BY list_id, gen, day, trigger_id`;
const RECOMPUTE_BATCH = `INSERT INTO daily_scopes (${SCOPE_COLUMNS}) ${RECOMPUTE_BATCH_SELECT}`;

/** Per list of a batch: the lowest generation its stored rows carry (read back after the insert). */
const STORED_GENS = `
  SELECT list_id, min(gen) AS gen FROM events
  WHERE list_id IN {lists:Array(UInt64)} AND ts BETWEEN {lo:DateTime64(3)} AND {hi:DateTime64(3)}
    AND event_id IN (SELECT event_id FROM ingest_batches WHERE batch_id = {batch:String})
    AND event_id NOT IN (${SEEN_IN_WINDOW})
  GROUP BY list_id`;

/**
 * The lists of a batch whose stored rows (STORED_GENS) are of an older generation than the list's
 * newest dating claim: the read-back and the claims in one statement (a list never claimed has none
 * newer than 0, the oldest generation).
 */
const STALE_LISTS = `
  SELECT stored.list_id AS list_id FROM (${STORED_GENS}) AS stored
  INNER JOIN (
    SELECT list_id, max(gen) AS newest FROM list_dating WHERE list_id IN {lists:Array(UInt64)} GROUP BY list_id
  ) AS claims ON stored.list_id = claims.list_id
  WHERE stored.gen < claims.newest`;

/**
 * The owner of a generation is the instance of its earliest claim, ties broken by owner: the one rule
 * `claim` and `redateAll`'s read-backs also follow. Two claims of one generation can both exist (a
 * batch's claim insert has one deduplication token for all its rows), and a process must never believe
 * another's generation is its own (`Pipeline.ensureDated` takes its own unfinished claims over at once).
 */
const DATING = `
  SELECT list_id, gen, timezone, max(done) AS is_done, argMin(owner, (done, at, owner)) AS owner,
    dateDiff('millisecond', min(at), now64(6)) AS age_ms
  FROM list_dating
  WHERE {all:Bool} OR list_id IN {lists:Array(UInt64)}
  GROUP BY list_id, gen, timezone
  ORDER BY gen DESC
  LIMIT 1 BY list_id`;

/** Kept beyond the window, so an id is never dropped while a lookup that started in time reads it. */
export const LEDGER_MARGIN_DAYS = 1;

/** The raw-event retention in days, from the events table's CREATE statement (undefined without a TTL). */
export function rawTtlDays(createTableQuery: string): number | undefined {
  const m = /\bTTL\b[^]*?toIntervalDay\((\d+)\)/.exec(createTableQuery);
  return m ? Number(m[1]) : undefined;
}

/** The retention of event_ids in days, from its CREATE statement (undefined without a TTL). */
export function ledgerTtlDays(createTableQuery: string): number | undefined {
  const m = /\bTTL\b.*?toIntervalDay\((\d+)\)/.exec(createTableQuery);
  return m ? Number(m[1]) : undefined;
}

const INT_SETTINGS = { output_format_json_quote_64bit_integers: 0 } as const;

/**
 * The write side of activity storage. Callers serialise writes (one writer per process): dedup
 * lookups assume no concurrent writer of the same list (Kafka keys events by list). Re-dating is safe
 * against concurrent writers of the same list and against crashes at any point (see `redate`).
 */
export class EventStore {
  /** Names this instance's claims in list_dating. */
  readonly instance = randomUUID();
  /** When this instance (its process) began, on a monotonic clock. */
  private readonly started = performance.now();

  /**
   * Whether a dating claim `ageMs` old was made before this instance began: only such a claim can be
   * one a crash left for this process's start-up recovery. On a server a claim made since may be a
   * live process's, busy completing it (a recovery that took it over re-dated a list for nothing).
   */
  claimedBeforeStart(ageMs: number): boolean {
    return ageMs > performance.now() - this.started;
  }
  /**
   * Embedded: one process owns the data directory, so a claim of another instance is a dead one's.
   * A server may have other writers, whose claims are theirs until TAKE_OVER_S.
   */
  get soleWriter(): boolean {
    return this.db.mode === 'embedded';
  }

  /**
   * Embedded: each list's current dating generation, told by this store as it marks generations done,
   * for readers (undefined in server mode, where readers look it up in the same statement).
   */
  readonly generations: CurrentGenerations | undefined;

  constructor(
    private readonly db: Db,
    private readonly dedupWindowDays: number,
    /** RAW_RETENTION_DAYS: raw events kept this many days (0: all; docs/lifecycle.md "Retention"). */
    readonly rawRetentionDays = 0,
  ) {
    this.generations = db.mode === 'embedded' ? new CurrentGenerations(db) : undefined;
  }

  /**
   * Bound the dedup ledger: event_ids keeps an id for the window plus LEDGER_MARGIN_DAYS, then a merge
   * drops it. Set at every start from the window in force (DEDUP_WINDOW_DAYS may change between
   * starts), so the TTL is never shorter than the window that reads the ledger. Existing parts are not
   * rewritten now (materialize_ttl_after_modify = 0): merges apply the new TTL as they go.
   */
  async applyLedgerRetention(): Promise<number> {
    const days = this.dedupWindowDays + LEDGER_MARGIN_DAYS;
    if (!Number.isSafeInteger(days) || days <= 0) throw new Error(`invalid dedup window: ${days} days`);
    const [row] = await this.db.query<{ q: string }>(
      `SELECT create_table_query AS q FROM system.tables
       WHERE database = currentDatabase() AND name = 'event_ids'`,
    );
    await this.applyRawRetention();
    if (ledgerTtlDays(row?.q ?? '') === days) return days;
    // An integer checked above; DDL takes no query parameters.
    await this.db.command(
      `ALTER TABLE event_ids MODIFY TTL toDateTime(first_seen) + INTERVAL ${days} DAY`,
      {},
      { materialize_ttl_after_modify: 0 },
    );
    return days;
  }

  /**
   * Raw-event retention (RAW_RETENTION_DAYS), set at every start beside the ledger's: `events` rows whose
   * dating time (`sent_at`, else `ts`) is older than that many days are dropped by the engine in whole
   * parts (`ttl_only_drop_parts`: a month's part goes once all of it is past), or no TTL at all (0).
   * Answers read only the derived state (daily_sets, daily_scopes), which keeps every day.
   */
  async applyRawRetention(): Promise<void> {
    const days = this.rawRetentionDays;
    if (!Number.isSafeInteger(days) || days < 0) throw new Error(`invalid raw retention: ${days} days`);
    const [row] = await this.db.query<{ q: string }>(
      `SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'events'`,
    );
    const current = rawTtlDays(row?.q ?? '');
    if (current === (days || undefined)) return;
    if (days === 0) {
      await this.db.command('ALTER TABLE events REMOVE TTL');
      return;
    }
    await this.db.command('ALTER TABLE events MODIFY SETTING ttl_only_drop_parts = 1');
    // An integer checked above; DDL takes no query parameters.
    await this.db.command(
      `ALTER TABLE events MODIFY TTL toDateTime(coalesce(sent_at, ts)) + INTERVAL ${days} DAY`,
      {},
      { materialize_ttl_after_modify: 0 },
    );
  }

  /**
   * Date the list's earlier rows into generation `gen`'s daily_sets, in `timeZone`. Without a retention,
   * from raw `events` (REDATE_SETS). Under one, raw records may be gone: the days from two days past the
   * retention's boundary on (every record of them still stored) are dated again from `events`, and the
   * days before are carried over from the list's previous generation as they are, in its zone, less
   * erased subscribers (docs/lifecycle.md "Retention"). A list without a done generation (rows written
   * before dating generations) is dated from `events` whole.
   */
  private async rebuildSets(listId: number, gen: number, timeZone: string): Promise<void> {
    const p = { list: listId, gen, tz: timeZone };
    const token = () => ({ insert_deduplication_token: randomUUID() });
    const [prev] =
      this.rawRetentionDays > 0
        ? await this.db.query<{ gen: number; timezone: string }>(
            `SELECT gen, timezone FROM list_dating
             WHERE list_id = {list:UInt64} AND done = 1 AND gen < {gen:UInt64}
             ORDER BY gen DESC LIMIT 1`,
            p,
            INT_SETTINGS,
          )
        : [];
    if (!prev) {
      await this.db.command(REDATE_SETS, p, token());
      return;
    }
    const from = addDays(localDate(Date.now() - this.rawRetentionDays * 86_400_000, prev.timezone), 2);
    const q = { ...p, prev: prev.gen, oldTz: prev.timezone, from };
    await this.db.command(REDATE_RETAINED_SETS, q, token());
    await this.db.command(CARRY_SETS, q, token());
  }

  /**
   * Store a batch: drop event_ids already taken within the window, then refresh the touched days.
   * `token` names the batch for insert deduplication when the caller can re-form the very same batch
   * after a crash (Kafka: topic, partition and offset range); by default it is derived from the ids.
   * `onStale` runs after the insert and before the ids are taken, with the lists whose stored rows
   * carry an older generation than the list's newest claim: a re-dating may have missed them.
   */
  write(
    batch: DatedActivity[],
    token?: string,
    onStale?: (lists: number[]) => Promise<void>,
  ): Promise<{ written: number; duplicates: number }> {
    return this.writeAll([{ batch, token }], onStale);
  }

  /**
   * `write` for several batches at once (a group commit: several Kafka chunks, several bodies). Each
   * batch keeps its own token and is stored and taken into the ledger before the next, exactly as if it
   * were written alone, so a crash anywhere leaves each batch to be re-formed and retried alone; what the
   * batches share is a write's fixed costs: one dedup look-up against the ledger and one recompute of the
   * touched days (each costs about the same for 10,000 records as for 100,000). An event_id in two of
   * the batches is stored with the first.
   */
  async writeAll(
    batches: { batch: DatedActivity[]; token?: string }[],
    onStale?: (lists: number[]) => Promise<void>,
  ): Promise<{ written: number; duplicates: number }> {
    const unique = new Map<string, DatedActivity>();
    const parts = batches.map(({ batch, token }) => {
      const own: DatedActivity[] = [];
      for (const a of batch) {
        if (unique.has(a.record.event_id)) continue;
        unique.set(a.record.event_id, a);
        own.push(a);
      }
      return { own, token };
    });
    const total = batches.reduce((n, b) => n + b.batch.length, 0);
    if (unique.size === 0) return { written: 0, duplicates: total };

    const batchId = randomUUID();
    const all = [...unique.values()];
    const storingIds = this.db.insertEncoded('ingest_batches', BATCH_COLUMNS, encodeBatchRows(batchId, all));
    storingIds.catch(() => undefined); // awaited below; only marked handled for the encoding in between
    // While the engine stores the ids (off this thread), encode every row for `events`: usually none of
    // them was seen before, and this payload goes as it is (the encoding was a fifth of a write's time).
    await new Promise((r) => setImmediate(r));
    const now = toDateTime64(Date.now());
    const encodeEvents = (rows: DatedActivity[]) => encodeEventRows(rows, now);
    const payloads = parts.map((p) => encodeEvents(p.own));
    await storingIds;
    const seen = await this.db.query<{ event_id: string }>(SEEN_IN_WINDOW, {
      window: this.dedupWindowDays,
      batch: batchId,
    });
    const taken = new Set(seen.map((s) => s.event_id));
    let written = 0;
    for (const [i, { own, token }] of parts.entries()) {
      const fresh = taken.size > 0 ? own.filter((a) => !taken.has(a.record.event_id)) : own;
      if (fresh.length === 0) continue;
      written += fresh.length;
      const payload = fresh === own ? payloads[i]! : encodeEvents(fresh);
      // The token makes a retry of this very insert a no-op in events and its views.
      const blockToken =
        token ??
        createHash('sha256')
          .update(fresh.map((a) => a.record.event_id).join('\n'))
          .digest('hex');
      await this.db.insertEncoded('events', EVENT_COLUMNS, payload, blockToken);
      // Before the ids are taken: after a crash here the retry comes back through this check. A retry
      // whose first attempt's `events` rows are kept by the token, in a generation older than the one
      // this attempt was dated in, must re-date the list once more: the view's block of this attempt is
      // deduplicated per partition of daily_sets (a month of `day`, which the new zone moves), and is not
      // at all when the first attempt died between the events part and the view's, so it may land in
      // the new generation, which the re-dating already built from those events rows — counted twice
      // (ARCHITECTURE.md, "Counted once"). The next generation is built from `events` alone. Embedded,
      // only rows of a list re-dated at least once can be such a retry (a list's first generation is
      // 1, and every write is dated in a claimed generation): the others cost nothing here.
      if (onStale) {
        const check = this.soleWriter ? fresh.filter((a) => (a.gen ?? 0) >= 2) : fresh;
        const stale = check.length > 0 ? await this.staleLists(batchId, check) : [];
        if (stale.length > 0) await onStale(stale);
      }
      // Ledger next, before the next batch's insert: see the event_ids table. The ids found fresh above,
      // sent as rows: no writer of these lists runs beside this one (see the class), so none was taken
      // since the look-up, and the engine need not run that look-up again. first_seen is this process's
      // clock, as ingested_at.
      await this.db.insertEncoded(
        'event_ids',
        ['event_id', 'first_seen'],
        encodeLedgerRows(fresh, now),
        `${batchId}#${i}`,
      );
    }
    // Also when nothing was fresh: a retry after a crash between the ledger and this step heals here.
    await this.db.command(RECOMPUTE_BATCH, { batch: batchId });
    return { written, duplicates: total - written };
  }

  /**
   * The lists whose rows of this batch, as stored, are of an older generation than the list's newest
   * claim. Read back rather than assumed: a retried insert dropped by its token keeps the rows (and
   * generation) of the first attempt.
   */
  private async staleLists(batchId: string, fresh: DatedActivity[]): Promise<number[]> {
    const lists = [...new Set(fresh.map((a) => a.record.list_id))];
    let lo = Infinity;
    let hi = -Infinity;
    for (const a of fresh) {
      lo = Math.min(lo, a.record.timestamp);
      hi = Math.max(hi, a.record.timestamp);
    }
    const rows = await this.db.query<{ list_id: number }>(
      STALE_LISTS,
      // Duplicates already taken are left out: their stored rows may be of any older generation.
      { lists, lo: toDateTime64(lo), hi: toDateTime64(hi), batch: batchId, window: this.dedupWindowDays },
      INT_SETTINGS,
    );
    return rows.map((r) => r.list_id);
  }

  /** The newest dating generation of each list (all lists when none are given). */
  async dating(lists?: number[]): Promise<Map<number, Dating>> {
    const rows = await this.db.query<{
      list_id: number;
      gen: number;
      timezone: string;
      is_done: number;
      owner: string;
      age_ms: number;
    }>(DATING, { all: lists === undefined, lists: lists ?? [] }, INT_SETTINGS);
    return new Map(
      rows.map(({ is_done, age_ms, ...r }) => [r.list_id, { ...r, ageMs: age_ms, done: is_done === 1 }]),
    );
  }

  /**
   * Claim generation `gen` of a list, to be dated in `timeZone`. The claim is the durable intent:
   * whoever finds it not done later takes over with a newer generation. Two processes claiming the
   * same generation insert the same deduplication token, so only the first row exists (a claim of
   * `redateAll` may still stand beside it: the earliest is the owner, as in DATING); the result says
   * whether it is this instance's.
   */
  async claim(listId: number, gen: number, timeZone: string): Promise<boolean> {
    await this.db.insert(
      'list_dating',
      ['list_id', 'gen', 'timezone', 'done', 'owner'],
      [[listId, gen, timeZone, 0, this.instance]],
      `claim:${listId}:${gen}`,
    );
    const [row] = await this.db.query<{ owner: string }>(
      `SELECT owner FROM list_dating WHERE list_id = {list:UInt64} AND gen = {gen:UInt64} AND done = 0
       ORDER BY at, owner LIMIT 1`,
      { list: listId, gen },
    );
    return row?.owner === this.instance;
  }

  /**
   * Complete a claimed generation: date the list's rows of all earlier generations in `timeZone` into
   * new daily_sets rows of `gen`, compute its daily_scopes, then mark it done, which switches readers
   * to it at once. Until then readers keep the previous generation, whole; a crash or error anywhere
   * leaves the claim not done, and the next attempt takes a new generation (nothing half-written is
   * ever read or reused). A list with no earlier rows (seen for the first time) costs no rebuild.
   */
  async redate(listId: number, gen: number, timeZone: string): Promise<{ rebuilt: boolean }> {
    const p = { list: listId, gen, tz: timeZone };
    const [earlier] = await this.db.query<{ n: number }>(
      this.rawRetentionDays > 0
        ? // Raw records may all have expired: the derived rows of an earlier generation count too.
          `SELECT (SELECT count() FROM (SELECT 1 FROM events WHERE list_id = {list:UInt64} AND gen < {gen:UInt64} LIMIT 1))
                + (SELECT count() FROM (SELECT 1 FROM daily_sets WHERE list_id = {list:UInt64} AND gen < {gen:UInt64} LIMIT 1)) AS n`
        : 'SELECT count() AS n FROM (SELECT 1 FROM events WHERE list_id = {list:UInt64} AND gen < {gen:UInt64} LIMIT 1)',
      p,
      INT_SETTINGS,
    );
    if (earlier?.n) {
      await this.rebuildSets(listId, gen, timeZone);
      await this.db.command(recomputeScopes('list_id = {list:UInt64} AND gen = {gen:UInt64}'), p);
    }
    await this.db.insert(
      'list_dating',
      ['list_id', 'gen', 'timezone', 'done', 'owner'],
      [[listId, gen, timeZone, 1, this.instance]],
      `done:${listId}:${gen}`,
    );
    this.generations?.done(listId, gen);
    return { rebuilt: Boolean(earlier?.n) };
  }

  /**
   * `claim` and `redate` for many lists at once, in a constant number of statements (a catalog batch
   * of thousands of new lists would otherwise cost a handful of statements per list). Embedded, no other
   * process claims, so every claim is this instance's without a look-up. In server mode another process
   * may claim the same generations at the same time, and one token covers the whole insert (no
   * per-generation deduplication as in `claim`): both claims may exist, so one read-back tells which
   * are this instance's by DATING's rule (the earliest claim), and only those are completed; the caller
   * looks the others up again (their owner completes them). A list with earlier rows is rebuilt as
   * `redate` does (two statements of its own: the work itself); the others (seen for the first time)
   * cost nothing per list. Returns the claims owned and the lists that were rebuilt.
   */
  async redateAll(
    claims: { listId: number; gen: number; timeZone: string }[],
  ): Promise<{ owned: number[]; rebuilt: number[] }> {
    if (claims.length === 0) return { owned: [], rebuilt: [] };
    const columns = ['list_id', 'gen', 'timezone', 'done', 'owner'];
    const rows = (done: number, of: typeof claims) =>
      of.map((c) => [c.listId, c.gen, c.timeZone, done, this.instance]);
    // The same rows make the same token: a retry of this very insert is a no-op, another batch is not
    // (another process's batch of exactly these generations is dropped, and it reads its claims lost).
    const token = (done: number, of: typeof claims) =>
      `claims:${done}:` +
      createHash('sha256')
        .update(of.map((c) => `${c.listId}:${c.gen}`).join(','))
        .digest('hex');
    await this.db.insert('list_dating', columns, rows(0, claims), token(0, claims));
    const at = (of: typeof claims) => ({ lists: of.map((c) => c.listId), gens: of.map((c) => c.gen) });
    let owned = claims;
    if (!this.soleWriter) {
      const owners = await this.db.query<{ list_id: number; owner: string }>(
        `SELECT list_id, argMin(owner, (at, owner)) AS owner FROM list_dating
         WHERE list_id IN {lists:Array(UInt64)} AND done = 0
           AND gen = transform(list_id, {lists:Array(UInt64)}, {gens:Array(UInt64)}, toUInt64(0))
         GROUP BY list_id`,
        at(claims),
        INT_SETTINGS,
      );
      const mine = new Set(owners.filter((o) => o.owner === this.instance).map((o) => o.list_id));
      owned = claims.filter((c) => mine.has(c.listId));
      if (owned.length === 0) return { owned: [], rebuilt: [] };
    }
    const rebuild = new Set(await this.withEarlierRows(owned));
    for (const c of owned) {
      if (!rebuild.has(c.listId)) continue;
      const p = { list: c.listId, gen: c.gen, tz: c.timeZone };
      await this.rebuildSets(c.listId, c.gen, c.timeZone);
      await this.db.command(recomputeScopes('list_id = {list:UInt64} AND gen = {gen:UInt64}'), p);
    }
    await this.db.insert('list_dating', columns, rows(1, owned), token(1, owned));
    for (const c of owned) this.generations?.done(c.listId, c.gen);
    return { owned: owned.map((c) => c.listId), rebuilt: [...rebuild] };
  }

  /** The lists of `claims` that have rows of a generation older than the one claimed for them. */
  async withEarlierRows(claims: { listId: number; gen: number }[]): Promise<number[]> {
    if (claims.length === 0) return [];
    const earlier = (table: string) => `SELECT DISTINCT list_id FROM ${table}
       WHERE list_id IN {lists:Array(UInt64)}
         AND gen < transform(list_id, {lists:Array(UInt64)}, {gens:Array(UInt64)}, toUInt64(0))`;
    const rows = await this.db.query<{ list_id: number }>(
      // Under a raw-event retention the derived rows of an earlier generation count too (`redate`).
      this.rawRetentionDays > 0
        ? `SELECT DISTINCT list_id FROM (${earlier('events')} UNION ALL ${earlier('daily_sets')})`
        : earlier('events'),
      { lists: claims.map((c) => c.listId), gens: claims.map((c) => c.gen) },
      INT_SETTINGS,
    );
    return rows.map((r) => r.list_id);
  }

  /**
   * Older generations are never read again once a newer one is done: drop them in the background.
   * Housekeeping only: a failure here (e.g. too many unfinished mutations) leaves rows nobody reads.
   */
  async dropOlderGenerations(listId: number, gen: number): Promise<void> {
    for (const table of ['daily_sets', 'recent_sets', 'daily_scopes'])
      await this.db.command(
        `ALTER TABLE ${table} DELETE WHERE list_id = {list:UInt64} AND gen < {gen:UInt64}`,
        { list: listId, gen },
        { mutations_sync: '0' },
      );
  }
}
