import type { Catalog } from '../shared/catalog/catalog.js';
import type { DatedActivity, EventStore } from '../shared/clickhouse/event-store.js';
import type { ErasedMap, Erasure, ErasurePair, ErasureStore } from '../shared/clickhouse/erasure-store.js';
import { localDate } from '../shared/dates.js';
import type { Logger } from '../shared/log.js';
import { templateLimitProblem } from '../shared/template-limits.js';
import {
  countDeduplicated,
  countErased,
  countTemplateOverLimits,
  timeBatchWrite,
} from '../shared/metrics.js';
import {
  isActivity,
  type ActivityRecord,
  type CatalogRecord,
  type MailstatsRecord,
} from '../shared/records/index.js';
import type { DecodedItem, IngestResult } from './sink.js';
import { validateItems } from './validate.js';
import type { DemoTenant } from './demo-tenant.js';

/** One list's part of an erasure: the subscribers erased and how many raw records were deleted. */
export interface ListErasure {
  list_id: number;
  subscribers: number;
  deleted: number;
}

/** An erasure named a list that has neither a catalog record nor any activity. */
export class UnknownListError extends Error {
  constructor(readonly listIds: number[]) {
    super(`no such list: ${listIds.join(', ')}`);
  }
}

/**
 * validate → (reject | batch) → write, the same for HTTP bodies and Kafka batches. Writes are
 * serialised: one writer per process keeps dedup lookups and day recomputes race-free.
 */
export class Pipeline {
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The activity-only writes that came while the queue was busy, still to start: a write that comes now
   * joins them (a group commit), up to INGEST_BATCH_SIZE records. Each write keeps its own token and is
   * stored as it would be alone (`EventStore.writeAll`); they share a write's fixed costs — the dedup
   * look-up and the day recompute, which cost about as much for a 10,000-record batch as for 100,000 — so
   * concurrent bodies, or a worker's partitions whose chunks queue, no longer pay them each.
   */
  private open: { parts: WritePart[]; records: number; run: Promise<void> } | undefined;
  /**
   * Embedded (one process owns the data, all its writes queued here): each list's dating generation and
   * zone as `ensureDated` last found them done, so that a write needs no look-up. Nothing else changes
   * them there; an entry goes when the list's `list` record is written or a re-dating starts, and all
   * go at recovery and after a failed write.
   */
  private readonly dated = new Map<number, { gen: number; timeZone: string }>();

  constructor(
    private readonly catalog: Catalog,
    private readonly events: EventStore,
    private readonly batchSize: number,
    private readonly log: Logger,
    /**
     * Told, after a write or a re-dating, which lists' stats may read differently (the answer cache; in
     * server mode also the change signal): a write resolves only once what this returns has settled.
     */
    private readonly changed: (listIds: number[] | 'all') => void | Promise<void> = () => {},
    /** Erasures (docs/lifecycle.md, "erase"): without it nothing is filtered and `erase` is refused. */
    private readonly erasures?: ErasureStore,
  ) {}

  /** Embedded: the demo tenant, removed before the first record not its own (docs/records.md "The demo tenant"). */
  private demo: DemoTenant | undefined;

  /** Keep the demo tenant apart from an operator's records (embedded stores, where it is seeded). */
  keepDemoApart(demo: DemoTenant): void {
    this.demo = demo;
  }

  /** Embedded: every erasure recorded, per list and subscriber (loaded once; this process records them). */
  private erasedCache: ErasedMap | undefined;

