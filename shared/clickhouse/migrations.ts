import {
  ACTIVITY_ENUM,
  DAILY_SETS_GROUP,
  DAILY_SETS_SELECT,
  DAILY_SETS_VIEW_QUERY,
  DAILY_SETS_VIEW_QUERY_V4,
  RECENT_SET_DAYS,
  SCOPE_COUNTERS,
  SET_COLUMNS,
} from './schema.js';

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

/**
 * Append-only: a released migration is never edited, a change is a new one. Every statement is
 * idempotent (IF NOT EXISTS) so that a start interrupted half-way simply runs it again.
 */
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'raw events, dedup ledger, daily aggregates, catalog',
    statements: [
      // Raw activity, once per event_id. `day` is the grouping date in the list's time zone, fixed at
      // ingest and recomputed by a list rebuild when the list's time zone changes.
      `CREATE TABLE IF NOT EXISTS events (
        event_id String,
        type ${ACTIVITY_ENUM},
        list_id UInt64,
        workflow_id UInt64,
        trigger_id UInt64,
        subscriber_id UInt64,
        ts DateTime64(3, 'UTC'),
        sent_at Nullable(DateTime64(3, 'UTC')),
        day Date,
        status Enum8('none' = 0, 'ok' = 1, 'failed' = 2),
        reason String,
        order_id String,
        value_ron Decimal(18, 4),
        value_eur Decimal(18, 4),
        ingested_at DateTime64(3, 'UTC')
      ) ENGINE = MergeTree
      PARTITION BY toYYYYMM(ts)
      ORDER BY (list_id, ts)
      SETTINGS non_replicated_deduplication_window = 1000`,
      // Which event_ids were taken when: the dedup window is looked up here. Written after the
      // events insert (and its views) completed, so a crash in between makes the retry redo the
      // same token-deduplicated insert instead of skipping records.
      `CREATE TABLE IF NOT EXISTS event_ids (
        event_id String,
        first_seen DateTime64(3, 'UTC')
      ) ENGINE = MergeTree
      PARTITION BY toMonday(first_seen)
      ORDER BY event_id`,
      // Short-lived: the ids (and touched days) of one batch, so dedup and recompute run server-side
      // instead of shipping large id arrays as query parameters.
      `CREATE TABLE IF NOT EXISTS ingest_batches (
        batch_id String,
        event_id String,
        list_id UInt64,
        day Date,
        created DateTime DEFAULT now()
      ) ENGINE = MergeTree
      PARTITION BY toStartOfHour(created)
      ORDER BY (batch_id, event_id)
      TTL created + INTERVAL 1 HOUR DELETE`,
      // Per (list, day, workflow, trigger, type): subscriber bitmap + counters + exact money.
      `CREATE TABLE IF NOT EXISTS daily_sets (
        list_id UInt64,
        day Date,
        workflow_id UInt64,
        trigger_id UInt64,
        type ${ACTIVITY_ENUM},
        subs AggregateFunction(groupBitmap, UInt64),
        n SimpleAggregateFunction(sum, UInt64),
        ok SimpleAggregateFunction(sum, UInt64),
        failed SimpleAggregateFunction(sum, UInt64),
        ron SimpleAggregateFunction(sum, Decimal(38, 4)),
        eur SimpleAggregateFunction(sum, Decimal(38, 4)),
        -- Workflow before day in the key: a subset query reads only its workflows' rows; the
        -- per-batch recompute finds its days through the partition and this index.
        INDEX day_minmax day TYPE minmax GRANULARITY 1
      ) ENGINE = AggregatingMergeTree
      PARTITION BY toYYYYMM(day)
      ORDER BY (list_id, workflow_id, day, trigger_id, type)
      SETTINGS non_replicated_deduplication_window = 1000`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS daily_sets_mv TO daily_sets AS ${DAILY_SETS_SELECT} ${DAILY_SETS_GROUP}`,
      // The answer, precomputed as plain numbers for the shapes users ask most: all workflows
      // (workflow_id = 0), one workflow, one trigger (trigger_id = 0: any). Rewritten for the touched
      // days after every batch; the newest version of a row wins.
      `CREATE TABLE IF NOT EXISTS daily_scopes (
        list_id UInt64,
        workflow_id UInt64,
        trigger_id UInt64,
        day Date,
        ${SCOPE_COUNTERS.map((c) => `${c} UInt64`).join(',\n        ')},
        value_ron Decimal(38, 4),
        value_eur Decimal(38, 4),
        version UInt64
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY (list_id, workflow_id, trigger_id, day)`,
      // Catalog entities, one table: kind + key, newest (version, arrival) wins; payload is the
      // validated record as JSON.
      `CREATE TABLE IF NOT EXISTS catalog (
        kind LowCardinality(String),
        key String,
        list_id UInt64,
        version UInt64,
        arrival UInt64,
        payload String
      ) ENGINE = ReplacingMergeTree
      ORDER BY (kind, key, version, arrival)`,
    ],
  },
  {
    version: 2,
    name: 'kafka partition progress',
    statements: [
      // Per consumer group and partition: the offset range of the batch being written. Written before
      // the batch, so that after a crash or rebalance the same range is re-formed and re-inserted with
      // the same deduplication token (the ClickHouse Kafka Connect sink's design).
      `CREATE TABLE IF NOT EXISTS kafka_progress (
        group_id String,
        topic String,
        partition UInt32,
        first_offset Int64,
        last_offset Int64,
        updated DateTime64(6, 'UTC') DEFAULT now64(6)
      ) ENGINE = ReplacingMergeTree(updated)
      ORDER BY (group_id, topic, partition)`,
    ],
  },
  {
    version: 3,
    name: 'kafka progress names the data of its range',
    statements: [
      // Fingerprints (key, value, timestamp) of the range's first and last messages: a recorded range
      // is re-formed only when the messages now at its offsets are the recorded ones. Rows from before
      // (empty fingerprints) never match, so they are reset, never trusted.
      `ALTER TABLE kafka_progress ADD COLUMN IF NOT EXISTS first_hash String DEFAULT ''`,
      `ALTER TABLE kafka_progress ADD COLUMN IF NOT EXISTS last_hash String DEFAULT ''`,
    ],
  },
  {
    version: 4,
    name: 'list dating generations',
    statements: [
      // Which time zone each generation of a list's rows is dated in. A claim row (done = 0) is
      // written before a re-dating starts, with a deduplication token per (list, gen), so two
      // processes cannot both claim one generation; a done row (done = 1) switches readers to it.
      `CREATE TABLE IF NOT EXISTS list_dating (
        list_id UInt64,
        gen UInt64,
        timezone String,
        done UInt8,
        owner String,
        at DateTime64(6, 'UTC') DEFAULT now64(6)
      ) ENGINE = MergeTree
      ORDER BY (list_id, gen, done)
      SETTINGS non_replicated_deduplication_window = 10000`,
      // Rows written before this migration are generation 0 (a list with no list_dating rows reads 0).
      `ALTER TABLE events ADD COLUMN IF NOT EXISTS gen UInt64`,
      `ALTER TABLE ingest_batches ADD COLUMN IF NOT EXISTS gen UInt64`,
      // gen joins the sorting keys, so generations never merge into each other (a column added in the
      // same ALTER may extend the key; without a DEFAULT so the statement can be repeated).
      `ALTER TABLE daily_sets ADD COLUMN IF NOT EXISTS gen UInt64,
        MODIFY ORDER BY (list_id, workflow_id, day, trigger_id, type, gen)`,
      `ALTER TABLE daily_scopes ADD COLUMN IF NOT EXISTS gen UInt64,
        MODIFY ORDER BY (list_id, workflow_id, trigger_id, day, gen)`,
      `ALTER TABLE daily_sets_mv MODIFY QUERY ${DAILY_SETS_VIEW_QUERY_V4}`,
    ],
  },
  {
    version: 5,
    name: 'erasures',
    statements: [
      // The right to erasure (docs/lifecycle.md): one row when an erasure of a subscriber's activity
      // on a list is decided (done = 0, the durable intent) and one when its raw rows are deleted and
      // the list rebuilt (done = 1). Records of the pair timestamped up to erased_at that arrive later
      // are not stored; an intent without its done row is finished at the next start.
      `CREATE TABLE IF NOT EXISTS erasures (
        list_id UInt64,
        subscriber_id UInt64,
        erased_at DateTime64(3, 'UTC'),
        done UInt8,
        at DateTime64(6, 'UTC') DEFAULT now64(6)
      ) ENGINE = MergeTree
      ORDER BY (list_id, subscriber_id, erased_at, done)`,
    ],
  },
  {
    version: 6,
    name: 'batch scopes',
    statements: [
      // The (workflow, trigger) of each record of a batch: its day recompute writes only the answer rows
      // whose sets the batch changed (ARCHITECTURE.md, "Storage"). Rows written before carry 0 and
      // live an hour (the table's TTL): a batch is written and recomputed by one build.
      `ALTER TABLE ingest_batches ADD COLUMN IF NOT EXISTS workflow_id UInt64,
        ADD COLUMN IF NOT EXISTS trigger_id UInt64`,
    ],
  },
  {
    version: 7,
    name: 'list changes',
    statements: [
      // Server mode's change signal (ARCHITECTURE.md, "The stats answer cache"): one row per finished
      // write of a process's pipeline, naming the lists whose answers it may have changed (every = 1:
      // all lists), numbered 1, 2, 3 … per writing process. Every API process reads the rows newer than
      // it has seen a few times a second and drops what it holds of those lists. Sorted by arrival so
      // that the poll reads only the newest granules; a day is far more than any process needs.
      `CREATE TABLE IF NOT EXISTS list_changes (
        at DateTime64(6, 'UTC') DEFAULT now64(6),
        writer UUID,
        seq UInt64,
        lists Array(UInt64),
        every UInt8
      ) ENGINE = MergeTree
      ORDER BY at
      TTL toDateTime(at) + INTERVAL 1 DAY`,
    ],
  },
  {
    version: 8,
    name: 'buyers, share links, reports, alert thresholds',
    statements: [
      // Purchases keep their subscribers in daily_sets too (distinct buyers over a period,
      // docs/api.md "automation.statsTotals"). New inserts through the view; rows stored before get
      // their purchase sets added below: a union with zero counts and zero money, so running it again
      // (a start interrupted half-way) changes nothing.
      `ALTER TABLE daily_sets_mv MODIFY QUERY ${DAILY_SETS_VIEW_QUERY}`,
      `INSERT INTO daily_sets (list_id, day, workflow_id, trigger_id, type, gen, subs, n, ok, failed, ron, eur)
      SELECT list_id, day, workflow_id, trigger_id, type, gen, groupBitmapState(subscriber_id),
        toUInt64(0), toUInt64(0), toUInt64(0), toDecimal128(0, 4), toDecimal128(0, 4)
      FROM events
      WHERE type = 'purchase'
      GROUP BY list_id, day, workflow_id, trigger_id, type, gen`,
      // Read-only share links (docs/dashboard.md "Share links"): the token is kept only as its SHA-256
      // digest; a revocation is a newer version of the row.
      `CREATE TABLE IF NOT EXISTS share_links (
        id String,
        token_sha256 String,
        list_id UInt64,
        workflow_ids Array(UInt64),
        created_at DateTime64(3, 'UTC'),
        expires_at Nullable(DateTime64(3, 'UTC')),
        revoked UInt8,
        version UInt64
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY id`,
      // Scheduled e-mail reports (docs/dashboard.md "Reports"): one row per schedule, removal a newer version.
      `CREATE TABLE IF NOT EXISTS report_schedules (
        id String,
        list_id UInt64,
        recipients String,
        every LowCardinality(String),
        workflow_ids Array(UInt64),
        created_at DateTime64(3, 'UTC'),
        removed UInt8,
        version UInt64
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY id`,
      // Per report and period: the claim (one per attempt, written with a deduplication token so two
      // processes cannot both take it) and the outcome, so a period's report is sent once.
      `CREATE TABLE IF NOT EXISTS report_sends (
        report_id String,
        period String,
        owner String,
        state LowCardinality(String),
        at DateTime64(6, 'UTC') DEFAULT now64(6)
      ) ENGINE = MergeTree
      ORDER BY (report_id, period, at)
      SETTINGS non_replicated_deduplication_window = 10000`,
      // Per-list alert thresholds (docs/dashboard.md "Alerts"); the newest row of a list wins.
      `CREATE TABLE IF NOT EXISTS alert_settings (
        list_id UInt64,
        settings String,
        version UInt64
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY list_id`,
    ],
  },
  {
    version: 9,
    name: 'recent sets',
    statements: [
      // The day recompute of a write reads every set row of the (list, day) cells it touched. daily_sets
      // is sorted by list and workflow before day (for the answers' reads), so a cell meant reading the
      // list's whole month: at 100M records a write of today's records read a whole month's partition.
      // recent_sets holds the same rows of the last RECENT_SET_DAYS days only, sorted by day first and
      // dropped whole by day, fed by a view on every insert into daily_sets (the events view's blocks,
      // re-datings, carried days), so the recompute of recent days reads just those days
      // (ARCHITECTURE.md, "Storage"). Emptied and filled again when run again (an interrupted start).
      `CREATE TABLE IF NOT EXISTS recent_sets (
        day Date,
        list_id UInt64,
        gen UInt64,
        workflow_id UInt64,
        trigger_id UInt64,
        type ${ACTIVITY_ENUM},
        subs AggregateFunction(groupBitmap, UInt64),
        n SimpleAggregateFunction(sum, UInt64),
        ok SimpleAggregateFunction(sum, UInt64),
        failed SimpleAggregateFunction(sum, UInt64),
        ron SimpleAggregateFunction(sum, Decimal(38, 4)),
        eur SimpleAggregateFunction(sum, Decimal(38, 4))
      ) ENGINE = AggregatingMergeTree
      PARTITION BY day
      ORDER BY (day, list_id, gen, workflow_id, trigger_id, type)
      TTL day + INTERVAL ${RECENT_SET_DAYS + 1} DAY
      SETTINGS non_replicated_deduplication_window = 1000, ttl_only_drop_parts = 1`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS recent_sets_mv TO recent_sets AS
        SELECT ${SET_COLUMNS} FROM daily_sets WHERE day >= today() - ${RECENT_SET_DAYS}`,
      `TRUNCATE TABLE recent_sets`,
      `INSERT INTO recent_sets (${SET_COLUMNS})
        SELECT ${SET_COLUMNS} FROM daily_sets WHERE day >= today() - ${RECENT_SET_DAYS}`,
    ],
  },
];
