/**
 * Everything the storage layer writes and reads is named here, so the SQL of migrations, ingest and
 * queries agree on one definition of each column.
 */

export const ACTIVITY_ENUM =
  "Enum8('send' = 1, 'open' = 2, 'click' = 3, 'purchase' = 4, 'bounce' = 5, 'unsubscribe' = 6, 'spam' = 7, 'event' = 8, 'condition' = 9, 'action' = 10)";

export const EVENT_COLUMNS = [
  'event_id',
  'type',
  'list_id',
  'workflow_id',
  'trigger_id',
  'subscriber_id',
  'ts',
  'sent_at',
  'day',
  'status',
  'reason',
  'order_id',
  'value_ron',
  'value_eur',
  'ingested_at',
  'gen',
] as const;

/**
 * The per-(list, day, workflow, trigger, type) state a day's raw records fold into, as migration 1
 * created the view. Frozen: migration 1 uses it; the view's current query is DAILY_SETS_VIEW_QUERY.
 */
export const DAILY_SETS_SELECT = `
  SELECT list_id, day, workflow_id, trigger_id, type,
    groupBitmapStateIf(subscriber_id, type IN ('send', 'open', 'click')) AS subs,
    count() AS n,
    countIf(status = 'ok') AS ok,
    countIf(status = 'failed') AS failed,
    sum(value_ron) AS ron,
    sum(value_eur) AS eur
  FROM events`;

export const DAILY_SETS_GROUP = 'GROUP BY list_id, day, workflow_id, trigger_id, type';

/**
 * The states daily_sets keeps, folded from raw `events` rows. Since migration 8 purchases keep their
 * subscribers too (buyers over a period: docs/api.md "automation.statsTotals").
 */
const SET_STATES = `
    groupBitmapStateIf(subscriber_id, type IN ('send', 'open', 'click', 'purchase')) AS subs,
    count() AS n,
    countIf(status = 'ok') AS ok,
    countIf(status = 'failed') AS failed,
    sum(value_ron) AS ron,
    sum(value_eur) AS eur`;

/**
 * The dating generation (see `list_dating`, ARCHITECTURE.md "Re-dating a list"): every `events`,
 * `daily_sets` and `daily_scopes` row carries the generation of its list it was dated in; readers take
 * only the list's current generation, the highest one marked done (0 for a list never dated).
 */
export const CURRENT_GEN = `(SELECT max(gen) FROM list_dating WHERE list_id = {list:UInt64} AND done = 1)`;

/** The view's query as migration 4 set it (frozen: a released migration is never edited). */
export const DAILY_SETS_VIEW_QUERY_V4 = `
  SELECT list_id, day, workflow_id, trigger_id, type, gen,
    groupBitmapStateIf(subscriber_id, type IN ('send', 'open', 'click')) AS subs,
    count() AS n,
    countIf(status = 'ok') AS ok,
    countIf(status = 'failed') AS failed,
    sum(value_ron) AS ron,
    sum(value_eur) AS eur
  FROM events
  GROUP BY list_id, day, workflow_id, trigger_id, type, gen`;

/** The columns of a daily_sets row, in the order every statement that copies one names them. */
export const SET_COLUMNS = 'list_id, day, workflow_id, trigger_id, type, gen, subs, n, ok, failed, ron, eur';

/**
 * recent_sets (migration 9) keeps the daily_sets rows of the days since `today() - RECENT_SET_DAYS` (the
 * engine's clock), sorted by day first, for the day recompute of a write (ARCHITECTURE.md, "Storage").
 */
export const RECENT_SET_DAYS = 7;
/**
 * The days the recompute reads from recent_sets: one day inside what it keeps, so that neither a
 * midnight between a write's insert and its recompute nor a time zone's local date ahead of the engine's
 * can put a day it reads past the edge of what the view copied or what the TTL drops.
 */
export const RECENT_READ_FROM = `today() - ${RECENT_SET_DAYS - 1}`;

/** The view feeding daily_sets from every insert into events (per generation; since migration 8 with buyers). */
export const DAILY_SETS_VIEW_QUERY = `
  SELECT list_id, day, workflow_id, trigger_id, type, gen, ${SET_STATES}
  FROM events
  GROUP BY list_id, day, workflow_id, trigger_id, type, gen`;

/**
 * A list's re-dating into generation {gen}: the list's rows of every earlier generation, dated again
 * in {tz}, become daily_sets rows of {gen}. Rows written directly in {gen} reach daily_sets through
 * the view, so they are not read here (never counted twice).
 */
export const REDATE_SETS = `
  INSERT INTO daily_sets (${SET_COLUMNS})
  SELECT list_id, toDate(coalesce(sent_at, ts), {tz:String}) AS d, workflow_id, trigger_id, type,
    {gen:UInt64}, ${SET_STATES}
  FROM events
  WHERE list_id = {list:UInt64} AND gen < {gen:UInt64}
  GROUP BY list_id, d, workflow_id, trigger_id, type`;

