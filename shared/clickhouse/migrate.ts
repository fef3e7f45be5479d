import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.js';
import type { Db } from './client.js';
import { MIGRATIONS, type Migration } from './migrations.js';

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32, name String, applied_at DateTime DEFAULT now()
  ) ENGINE = ReplacingMergeTree ORDER BY version`;

/**
 * Apply the migrations not yet recorded, in order. On a server several processes may start together
 * (api and ingest roles, replicas): they take turns under a lock (see withMigrationLock). Embedded,
 * one process owns DATA_DIR (the embedded mode is one process by design), so there is nobody to race with.
 */
export async function migrate(db: Db, log: Logger, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  const run = () => applyPending(db, log, migrations);
  return db.mode === 'server' ? withMigrationLock(db, log, run) : run();
}

async function applyPending(db: Db, log: Logger, migrations: Migration[]): Promise<number[]> {
  await db.command(forCluster(MIGRATIONS_TABLE, db.cluster));
  const done = new Set(
    (await db.query<{ version: number }>('SELECT DISTINCT version FROM schema_migrations')).map(
      (r) => r.version,
    ),
  );
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    for (const statement of m.statements) {
      const view = MODIFY_QUERY.exec(statement)?.[1];
      // A reattach below cut short by a crash left the view detached (until the server restarts).
      if (view) await db.command(attachView(view, db.cluster));
      await db.command(forCluster(statement, db.cluster));
      if (view) await reattachView(db, view);
    }
    await db.insert('schema_migrations', ['version', 'name'], [[m.version, m.name]]);
    log.info({ version: m.version, name: m.name }, 'migration applied');
    applied.push(m.version);
  }
  return applied;
}

/** `ALTER TABLE <view> MODIFY QUERY …`, with the view's name. */
const MODIFY_QUERY = /^\s*ALTER\s+TABLE\s+([A-Za-z_][A-Za-z0-9_]*)\s+MODIFY\s+QUERY\b/i;

const attachView = (view: string, cluster: string | undefined) =>
  `ATTACH TABLE IF NOT EXISTS ${view}${cluster ? ` ON CLUSTER '${cluster}'` : ''}`;

/**
 * Detach and attach a materialized view right after `MODIFY QUERY`, so that it is loaded from its stored
 * definition, as after a server restart. Measured on ClickHouse 26.7 (server and embedded): inserts made
 * while the server process that ran `MODIFY QUERY` still ran gave the view's part a deduplication
 * identity that a retry of the same insert (same token) after a server crash and restart did not match:
 * the source table dropped the retry as a duplicate, the view's table took it again, and every answer
 * counted that batch twice (docs/deployment.md, "A server crash"). Reloaded, the view's identity is
 * the one it has after every restart. Inserts of other processes in the instant between DETACH and
 * ATTACH would miss the view: this runs only while migration 4 is applied (a new install, or an upgrade
 * from before it), before this process writes anything.
 */
async function reattachView(db: Db, view: string): Promise<void> {
  await db.command(`DETACH TABLE ${view}${db.cluster ? ` ON CLUSTER '${db.cluster}'` : ''}`);
  await db.command(attachView(view, db.cluster));
}

// ---------------------------------------------------------------------------------------------------
// Cluster: the migrations are written for one node; on a cluster they are rewritten when applied.

/** Where each replicated table keeps its replication log in Keeper (macros expanded by ClickHouse). */
export const REPLICA_PATH = `'/clickhouse/tables/{shard}/{database}/{table}', '{replica}'`;

const CREATE_OR_ALTER =
  /^(\s*(?:CREATE\s+(?:TABLE|MATERIALIZED\s+VIEW|VIEW|DICTIONARY)\s+IF\s+NOT\s+EXISTS|CREATE\s+(?:TABLE|MATERIALIZED\s+VIEW|VIEW|DICTIONARY)|ALTER\s+TABLE|DROP\s+(?:TABLE|VIEW|DICTIONARY)(?:\s+IF\s+EXISTS)?|RENAME\s+TABLE|TRUNCATE\s+TABLE(?:\s+IF\s+EXISTS)?)\s+)([A-Za-z_][A-Za-z0-9_.]*|`[^`]+`)(?!\s+ON\s+CLUSTER)/i;
const MERGE_TREE_ENGINE =
  /\bENGINE\s*=\s*(Replacing|Aggregating|Summing|Collapsing|VersionedCollapsing|Graphite)?MergeTree\b(\s*\(([^)]*)\))?/i;

