import { toDateTime64 } from '../dates.js';
import type { Db } from './client.js';

/** One subscriber's activity on one list, to be erased (docs/lifecycle.md, "erase"). */
export interface ErasurePair {
  list_id: number;
  subscriber_id: number;
}

/** An erasure as recorded: records of the pair timestamped up to `erasedAt` (epoch ms) are not counted. */
export interface Erasure extends ErasurePair {
  erasedAt: number;
}

const INT_SETTINGS = { output_format_json_quote_64bit_integers: 0 } as const;

/** A row of one of `subs` stored or timestamped at or before that subscriber's time in `ats` (epoch ms). */
const UP_TO = `subscriber_id IN {subs:Array(UInt64)}
  AND toUnixTimestamp64Milli(least(ts, ingested_at)) <= arrayElement({ats:Array(Int64)}, indexOf({subs:Array(UInt64)}, subscriber_id))`;
const upToParams = (upTo: Map<number, number>) => ({ subs: [...upTo.keys()], ats: [...upTo.values()] });

/** Per list, per subscriber: the latest erasure time (epoch ms). */
export type ErasedMap = Map<number, Map<number, number>>;

/**
 * The `erasures` table and the deletion of raw rows. The erasure's durable intent is its `done = 0`
 * row, written before anything is deleted; the `done = 1` row is written once the list is rebuilt.
 */
export class ErasureStore {
  constructor(private readonly db: Db) {}

  /** Record the intent (done = 0) of these erasures, each at its own `erasedAt`. */
  async recordIntent(erasures: Erasure[]): Promise<void> {
    await this.db.insert(
      'erasures',
      ['list_id', 'subscriber_id', 'erased_at', 'done'],
      erasures.map((e) => [e.list_id, e.subscriber_id, toDateTime64(e.erasedAt), 0]),
    );
  }

  async markDone(erasures: Erasure[]): Promise<void> {
    await this.db.insert(
      'erasures',
      ['list_id', 'subscriber_id', 'erased_at', 'done'],
      erasures.map((e) => [e.list_id, e.subscriber_id, toDateTime64(e.erasedAt), 1]),
    );
  }

  /** Intents without their done row (an erasure a crash or an error interrupted). */
  async pending(): Promise<Erasure[]> {
    const rows = await this.db.query<{ list_id: number; subscriber_id: number; at: number }>(
      `SELECT list_id, subscriber_id, toUnixTimestamp64Milli(erased_at) AS at FROM erasures
       GROUP BY list_id, subscriber_id, erased_at HAVING max(done) = 0`,
      {},
      INT_SETTINGS,
    );
    return rows.map((r) => ({ list_id: r.list_id, subscriber_id: r.subscriber_id, erasedAt: r.at }));
  }

  /**
   * Every erasure recorded (intent or done) for the given lists (all when none are given): the latest
   * erasure time per pair. An intent counts at once: from then on late copies are not stored.
   */
  async erased(lists?: number[]): Promise<ErasedMap> {
    const rows = await this.db.query<{ list_id: number; subscriber_id: number; at: number }>(
      `SELECT list_id, subscriber_id, toUnixTimestamp64Milli(max(erased_at)) AS at FROM erasures
       WHERE {all:Bool} OR list_id IN {lists:Array(UInt64)}
       GROUP BY list_id, subscriber_id`,
      { all: lists === undefined, lists: lists ?? [] },
      INT_SETTINGS,
    );
    const map: ErasedMap = new Map();
    for (const r of rows) {
      let subs = map.get(r.list_id);
      if (!subs) map.set(r.list_id, (subs = new Map()));
      subs.set(r.subscriber_id, r.at);
    }
    return map;
  }

  /**
   * How many raw rows of these subscribers the list holds up to each one's erasure time: a row
   * timestamped at or before it, or stored at or before it (`ingested_at`: an erasure made now takes
   * every row already stored, even one timestamped a little in the future; an erasure replayed with its
   * original time, after a restore, keeps the subscriber's activity timestamped after it).
   */
  async count(listId: number, upTo: Map<number, number>): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count() AS n FROM events WHERE list_id = {list:UInt64} AND ${UP_TO}`,
      { list: listId, ...upToParams(upTo) },
      INT_SETTINGS,
    );
    return row?.n ?? 0;
  }

  /**
   * Delete the raw rows of these subscribers on the list (every generation) up to each one's erasure
   * time (as `count`). A lightweight delete: the rows are invisible to every read once it returns
   * (lightweight_deletes_sync waits for it).
   */
  async deleteEvents(listId: number, upTo: Map<number, number>): Promise<void> {
    await this.db.command(
      `DELETE FROM events WHERE list_id = {list:UInt64} AND ${UP_TO}`,
      { list: listId, ...upToParams(upTo) },
      { lightweight_deletes_sync: '2' },
    );
  }

  /** Whether a list exists: in the catalog or with any stored activity. */
  async listExists(listId: number): Promise<boolean> {
    const [row] = await this.db.query<{ n: number }>(
      `SELECT (SELECT count() FROM catalog WHERE kind = 'list' AND key = {key:String})
            + (SELECT count() FROM (SELECT 1 FROM events WHERE list_id = {list:UInt64} LIMIT 1)) AS n`,
      { key: String(listId), list: listId },
      INT_SETTINGS,
    );
    return (row?.n ?? 0) > 0;
  }
}