  /**
   * Run `task` between writes, with no write of this process in flight (e.g. a point-in-time backup:
   * every batch is in it whole or not at all).
   */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.enqueue(task);
  }

  /** Queue `task` after everything queued so far; a write that comes later never joins an earlier group. */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    this.open = undefined;
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Erase subscribers' activity on lists, as if it had never arrived: record the erasure (the durable
   * intent), delete the raw rows, rebuild each list into a new dating generation (readers switch to it
   * at once, ARCHITECTURE.md "Re-dating a list"), then mark it done. Queued like a write, so no batch
   * of this process falls in between. Resolves once every answer reads without them.
   *
   * A pair's `erasedAt` (epoch ms, not in the future) is the time of an erasure made earlier and
   * replayed (after a restore of an older backup, docs/lifecycle.md): the subscriber's activity
   * timestamped after it is kept. Without it the erasure is made now.
   */
  erase(pairs: (ErasurePair & { erasedAt?: number })[]): Promise<ListErasure[]> {
    const store = this.erasures;
    if (!store) return Promise.reject(new Error('erasure is not available in this process'));
    return this.enqueue(async () => {
      const lists = [...new Set(pairs.map((p) => p.list_id))];
      const unknown: number[] = [];
      for (const id of lists) if (!(await store.listExists(id))) unknown.push(id);
      if (unknown.length > 0) throw new UnknownListError(unknown);
      const now = Date.now();
      if (pairs.some((p) => p.erasedAt !== undefined && p.erasedAt > now))
        throw new Error('an erasure time is in the future');
      const erasures = pairs.map((p) => ({
        list_id: p.list_id,
        subscriber_id: p.subscriber_id,
        erasedAt: p.erasedAt ?? now,
      }));
      await store.recordIntent(erasures);
      this.erasedCache = undefined; // re-read with the new rows at the next write
      try {
        return await this.completeErasures(erasures);
      } finally {
        await this.changed(lists);
      }
    });
  }

  /**
   * The erasure log: per erased (list, subscriber) its latest erasure time, intents included. Exported
   * beside each backup, and replayed with `erase --file` after restoring an older one.
   */
  async erasureLog(): Promise<Erasure[]> {
    if (!this.erasures) throw new Error('erasure is not available in this process');
    const log: Erasure[] = [];
    for (const [list_id, subs] of await this.erasures.erased())
      for (const [subscriber_id, erasedAt] of subs) log.push({ list_id, subscriber_id, erasedAt });
    return log.sort((a, b) => a.list_id - b.list_id || a.subscriber_id - b.subscriber_id);
  }

  /** Delete, rebuild and mark done, list by list (also the recovery of interrupted erasures). */
  private async completeErasures(erasures: Erasure[]): Promise<ListErasure[]> {
    const store = this.erasures!;
    const byList = new Map<number, Erasure[]>();
    for (const e of erasures) byList.set(e.list_id, [...(byList.get(e.list_id) ?? []), e]);
    const results: ListErasure[] = [];
    for (const [listId, list] of byList) {
      // Per subscriber, its latest erasure time: what is stored or timestamped up to it goes.
      const upTo = new Map<number, number>();
      for (const e of list) upTo.set(e.subscriber_id, Math.max(upTo.get(e.subscriber_id) ?? 0, e.erasedAt));
      const deleted = await store.count(listId, upTo);
      // On a server another process may insert a batch it filtered before the intent was written:
      // delete and rebuild again until none is left (embedded, writes are queued behind this).
      for (let attempt = 0; ; attempt++) {
        await store.deleteEvents(listId, upTo);
        const { gen } = await this.ensureDated(listId, { force: true });
        // The older generations' per-day rows still hold the subscribers (unread): drop them also when
        // the rebuild found no rows left (then ensureDated drops nothing itself).
        await this.events
          .dropOlderGenerations(listId, gen)
          .catch((err: unknown) => this.log.warn({ err, list_id: listId }, 'older generations not dropped'));
        if (this.events.soleWriter || (await store.count(listId, upTo)) === 0) break;
        if (attempt >= 5) throw new Error(`list ${listId}: erased subscribers' records keep arriving`);
      }
      await store.markDone(list);
      results.push({ list_id: listId, subscribers: upTo.size, deleted });
    }
    return results;
  }

  /** Activity of erased (list, subscriber) pairs timestamped up to the erasure is not stored. */
  private async withoutErased(activity: ActivityRecord[]): Promise<ActivityRecord[]> {
    if (!this.erasures || activity.length === 0) return activity;
    let erased = this.erasedCache;
    if (!erased) {
      erased = this.events.soleWriter
        ? await this.erasures.erased()
        : await this.erasures.erased([...new Set(activity.map((r) => r.list_id))]);
      if (this.events.soleWriter) this.erasedCache = erased;
    }
    if (erased.size === 0) return activity;
    const kept = activity.filter((r) => {
      const at = erased.get(r.list_id)?.get(r.subscriber_id);
      return at === undefined || r.timestamp > at;
    });
    countErased(activity.length - kept.length);
    return kept;
  }

  /** Validate decoded items, write the valid ones; resolves once they are durable and queryable. */
  async ingest(items: DecodedItem[]): Promise<IngestResult> {
    const { valid, rejected } = validateItems(items);
    await this.write(valid.map((v) => v.record));
    return { accepted: valid.length, rejected };
  }

  /**
   * Write validated records (catalog first, so a list's time zone is known before its activity).
   * `token` names a batch the caller can re-form identically after a crash (see EventStore.write).
   */
  write(records: MailstatsRecord[], token?: string): Promise<void> {
    const activityOnly = records.every(isActivity);
    const open = this.open;
    if (activityOnly && open && open.records + records.length <= this.batchSize) {
      open.parts.push({ records, token });
      open.records += records.length;
      return open.run;
    }
    const parts: WritePart[] = [{ records, token }];
    const run = this.enqueue(() => {
      // Started: later writes form a group of their own.
      if (this.open?.parts === parts) this.open = undefined;
      const records = parts.flatMap((p) => p.records);
      return timeBatchWrite(() =>
        this.writeNow(parts).catch((err: unknown) => {
          this.dated.clear();
          throw err;
        }),
      ).finally(() =>
        // Activity batches and re-datings (a `list` record) change only their own lists; also after a failure.
        this.changed([...new Set(records.flatMap((r) => ('list_id' in r ? [r.list_id] : [])))]),
      );
    });
    // A write with catalog records runs alone: the activity after it must see the zones it sets.
    if (activityOnly) this.open = { parts, records: records.length, run };
    return run;
  }

  /**
   * At start: bound the dedup ledger to the window in force, and finish any re-dating a crash or an
   * error left over (a list whose catalog time zone differs from the zone its rows are dated in, or
   * whose newest dating generation was claimed but never completed; on a server, claimed before this
   * process began: one claimed since may be a live process's, still completing it). Queued like a write, so writes
   * wait for it. Run once at start.
   */
  recover(): Promise<void> {
    return this.enqueue(() =>
      (async () => {
        this.dated.clear();
        this.erasedCache = undefined;
        await this.events.applyLedgerRetention();
        const [zones, dating] = await Promise.all([this.catalog.storedTimezones(), this.events.dating()]);
        const lists = new Set<number>();
        for (const [id, tz] of zones) if (dating.get(id)?.timezone !== tz) lists.add(id);
        for (const [id, d] of dating) if (!d.done) lists.add(id);
        await this.ensureDatedAll([...lists], { takeOver: true });
        if (lists.size > 0) this.log.info({ lists: lists.size }, 'unfinished list re-dating completed');
        const pending = (await this.erasures?.pending()) ?? [];
        if (pending.length > 0) {
          const done = await this.completeErasures(pending);
          this.log.info({ lists: done.length, pairs: pending.length }, 'unfinished erasure completed');
        }
      })().finally(() => this.changed('all')),
    );
  }

  private async writeNow(parts: WritePart[]): Promise<void> {
    await this.removeDemoBefore(parts.flatMap((p) => p.records));
    // Slices of at most INGEST_BATCH_SIZE records, each with its token; written in writes of at most as
    // many records (several slices of a group in one).
    const slices: { records: ActivityRecord[]; token: string | undefined }[] = [];
    for (const { records, token } of parts) {
      const all: ActivityRecord[] = [];
      const catalog: CatalogRecord[] = [];
      for (const r of records) (isActivity(r) ? all : catalog).push(r as never);
      if (catalog.length > 0) await this.writeCatalog(catalog);
      const activity = await this.withoutErased(all);
      // A batch with a token is written whole, in one slice: its caller bounds its size (Kafka:
      // KAFKA_BATCH_MAX_RECORDS) and re-forms the same batch after a crash, and a retry sliced otherwise
      // (INGEST_BATCH_SIZE changed in between) would carry other tokens for half-written slices.
      const size = token ? Math.max(1, activity.length) : this.batchSize;
      for (let i = 0; i < activity.length; i += size)
        slices.push({ records: activity.slice(i, i + size), token: token && `${token}#${i}` });
    }
    const onStale = async (lists: number[]) => {
      for (const id of lists) await this.ensureDated(id, { force: true });
    };
    for (let i = 0; i < slices.length;) {
      const write = [slices[i++]!];
      let n = write[0]!.records.length;
      while (i < slices.length && n + slices[i]!.records.length <= this.batchSize) {
        n += slices[i]!.records.length;
        write.push(slices[i++]!);
      }
      // Dated together: one look-up of the lists' zones and datings for the whole write.
      const dated = await this.date(write.flatMap((w) => w.records));
      let at = 0;
      const batches = write.map((w) => {
        const batch = dated.slice(at, (at += w.records.length));
        return { batch, token: w.token };
      });
      const { written, duplicates } = await this.events.writeAll(batches, onStale);
      this.log.debug({ written, duplicates, batches: batches.length }, 'activity stored');
      countDeduplicated(duplicates);
    }
  }

  /**
   * The demo's ids are the ones an operator's first lists get: before the first record that is not the
   * demo's own, the whole demo goes (its catalog records, its activity, and its lists' per-day rows, rebuilt
   * from what is left as an erasure does), so nothing of it is ever read with or counted in real data.
   */
  private async removeDemoBefore(records: MailstatsRecord[]): Promise<void> {
    const demo = this.demo;
    // Once known absent (the usual case) this costs nothing per batch.
    if (!demo || !(await demo.present()) || records.every((r) => demo.owns(r))) return;
    const lists = await demo.removeRows();
    for (const id of lists) {
      this.dated.delete(id);
      const { gen } = await this.ensureDated(id, { force: true });
      await this.events
        .dropOlderGenerations(id, gen)
        .catch((err: unknown) => this.log.warn({ err, list_id: id }, 'older generations not dropped'));
    }
    this.changed('all');
    this.log.info(
      'demo tenant removed: the first record of your own arrived (docs/records.md "The demo tenant")',
    );
  }

  /**
   * The catalog write is the re-dating's durable intent: from then on the list's catalog zone differs
   * from the zone of its newest dating generation until a re-dating completes, here right after, or
   * (after a crash or error) at the next start or before the list's next write.
   */
  private async writeCatalog(records: CatalogRecord[]): Promise<void> {
    const lists = [...new Set(records.flatMap((r) => (r.type === 'list' ? [r.list_id] : [])))];
    for (const id of lists) this.dated.delete(id);
    await this.catalog.write(records);
    // Stored as they come (the catalog mirrors the platform, docs/records.md "Catalog records"); the operator is told.
    for (const r of records) {
      if (r.type !== 'template') continue;
      const problem = templateLimitProblem(r);
      if (problem !== undefined) {
        countTemplateOverLimits();
        this.log.warn(
          { account_id: r.account_id, template_id: r.template_id, problem },
          'template stored beyond the render limits: rendering it answers 17007',
        );
      }
    }
    await this.ensureDatedAll(lists);
  }

  /**
   * `ensureDated` for many lists. Embedded, in a constant number of engine statements for the whole
   * batch however many lists it names (a catalog of 10,000 lists, or a batch of many tenants' activity):
   * one look-up of the zones and datings of those not known yet, one claim insert, one look-up of
   * which of them have earlier rows (rebuilt one by one: the rebuild is the work), one done insert, and
   * the look-up once more. In server mode the same for the lists never claimed (new lists), with one
   * more read-back of which claims are this instance's (other processes claim there: see
   * `EventStore.redateAll`); lists already claimed but not dated and done in their catalog zone (a zone
   * change, a claim in progress or abandoned) go list by list through `ensureDated`.
   */
  private async ensureDatedAll(
    listIds: number[],
    opts: { takeOver?: boolean } = {},
  ): Promise<Map<number, { gen: number; timeZone: string }>> {
    const out = new Map<number, { gen: number; timeZone: string }>();
    let pending: number[] = [];
    for (const id of listIds) {
      const known = opts.takeOver ? undefined : this.dated.get(id);
      if (known) out.set(id, known);
      else pending.push(id);
    }
    if (!this.events.soleWriter) {
      // A list dated and done in its catalog zone (the usual case) is taken as `ensureDated` would take
      // it on its first look. Before, every list cost two look-ups a write: a batch over thousands of
      // lists spent its time in them (BENCHMARKS.md "What limits many tenants").
      while (pending.length > 0) {
        const [zones, dating] = await Promise.all([
          this.catalog.storedTimezones(pending),
          this.events.dating(pending),
        ]);
        const claims: { listId: number; gen: number; timeZone: string }[] = [];
        for (const id of pending) {
          const timeZone = zones.get(id)!;
          const d = dating.get(id);
          if (d && d.done && d.timezone === timeZone) out.set(id, { gen: d.gen, timeZone });
          // Never claimed (a new list): claimed with the batch's others, in a constant number of
          // statements however many there are (a catalog of 10,000 new lists took one claim each).
          else if (!d) claims.push({ listId: id, gen: 1, timeZone });
          // Anything else (a zone changed, a claim not done): list by list, as it is rare.
          else out.set(id, await this.ensureDated(id, opts));
        }
        if (claims.length === 0) break;
        // A new list with rows of generation 0 (stored before lists were dated) needs a rebuild, which
        // must have one owner: two batch claims of one generation can both believe they own it (their
        // `at` is set before they are stored), so such a list is claimed alone, where `claim`'s
        // per-generation token lets only one exist. For the others two owners only mark it done twice.
        const older = new Set(await this.events.withEarlierRows(claims));
        for (const listId of older) out.set(listId, await this.ensureDated(listId, opts));
        const batch = claims.filter((c) => !older.has(c.listId));
        if (batch.length === 0) break;
        // The claims another process owns are looked up again with the owned ones: a loser then writes
        // into the owner's generation (or re-dates, through `ensureDated`, if that went elsewhere).
        await this.events.redateAll(batch);
        pending = batch.map((c) => c.listId);
      }
      return out;
    }
    // Until the zones dated in are still the catalog's after the fact (as `ensureDated`): the look-up
    // after a round finds every list done, so a batch costs two more statements, not two per list.
    while (pending.length > 0) {
      const [zones, dating] = await Promise.all([
        this.catalog.storedTimezones(pending),
        this.events.dating(pending),
      ]);
      const claims: { listId: number; gen: number; timeZone: string }[] = [];
      for (const id of pending) {
        const timeZone = zones.get(id)!;
        const d = dating.get(id);
        // The only writer: a generation not done is a dead process's or a failed attempt's.
        if (d && d.timezone === timeZone && d.done) {
          const dated = { gen: d.gen, timeZone };
          this.dated.set(id, dated);
          out.set(id, dated);
          continue;
        }
        this.dated.delete(id);
        claims.push({ listId: id, gen: (d?.gen ?? 0) + 1, timeZone });
        if (d)
          this.log.info({ list_id: id, gen: d.gen + 1, from: d.timezone, to: timeZone }, 're-dating a list');
      }
      if (claims.length === 0) break;
      const rebuilt = new Set((await this.events.redateAll(claims)).rebuilt);
      for (const { listId, gen } of claims) if (rebuilt.has(listId)) await this.dropOlder(listId, gen);
      pending = claims.map((c) => c.listId);
    }
    return out;
  }

  /**
   * Make sure the list's rows are dated in its catalog time zone and return the generation (and zone)
   * new rows are written in. Re-dates when the zones differ, when the newest generation was claimed
   * but abandoned (by this process after an error, in embedded mode by any process, when `takeOver` (the
   * start-up recovery) by a process before this one began, or by another process for longer than
   * TAKE_OVER_MS), or when `force`d (rows written concurrently may have been
   * missed). Loops until the zone it dated in is still the catalog's after the fact, so a catalog
   * change racing a re-dating is never left behind.
   */
  private async ensureDated(
    listId: number,
    opts: { force?: boolean; takeOver?: boolean } = {},
  ): Promise<{ gen: number; timeZone: string }> {
    let force = opts.force === true;
    const known = force || opts.takeOver ? undefined : this.dated.get(listId);
    if (known) return known;
    for (;;) {
      const [zones, dating] = await Promise.all([
        this.catalog.storedTimezones([listId]),
        this.events.dating([listId]),
      ]);
      const timeZone = zones.get(listId)!;
      const d = dating.get(listId);
      if (d && d.timezone === timeZone && !force) {
        if (d.done) {
          if (this.events.soleWriter) this.dated.set(listId, { gen: d.gen, timeZone });
          return { gen: d.gen, timeZone };
        }
        const abandoned =
          this.events.soleWriter ||
          d.owner === this.events.instance ||
          d.ageMs > TAKE_OVER_MS ||
          (opts.takeOver === true && this.events.claimedBeforeStart(d.ageMs));
        // Another process is completing it: write into that generation; it becomes visible with it.
        if (!abandoned) return { gen: d.gen, timeZone };
      }
      force = false;
      this.dated.delete(listId);
      const gen = (d?.gen ?? 0) + 1;
      if (!(await this.events.claim(listId, gen, timeZone))) continue;
      if (d) this.log.info({ list_id: listId, gen, from: d.timezone, to: timeZone }, 're-dating a list');
      const { rebuilt } = await this.events.redate(listId, gen, timeZone);
      if (rebuilt) await this.dropOlder(listId, gen);
    }
  }

  /** Housekeeping after a rebuild: the older generations are never read again (a failure only warns). */
  private async dropOlder(listId: number, gen: number): Promise<void> {
    await this.events
      .dropOlderGenerations(listId, gen)
      .catch((err: unknown) =>
        this.log.warn({ err, list_id: listId, gen }, 'older generations of a list not dropped (unread)'),
      );
  }

  /** Grouping date: the day the message was sent when the record says so, else its own timestamp. */
  private async date(records: ActivityRecord[]): Promise<DatedActivity[]> {
    const lists = await this.ensureDatedAll([...new Set(records.map((r) => r.list_id))]);
    return records.map((record) => {
      const at = 'sent_at' in record && record.sent_at !== undefined ? record.sent_at : record.timestamp;
      const { gen, timeZone } = lists.get(record.list_id)!;
      return { record, day: localDate(at, timeZone), gen };
    });
  }
}

/** One call of `Pipeline.write`: its records and the token that names them (if any). */
interface WritePart {
  records: MailstatsRecord[];
  token: string | undefined;
}

/** A claim older than this, of a process that may have died, is taken over by the next writer. */
const TAKE_OVER_MS = 600_000;