/**
 * One statement for a cluster (unchanged when `cluster` is undefined):
 * - `ON CLUSTER '<cluster>'` after the object name of CREATE/ALTER/DROP/RENAME/TRUNCATE;
 * - `<Kind>MergeTree(args)` → `Replicated<Kind>MergeTree('<keeper path>', '{replica}', args)`;
 * - `non_replicated_deduplication_window` → `replicated_deduplication_window`, and a table that sets
 *   neither gets `replicated_deduplication_window = 0`, so that insert deduplication behaves exactly as
 *   on one node (a non-replicated table does not deduplicate unless told to; a replicated one would).
 * Other statements (INSERT … SELECT backfills) are left alone: on one shard they replicate as data.
 */
export function forCluster(statement: string, cluster: string | undefined): string {
  if (!cluster) return statement;
  let out = /\bON\s+CLUSTER\b/i.test(statement)
    ? statement
    : statement.replace(
        CREATE_OR_ALTER,
        (_, head: string, name: string) => `${head}${name} ON CLUSTER '${cluster}'`,
      );
  const engine = MERGE_TREE_ENGINE.exec(out);
  if (engine) {
    const kind = engine[1] ?? '';
    const args = engine[3]?.trim();
    out =
      out.slice(0, engine.index) +
      `ENGINE = Replicated${kind}MergeTree(${REPLICA_PATH}${args ? `, ${args}` : ''})` +
      out.slice(engine.index + engine[0].length);
    if (!/\b(non_)?replicated_deduplication_window\b/i.test(out))
      out = /\bSETTINGS\b/i.test(out.slice(engine.index))
        ? out.replace(/(\bSETTINGS\s+)/i, '$1replicated_deduplication_window = 0, ')
        : `${out.trimEnd()}\n      SETTINGS replicated_deduplication_window = 0`;
  }
  // Also in ALTER TABLE … MODIFY SETTING: the replicated table's window is the one-node table's window.
  return out.replace(/\bnon_replicated_deduplication_window\b/gi, 'replicated_deduplication_window');
}

// ---------------------------------------------------------------------------------------------------
// Lock: one migrating process at a time on a server or cluster.

const LOCK_TABLE = 'schema_migrations_lock';
/**
 * A holder that died keeps the lock at most this long. A live holder renews its lease every sixth of it
 * while it works (`renewLease`), so migrations may take longer; the lease only bounds how long the others
 * wait for a holder killed mid-way (10 minutes before: every restart of a service SIGKILLed while it
 * migrated waited that long, 503 "applying migrations").
 */
export const LOCK_LEASE_MS = 30_000;

/** randomUUID()'s shape. */
const OWNER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LockInfo {
  owner: string;
  expires: number;
}

/**
 * `CREATE TABLE` of a given name succeeds for exactly one of several concurrent callers (on a cluster
 * too: ON CLUSTER statements are ordered through the distributed DDL queue), so the lock is a table
 * whose COMMENT names its owner and lease expiry. A waiter polls; when the lease has expired (holder
 * killed) it renames the lock to a name derived from the dead owner's id: of several waiters that saw
 * the same dead owner only one rename can succeed, and a late one cannot rename a newer holder's lock
 * by mistake, because the renamed table keeps that name taken. It is dropped only once its lease ended
 * a whole lease ago (`dropExpiredLocks`): dropped at once, a waiter that had read the dead owner before
 * the first rename renamed the next holder's lock away and entered beside it (seen under load in CI).
 */
