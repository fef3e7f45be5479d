// Modes: embedded only — the cluster rewrite and lock on the embedded engine; the rewritten DDL meets the real 26.7 server in server mode (test/integration/cluster-ddl.test.ts)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../shared/clickhouse/client.js';
import { forCluster, REPLICA_PATH, withMigrationLock } from '../../shared/clickhouse/migrate.js';
import { MIGRATIONS } from '../../shared/clickhouse/migrations.js';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/log.js';

const log = createLogger('silent');
const statements = MIGRATIONS.flatMap((m) =>
  m.statements.map((s, i) => ({ name: `v${m.version}#${i + 1}`, s })),
);
const DDL_HEAD =
  /^\s*(CREATE\s+(TABLE|MATERIALIZED\s+VIEW|VIEW|DICTIONARY)(\s+IF\s+NOT\s+EXISTS)?|ALTER\s+TABLE|DROP\s+(TABLE|VIEW|DICTIONARY)(\s+IF\s+EXISTS)?|RENAME\s+TABLE|TRUNCATE\s+TABLE)\s+(\S+)/i;

let dir: string;
let db: Db;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailstats-cluster-'));
  db = await openDb(loadConfig({ DATA_DIR: dir }), log);
});
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('migrations rewritten for CLICKHOUSE_CLUSTER', () => {
  it('leaves statements alone without a cluster', () => {
    for (const { s } of statements) expect(forCluster(s, undefined)).toBe(s);
  });

  it.each(statements)('$name: ON CLUSTER, Replicated engine, replicated dedup window', ({ s }) => {
    const out = forCluster(s, 'prod');
    const head = DDL_HEAD.exec(s);
    if (head) expect(out).toContain(`${head[0]} ON CLUSTER 'prod'`);
    expect(out).not.toMatch(/ENGINE\s*=\s*(Replacing|Aggregating|Summing|Collapsing)?MergeTree\b/);
    expect(out).not.toMatch(/non_replicated_deduplication_window/);
    const engine = /ENGINE\s*=\s*(\w*)MergeTree\b(\s*\(([^)]*)\))?/.exec(s);
    if (engine) {
      const args = engine[3]?.trim();
      expect(out).toContain(
        `ENGINE = Replicated${engine[1]}MergeTree(${REPLICA_PATH}${args ? `, ${args}` : ''})`,
      );
      // The window the one-node table had (none = 0) is the replicated table's window.
      const window = /non_replicated_deduplication_window\s*=\s*(\d+)/.exec(s)?.[1] ?? '0';
      expect(out).toMatch(new RegExp(`replicated_deduplication_window = ${window}\\b`));
    }
  });

  it('covers the tables the exactly-once argument needs', () => {
    const out = statements.map(({ s }) => forCluster(s, 'prod')).join('\n');
    for (const table of [
      'events',
      'event_ids',
      'ingest_batches',
      'daily_sets',
      'recent_sets',
      'daily_scopes',
      'catalog',
      'kafka_progress',
    ])
      expect(out).toMatch(
        new RegExp(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER 'prod'[\\s\\S]*?ENGINE = Replicated`),
      );
    expect(out).toContain(
      "CREATE MATERIALIZED VIEW IF NOT EXISTS daily_sets_mv ON CLUSTER 'prod' TO daily_sets",
    );
    expect(out).toContain(
      "CREATE MATERIALIZED VIEW IF NOT EXISTS recent_sets_mv ON CLUSTER 'prod' TO recent_sets",
    );
    expect(out).toMatch(/events ON CLUSTER[\s\S]*?replicated_deduplication_window = 1000/);
  });

  it.each(statements)('$name: the rewritten statement parses (ClickHouse EXPLAIN AST)', async ({ s }) => {
    // chDB answers EXPLAIN with one string per line of the tree.
    const text = JSON.stringify(await db.query<unknown>(`EXPLAIN AST ${forCluster(s, 'prod')}`));
    if (/ENGINE\s*=/.test(s)) expect(text).toMatch(/Function Replicated\w*MergeTree/);
  });

  it('does not add ON CLUSTER twice, and rewrites a bare engine with arguments', () => {
    const s =
      "CREATE TABLE IF NOT EXISTS t ON CLUSTER 'prod' (a UInt8, v UInt64) ENGINE = ReplacingMergeTree(v) ORDER BY a";
    expect(forCluster(s, 'prod')).toBe(
      `CREATE TABLE IF NOT EXISTS t ON CLUSTER 'prod' (a UInt8, v UInt64) ENGINE = ReplicatedReplacingMergeTree(${REPLICA_PATH}, v) ORDER BY a\n      SETTINGS replicated_deduplication_window = 0`,
    );
    expect(forCluster('ALTER TABLE events ADD COLUMN IF NOT EXISTS x UInt8', 'prod')).toBe(
      "ALTER TABLE events ON CLUSTER 'prod' ADD COLUMN IF NOT EXISTS x UInt8",
    );
    expect(forCluster('INSERT INTO t SELECT 1', 'prod')).toBe('INSERT INTO t SELECT 1');
    expect(
      forCluster('ALTER TABLE events MODIFY SETTING non_replicated_deduplication_window = 10', 'prod'),
    ).toBe("ALTER TABLE events ON CLUSTER 'prod' MODIFY SETTING replicated_deduplication_window = 10");
  });
});

describe('migration lock (run against the real engine)', () => {
  it('lets one process at a time in, the others wait and then run', async () => {
    const order: string[] = [];
    const worker = (name: string) =>
      withMigrationLock(
        db,
        log,
        async () => {
          order.push(`${name} in`);
          await new Promise((r) => setTimeout(r, 300));
          order.push(`${name} out`);
          return name;
        },
        { pollMs: 50 },
      );
    const results = await Promise.all(['a', 'b', 'c', 'd'].map(worker));
    expect(results).toEqual(['a', 'b', 'c', 'd']);
    expect(order).toHaveLength(8);
    for (let i = 0; i < order.length; i += 2) {
      expect(order[i]).toMatch(/ in$/);
      expect(order[i + 1]).toBe(order[i]!.replace(' in', ' out'));
    }
    // Released: nothing left behind.
    const left = await db.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'schema_migrations_lock%'",
    );
    expect(left).toEqual([]);
  });

  it('is released when the work fails', async () => {
    await expect(
      withMigrationLock(db, log, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await withMigrationLock(db, log, async () => 'next', { pollMs: 50 })).toBe('next');
  });

  it('a holder that died is overtaken once its lease expires, by exactly one waiter at a time', async () => {
    const dead = '00000000-0000-4000-8000-000000000001';
    await db.command(
      `CREATE TABLE schema_migrations_lock (owner String) ENGINE = Memory COMMENT '${JSON.stringify({ owner: dead, expires: Date.now() + 1500 })}'`,
    );
    let inside = 0;
    let maxInside = 0;
    const worker = () =>
      withMigrationLock(
        db,
        log,
        async () => {
          maxInside = Math.max(maxInside, ++inside);
          await new Promise((r) => setTimeout(r, 200));
          inside--;
        },
        { pollMs: 50 },
      );
    const started = Date.now();
    await Promise.all([worker(), worker(), worker()]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(maxInside).toBe(1);
  });

  it('a waiter that read the dead holder before another took over cannot rename the new holder’s lock away', async () => {
    // Seen in CI under load: the first waiter renamed the dead lock aside, dropped it and took the lock; a
    // second waiter that had read the dead owner earlier then ran the same rename, which now moved the new
    // holder's lock, and entered beside it. Here the late waiter's rename runs while the new holder works.
    const dead = '00000000-0000-4000-8000-000000000002';
    const expiredName = `schema_migrations_lock_expired_${dead.replace(/-/g, '')}`;
    await db.command(
      `CREATE TABLE schema_migrations_lock (owner String) ENGINE = Memory COMMENT '${JSON.stringify({ owner: dead, expires: Date.now() - 1 })}'`,
    );
    const lockComment = async () =>
      (
        await db.query<{ comment: string }>(
          "SELECT comment FROM system.tables WHERE database = currentDatabase() AND name = 'schema_migrations_lock'",
        )
      )[0]?.comment;
    await withMigrationLock(
      db,
      log,
      async () => {
        const mine = await lockComment();
        expect(mine).not.toContain(dead);
        await expect(db.command(`RENAME TABLE schema_migrations_lock TO ${expiredName}`)).rejects.toThrow(
          /already exists|TABLE_ALREADY_EXISTS/i,
        );
        expect(await lockComment()).toBe(mine);
      },
      { pollMs: 50 },
    );
    // Taken over less than a lease ago: kept (a late waiter may still be about to rename).
    await withMigrationLock(db, log, async () => undefined);
    const names = async () =>
      (
        await db.query<{ name: string }>(
          "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'schema_migrations_lock%'",
        )
      ).map((r) => r.name);
    expect(await names()).toContain(expiredName);
    // A lease after its own lease ended, the next holder drops it.
    await withMigrationLock(db, log, async () => undefined, { leaseMs: 0 });
    expect(await names()).toEqual([]);
  });
});
