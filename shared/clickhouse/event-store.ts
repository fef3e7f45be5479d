import { createHash, randomUUID } from 'node:crypto';
import type { ActivityRecord } from '../records/index.js';
import type { Db } from './client.js';
import { DAILY_SETS_GROUP, DAILY_SETS_SELECT, EVENT_COLUMNS, STATS_NAMES, STATS_SELECT } from './schema.js';

/** An activity record placed on its grouping date (in its list's time zone). */
export interface DatedActivity {
  record: ActivityRecord;
  day: string;
}

export const toDateTime64 = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);

/** A record as a row of `events`, in EVENT_COLUMNS order. */
export function eventRow({ record: r, day }: DatedActivity, ingestedAt: string): unknown[] {
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
  ];
}

/** The batch's event_ids already taken within the dedup window. */
const SEEN_IN_WINDOW = `
  SELECT event_id FROM event_ids
  WHERE first_seen >= now64(3) - toIntervalDay({window:UInt32})
    AND event_id IN (SELECT event_id FROM ingest_batches WHERE batch_id = {batch:String})`;

/** The (list, day) pairs of a batch; the day bounds let partition pruning and the day index work. */
const BATCH_DAYS = `
  day BETWEEN (SELECT min(day) FROM ingest_batches WHERE batch_id = {batch:String})
          AND (SELECT max(day) FROM ingest_batches WHERE batch_id = {batch:String})
  AND (list_id, day) IN (SELECT DISTINCT list_id, day FROM ingest_batches WHERE batch_id = {batch:String})`;

/** Recompute the precomputed answer rows (daily_scopes) for the (list, day) pairs chosen by `where`. */
const recomputeScopes = (where: string) => `
  INSERT INTO daily_scopes (list_id, workflow_id, trigger_id, day, ${STATS_NAMES.join(', ')}, version)
  SELECT list_id, workflow_id, trigger_id, day,
    ${STATS_SELECT},
    {version:UInt64}
  FROM daily_sets
  WHERE ${where}
  GROUP BY GROUPING SETS ((list_id, day), (list_id, day, workflow_id), (list_id, day, workflow_id, trigger_id), (list_id, day, trigger_id))
  -- trigger_id 0 means "no trigger" in the data but "any trigger" in daily_scopes: keep only the latter.
  HAVING NOT (bitAnd(grouping(workflow_id, trigger_id), 1) = 0 AND trigger_id = 0)`;

let lastVersion = 0;
/** Increasing per process; newer scope rows replace older ones. */
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

/**
 * The write side of activity storage. Callers serialise writes (one writer per process; Kafka keys by
 * list, so one writer per list): dedup lookups and scope recomputes assume no concurrent writer of
 * the same list.
 */
export class EventStore {
  constructor(
    private readonly db: Db,
    private readonly dedupWindowDays: number,
  ) {}

  /**
   * Store a batch: drop event_ids already taken within the window, then refresh the touched days.
   * `token` names the batch for insert deduplication when the caller can re-form the very same batch
   * after a crash (Kafka: topic, partition and offset range); by default it is derived from the ids.
   */
  async write(batch: DatedActivity[], token?: string): Promise<{ written: number; duplicates: number }> {
    const unique = new Map<string, DatedActivity>();
    for (const a of batch) if (!unique.has(a.record.event_id)) unique.set(a.record.event_id, a);
    if (unique.size === 0) return { written: 0, duplicates: batch.length };

    const batchId = randomUUID();
    await this.db.insert(
      'ingest_batches',
      ['batch_id', 'event_id', 'list_id', 'day'],
      [...unique.values()].map((a) => [batchId, a.record.event_id, a.record.list_id, a.day]),
    );
    const seen = await this.db.query<{ event_id: string }>(SEEN_IN_WINDOW, {
      window: this.dedupWindowDays,
      batch: batchId,
    });
    for (const { event_id } of seen) unique.delete(event_id);
    const fresh = [...unique.values()];
    if (fresh.length > 0) {
      const now = toDateTime64(Date.now());
      // The token makes a retry of this very insert a no-op in events and its views.
      const blockToken =
        token ??
        createHash('sha256')
          .update(fresh.map((a) => a.record.event_id).join('\n'))
          .digest('hex');
      await this.db.insert(
        'events',
        EVENT_COLUMNS,
        fresh.map((a) => eventRow(a, now)),
        blockToken,
      );
      // Ledger last: see the event_ids table. Server-side, from the batch's ids not already in the window.
      await this.db.command(
        `INSERT INTO event_ids SELECT event_id, now64(3) FROM ingest_batches
         WHERE batch_id = {batch:String} AND event_id NOT IN (${SEEN_IN_WINDOW})`,
        { window: this.dedupWindowDays, batch: batchId },
        { insert_deduplication_token: batchId },
      );
    }
    // Also when nothing was fresh: a retry after a crash between the ledger and this step heals here.
    await this.db.command(recomputeScopes(BATCH_DAYS), { batch: batchId, version: nextVersion() });
    return { written: fresh.length, duplicates: batch.length - fresh.length };
  }

  /** Re-date every record of a list in a new time zone and rebuild its aggregates from the raw rows. */
  async rebuildList(listId: number, timeZone: string): Promise<void> {
    const sync = { mutations_sync: '2' } as const;
    const p = { list: listId, tz: timeZone };
    await this.db.command(
      'ALTER TABLE events UPDATE day = toDate(coalesce(sent_at, ts), {tz:String}) WHERE list_id = {list:UInt64}',
      p,
      sync,
    );
    await this.db.command('ALTER TABLE daily_sets DELETE WHERE list_id = {list:UInt64}', p, sync);
    await this.db.command(
      `INSERT INTO daily_sets ${DAILY_SETS_SELECT} WHERE list_id = {list:UInt64} ${DAILY_SETS_GROUP}`,
      p,
      { insert_deduplication_token: randomUUID() },
    );
    await this.db.command('ALTER TABLE daily_scopes DELETE WHERE list_id = {list:UInt64}', p, sync);
    await this.db.command(recomputeScopes('list_id = {list:UInt64}'), { ...p, version: nextVersion() });
  }
}