/**
 * REDATE_SETS under a raw-event retention (docs/lifecycle.md "Retention"): only the records the list
 * dated on or after {from:Date} in its previous zone {oldTz} are dated again (every one of them is still
 * stored: {from} is past the retention's boundary); the days before it are CARRY_SETS.
 */
export const REDATE_RETAINED_SETS = `
  INSERT INTO daily_sets (${SET_COLUMNS})
  SELECT list_id, toDate(coalesce(sent_at, ts), {tz:String}) AS d, workflow_id, trigger_id, type,
    {gen:UInt64}, ${SET_STATES}
  FROM events
  WHERE list_id = {list:UInt64} AND gen < {gen:UInt64}
    AND toDate(coalesce(sent_at, ts), {oldTz:String}) >= {from:Date}
  GROUP BY list_id, d, workflow_id, trigger_id, type`;

/**
 * The days before {from:Date} of the list's previous generation {prev:UInt64} (its raw records may have
 * expired), copied into generation {gen:UInt64} as they are (dated in the previous zone), less every
 * subscriber erased from the list on or after that day (the erasure's date in the previous zone): an
 * erasure past retention still takes the subscriber out of every set.
 */
export const CARRY_SETS = `
  INSERT INTO daily_sets (${SET_COLUMNS})
  WITH (
    SELECT (groupArray(subscriber_id), groupArray(toDate(at, {oldTz:String})))
    FROM (SELECT subscriber_id, max(erased_at) AS at FROM erasures
          WHERE list_id = {list:UInt64} GROUP BY subscriber_id)
  ) AS erased
  SELECT list_id, day, workflow_id, trigger_id, type, {gen:UInt64},
    bitmapAndnot(subs, bitmapBuild(CAST(arrayFilter((s, e) -> e >= day, erased.1, erased.2) AS Array(UInt64)))),
    n, ok, failed, ron, eur
  FROM daily_sets
  WHERE list_id = {list:UInt64} AND gen = {prev:UInt64} AND day < {from:Date}`;

/**
 * daily_sets → the answer's counters, as (name, expression). Unions of subscriber bitmaps keep unique
 * counts exact across whatever rows are grouped; money stays Decimal.
 */
export const STATS_EXPRESSIONS: ReadonlyArray<readonly [string, string]> = [
  ['sends_unique', "groupBitmapMergeIf(subs, type = 'send')"],
  ['sends_total', "sumIf(n, type = 'send')"],
  ['opens_unique', "groupBitmapMergeIf(subs, type = 'open')"],
  ['opens_total', "sumIf(n, type = 'open')"],
  ['clicks_unique', "groupBitmapMergeIf(subs, type = 'click')"],
  ['clicks_total', "sumIf(n, type = 'click')"],
  ['purchase_count', "sumIf(n, type = 'purchase')"],
  ['bounce_total', "sumIf(n, type = 'bounce')"],
  ['unsub_total', "sumIf(n, type = 'unsubscribe')"],
  ['spam_total', "sumIf(n, type = 'spam')"],
  ['events_ok', "sumIf(ok, type = 'event')"],
  ['events_failed', "sumIf(failed, type = 'event')"],
  ['conditions_ok', "sumIf(ok, type = 'condition')"],
  ['conditions_failed', "sumIf(failed, type = 'condition')"],
  ['actions_ok', "sumIf(ok, type = 'action')"],
  ['actions_failed', "sumIf(failed, type = 'action')"],
  ['value_ron', "sumIf(ron, type = 'purchase')"],
  ['value_eur', "sumIf(eur, type = 'purchase')"],
];
export const STATS_NAMES = STATS_EXPRESSIONS.map(([name]) => name);
export const STATS_SELECT = STATS_EXPRESSIONS.map(([name, expr]) => `${expr} AS ${name}`).join(',\n  ');

/** The same counters read back from daily_scopes (plain numbers), in the same names. */
export const SCOPE_COUNTERS = [
  'sends_unique',
  'sends_total',
  'opens_unique',
  'opens_total',
  'clicks_unique',
  'clicks_total',
  'purchase_count',
  'bounce_total',
  'unsub_total',
  'spam_total',
  'events_ok',
  'events_failed',
  'conditions_ok',
  'conditions_failed',
  'actions_ok',
  'actions_failed',
] as const;

export type StatsCounter = (typeof SCOPE_COUNTERS)[number];
/** One day of counters as ClickHouse returns it (money as exact decimal strings). */
export type DayCounters = Record<StatsCounter, number> & {
  date: string;
  value_ron: string;
  value_eur: string;
};