export async function withMigrationLock<T>(
  db: Db,
  log: Logger,
  work: () => Promise<T>,
  options: { leaseMs?: number; pollMs?: number } = {},
): Promise<T> {
  const { leaseMs = LOCK_LEASE_MS, pollMs = 1_000 } = options;
  const owner = randomUUID();
  const onCluster = db.cluster ? ` ON CLUSTER '${db.cluster}'` : '';
  for (let attempt = 1; ; attempt++) {
    const info: LockInfo = { owner, expires: Date.now() + leaseMs };
    try {
      await db.command(
        // The comment is a literal (COMMENT takes no query parameter): a UUID and a number, no quotes.
        `CREATE TABLE ${LOCK_TABLE}${onCluster} (owner String) ENGINE = Memory COMMENT '${JSON.stringify(info)}'`,
      );
      break;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const holder = await readLock(db);
    if (holder && holder.expires < Date.now()) {
      log.warn({ holder: holder.owner }, 'migration lock expired (holder gone): taking it over');
      try {
        await db.command(
          `RENAME TABLE ${LOCK_TABLE} TO ${LOCK_TABLE}_expired_${holder.owner.replace(/-/g, '')}${onCluster}`,
        );
      } catch (err) {
        if (!isAlreadyExists(err) && !isUnknownTable(err)) throw err;
      }
      continue;
    }
    if (attempt === 1 || attempt % 10 === 0)
      log.info(
        { holder: holder?.owner, attempt },
        'waiting for the migration lock (another process migrates)',
      );
    await sleep(pollMs);
  }
  const renewal = renewLease(db, log, owner, leaseMs, onCluster);
  try {
    await dropExpiredLocks(db, leaseMs, onCluster);
    return await work();
  } finally {
    await renewal.stop();
    const holder = await readLock(db).catch(() => undefined);
    if (holder?.owner === owner) await db.command(`DROP TABLE IF EXISTS ${LOCK_TABLE}${onCluster} SYNC`);
  }
}

/**
 * Push the holder's lease forward every sixth of it while it works (`ALTER TABLE … MODIFY COMMENT`), only
 * while the lock is still this owner's (a holder that stalled past its lease and was taken over must not
 * rewrite the next holder's lock). A failed renewal is logged and tried again at the next tick.
 */
function renewLease(
  db: Db,
  log: Logger,
  owner: string,
  leaseMs: number,
  onCluster: string,
): { stop(): Promise<void> } {
  if (leaseMs <= 0) return { stop: async () => undefined };
  let running: Promise<void> = Promise.resolve();
  const renew = async () => {
    const holder = await readLock(db);
    if (holder?.owner !== owner) return;
    const info: LockInfo = { owner, expires: Date.now() + leaseMs };
    await db.command(`ALTER TABLE ${LOCK_TABLE}${onCluster} MODIFY COMMENT '${JSON.stringify(info)}'`);
  };
  const timer = setInterval(() => {
    running = running
      .then(renew)
      .catch((err: unknown) => log.warn({ err }, 'migration lock lease not renewed (tried again)'));
  }, leaseMs / 6);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

const EXPIRED_LOCK = /^schema_migrations_lock_expired_[0-9a-f]{32}$/;

/** Expired locks taken over more than a lease ago: no waiter that read them is still about to rename. */
async function dropExpiredLocks(db: Db, leaseMs: number, onCluster: string): Promise<void> {
  const rows = await db.query<{ name: string; comment: string }>(
    `SELECT name, comment FROM system.tables
     WHERE database = currentDatabase() AND startsWith(name, {prefix:String})`,
    { prefix: `${LOCK_TABLE}_expired_` },
  );
  for (const { name, comment } of rows) {
    let expires = Number.POSITIVE_INFINITY;
    try {
      expires = Number((JSON.parse(comment) as Partial<LockInfo>).expires);
    } catch {
      // Not a comment we wrote: left alone.
    }
    // The name goes into DDL: only the exact shape this module creates.
    if (EXPIRED_LOCK.test(name) && expires < Date.now() - leaseMs)
      await db.command(`DROP TABLE IF EXISTS ${name}${onCluster} SYNC`);
  }
}

async function readLock(db: Db): Promise<LockInfo | undefined> {
  const [row] = await db.query<{ comment: string }>(
    'SELECT comment FROM system.tables WHERE database = currentDatabase() AND name = {name:String}',
    { name: LOCK_TABLE },
  );
  if (!row) return undefined;
  try {
    const info = JSON.parse(row.comment) as Partial<LockInfo>;
    // The owner goes into RENAME/DROP statements: only the exact shape withMigrationLock writes (a
    // lower-case UUID) is taken, never whatever else someone put in the comment.
    if (typeof info.owner === 'string' && OWNER.test(info.owner) && Number.isSafeInteger(info.expires))
      return info as LockInfo;
  } catch {
    // A lock table without a readable comment is not ours to judge: treat it as held (as below).
  }
  return { owner: 'unknown', expires: Number.POSITIVE_INFINITY };
}

const errorCode = (err: unknown) => String((err as { code?: unknown })?.code ?? '');
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
/** 57 TABLE_ALREADY_EXISTS; on a cluster the initiator reports the hosts' errors in its message. */
const isAlreadyExists = (err: unknown) =>
  errorCode(err) === '57' || /TABLE_ALREADY_EXISTS|Code: 57\b/.test(errorText(err));
/** 60 UNKNOWN_TABLE: another waiter renamed the expired lock first. */
const isUnknownTable = (err: unknown) =>
  errorCode(err) === '60' || /UNKNOWN_TABLE|Code: 60\b/.test(errorText(err));
