import {
  ClickHouseLogLevel,
  createClient,
  type ClickHouseClient,
  type ClickHouseSettings,
  type Logger as ClientLogger,
} from '@clickhouse/client';
import { mkdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { clickhouseFailed } from '../metrics.js';
import type { Logger } from '../log.js';
import { PermanentError, waitFor } from '../retry.js';
import { dataDirHolder, dataDirInUseMessage } from './data-dir-holder.js';

export type Params = Record<string, unknown>;

/**
 * The part of `chdb/connection` mailstats uses, declared here rather than imported: chdb is an optional
 * dependency, imported on demand (openEmbedded), so that server mode runs and builds where it is not
 * installed (the production image) and never loads its native addon.
 */
interface ChdbConnection {
  chdb: {
    rawInsert(args: {
      table: string;
      columns: readonly string[];
      values: Buffer;
      format: string;
      settings: Record<string, unknown>;
    }): Promise<unknown>;
  };
}
interface ChdbModule {
  createChdbConnection(options: { path: string }): ChdbConnection;
}
interface ChdbSession {
  close(): void;
}
interface ChdbSessionModule {
  Session: new (path: string, opts: { connectionArgs: readonly string[] }) => ChdbSession;
}
/** Variables, not literals: the type-checker must not require chdb's types to be installed. */
const CHDB_MODULE = 'chdb/connection';
const CHDB_SESSION_MODULE = 'chdb';

/**
 * Engine arguments that only take effect when the data directory is first opened in the process (not as
 * `SET`): BACKUP/RESTORE to files need `backups.allowed_path`, and lightweight deletes (erasure) wait on
 * the background pool, 2 threads by default (a delete on 10M rows took ~3 s at 2, ~0.15 s at 16).
 */
export function engineArgs(backupRoot: string): string[] {
  return [`--backups.allowed_path=${backupRoot}`, '--background_pool_size=16'];
}

/**
 * Open the embedded engine on `path` with `engineArgs`: a chDB Session opened first fixes the arguments
 * of the process's one connection to that path (opened after createChdbConnection, they are silently
 * ignored). The session stays open as long as the connection: closing it would close the engine.
 */
export async function openChdb(
  path: string,
  backupRoot: string,
): Promise<{ chdb: ChdbConnection; session: ChdbSession; connect: () => ChdbConnection }> {
  let engine: ChdbModule;
  let sessions: ChdbSessionModule;
  try {
    sessions = (await import(CHDB_SESSION_MODULE)) as ChdbSessionModule;
    engine = (await import(CHDB_MODULE)) as ChdbModule;
  } catch (err) {
    throw new Error(
      'The embedded ClickHouse engine (npm package chdb, an optional dependency) is not installed or does ' +
        'not load on this platform: install it (npm install chdb) or set CLICKHOUSE_URL to a ClickHouse server.',
      { cause: err },
    );
  }
  const session = new sessions.Session(path, { connectionArgs: engineArgs(backupRoot) });
  // `connect`: more connections to the same engine and path (read connections).
  return {
    chdb: engine.createChdbConnection({ path }),
    session,
    connect: () => engine.createChdbConnection({ path }),
  };
}
/**
 * The client's own log, into ours at debug level. It logs every failed request as an `[ERROR]` with
 * its arguments, also the ones our code expects and handles (the migration lock's TABLE_ALREADY_EXISTS,
 * a server away while ingest retries): the error reaches our code, which says what it means once.
 */
export function clientLog(log: Logger): { LoggerClass: new () => ClientLogger; level: ClickHouseLogLevel } {
  const forward =
    (level: string) =>
    ({ module, message, args, err }: { module: string; message: string; args?: unknown; err?: Error }) =>
      log.debug({ module, client_level: level, args, err }, `ClickHouse client: ${message}`);
  return {
    LoggerClass: class implements ClientLogger {
      trace = forward('trace');
      debug = forward('debug');
      info = forward('info');
      warn = forward('warn');
      error = forward('error');
    },
    level: ClickHouseLogLevel.WARN,
  };
}

type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

/**
 * The oldest server we accept. Exactly-once rests on insert deduplication reaching the materialized
 * view's table with a token derived from the insert's (`deduplicate_blocks_in_dependent_materialized_views`
 * with `insert_deduplication_token`), whose behaviour was reworked in 24.7; 24.8 is the LTS after it.
 */
export const MIN_SERVER_VERSION = { major: 24, minor: 8 } as const;

/**
 * Settings of every statement of the process. `optimize_on_insert = 0`: the engine's pass over each inserted
 * block of a Replacing or Aggregating table, which collapses rows of the same key as a merge would, is
 * skipped. No reader relies on it (daily_scopes is read with FINAL; daily_sets, the catalog and
 * kafka_progress through GROUP BY or argMax), since parts are merged later anyway, and the blocks we insert
 * have no two rows of one key (the day recompute writes each answer row once; the daily_sets view groups
 * by its key). A 75k-record batch over 10,000 lists has its recompute insert 255k rows in 290-345 ms
 * instead of 475-540 ms (BENCHMARKS.md's history).
 */
export const STORE_SETTINGS = { optimize_on_insert: 0 } as const satisfies ClickHouseSettings;

/**
 * On a cluster every statement is consistent across replicas: an insert is acknowledged once a
 * majority of replicas has it, and a read is served only by a replica that has every
 * quorum-acknowledged insert (it fails rather than answer from behind). Sequential consistency needs
 * non-parallel quorum inserts. See ARCHITECTURE.md, "Cluster".
 */
export const CLUSTER_SETTINGS: ClickHouseSettings = {
  insert_quorum: 'auto',
  insert_quorum_parallel: 0,
  select_sequential_consistency: '1',
};

/**
 * The one ClickHouse handle of the process: embedded chDB or a server over HTTP, behind the same
 * `@clickhouse/client` API. It counts operations in flight so that `close()` never pulls chDB's
 * session from under a running query.
 */
export class Db {
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private closing = false;
  /**
   * Test hook: runs before every operation and may delay it or throw (fault injection). `what` is the
   * statement, or `INSERT INTO <table>` for an insert of rows.
   */
  faultInjector: ((what: string) => Promise<void>) | undefined;

  /** Connections that serve `read` (embedded: beside the writer's), with their statements in flight. */
  private readers: { client: ClickHouseClient; busy: number }[] = [];

  constructor(
    private readonly client: ClickHouseClient,
    readonly mode: 'embedded' | 'server',
    /** chDB's zero-copy insert: about 2× faster than going through the client's stream. */
    private readonly chdb?: ChdbConnection,
    /** `ON CLUSTER <name>` target of migrations; undefined on a single server or embedded. */
    readonly cluster?: string,
    /** Embedded: the chDB session holding the engine arguments (closed after the client). */
    private readonly session?: ChdbSession,
  ) {}

  async query<T>(sql: string, params: Params = {}, settings: ClickHouseSettings = {}): Promise<T[]> {
    return this.rows<T>(this.client, sql, params, settings);
  }

  /**
   * A read that may run beside other statements: on the least busy of the read connections when there
   * are any (each runs one statement at a time), else as `query`.
   */
  async read<T>(sql: string, params: Params = {}, settings: ClickHouseSettings = {}): Promise<T[]> {
    if (this.readers.length === 0) return this.query<T>(sql, params, settings);
    let reader = this.readers[0]!;
    for (const r of this.readers) if (r.busy < reader.busy) reader = r;
    reader.busy++;
    try {
      return await this.rows<T>(reader.client, sql, params, settings);
    } finally {
      reader.busy--;
    }
  }

  /** A SELECT on `client`, its rows as objects: the body of `query` and `read`. */
  private rows<T>(
    client: ClickHouseClient,
    sql: string,
    params: Params,
    settings: ClickHouseSettings,
  ): Promise<T[]> {
    return this.track(sql, async () => {
      const rs = await client.query({
        query: sql,
        query_params: params,
        format: 'JSONEachRow',
        clickhouse_settings: settings,
      });
      return rs.json<T>();
    });
  }

  /** Adds connections that serve `read` (already in the right database). */
  addReaders(clients: ClickHouseClient[]): void {
    this.readers.push(...clients.map((client) => ({ client, busy: 0 })));
  }

  async command(sql: string, params: Params = {}, settings: ClickHouseSettings = {}): Promise<void> {
    await this.track(sql, () =>
      this.client.command({ query: sql, query_params: params, clickhouse_settings: settings }),
    );
  }

  /**
   * Insert rows given as arrays in `columns` order. The dedup token is always sent, empty when there
   * is none: chDB keeps a SET for the rest of its session, so a token left over from an earlier insert
   * would otherwise silently drop this one.
   */
  async insert(table: string, columns: readonly string[], rows: unknown[][], token = ''): Promise<void> {
    if (rows.length === 0) return;
    await this.insertEncoded(table, columns, encodeRows(rows), token);
  }

  /** `insert` of rows already encoded by `encodeRows` (so that encoding can overlap other work). */
  async insertEncoded(table: string, columns: readonly string[], payload: Buffer, token = ''): Promise<void> {
    const settings = {
      insert_deduplication_token: token,
      deduplicate_blocks_in_dependent_materialized_views: 1 as const,
    };
    await this.track(`INSERT INTO ${table}`, async () => {
      if (this.chdb) {
        await this.chdb.chdb.rawInsert({ table, columns, values: payload, format: 'TabSeparated', settings });
      } else {
        await this.client.insert({
          table,
          columns: columns as [string, ...string[]],
          values: Readable.from([payload], { objectMode: false }),
          format: 'TabSeparated',
          clickhouse_settings: settings,
        });
      }
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.inFlight > 0) await new Promise<void>((r) => (this.drained = r));
    await Promise.all(this.readers.map((r) => r.client.close()));
    await this.client.close();
    this.session?.close();
  }

  private async track<T>(what: string, op: () => Promise<T>): Promise<T> {
    if (this.closing) throw new Error('ClickHouse connection is closing');
    this.inFlight++;
    try {
      if (this.faultInjector) await this.faultInjector(what);
      return await op();
    } catch (err) {
      throw clickhouseFailed(err);
    } finally {
      if (--this.inFlight === 0) this.drained?.();
    }
  }
}

/**
 * Rows as the payload of an insert: TabSeparated, which loads about 1.7× faster than
 * JSONCompactEachRow here (measured, see BENCHMARKS.md).
 */
export function encodeRows(rows: unknown[][]): Buffer {
  const lines = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) lines[i] = rows[i]!.map(tsvCell).join('\t');
  return Buffer.from(lines.join('\n') + '\n');
}

const TSV_SPECIAL = /[\t\n\r\\]/;
const TSV_ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' };

function tsvCell(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'string')
    return TSV_SPECIAL.test(v) ? v.replace(/[\t\n\r\\]/g, (c) => TSV_ESCAPES[c]!) : v;
  if (typeof v === 'boolean') return v ? '1' : '0';
  return String(v);
}

/** The embedded engine (CLICKHOUSE_URL unset) or a server, waiting for the server to answer. */
export async function openDb(config: Config, log: Logger): Promise<Db> {
  return config.CLICKHOUSE_URL ? openServer(config, config.CLICKHOUSE_URL, log) : openEmbedded(config, log);
}

async function openEmbedded(config: Config, log: Logger): Promise<Db> {
  const database = config.CLICKHOUSE_DATABASE;
  const path = resolve(config.DATA_DIR);
  // The whole store is in here: only this user may enter what we create (docs/operations.md "Start-up").
  mkdirSync(path, { recursive: true, mode: 0o700 });
  // Asked before the engine, whose refusal is a raw exception on stderr.
  const holder = dataDirHolder(path);
  if (holder) throw new PermanentError(dataDirInUseMessage(path, holder));
  const { chdb, session, connect } = await openChdb(path, config.BACKUP_ROOT);
  // chdb ships its own copy of the client-common types; the runtime interface is the same.
  const client = createClient({ connection: chdb as unknown as ClientConnection, log: clientLog(log) });
  const db = new Db(client, 'embedded', chdb, undefined, session);
  // chDB ignores the client's `database` option; USE holds for the rest of the session.
  await db.command(`CREATE DATABASE IF NOT EXISTS ${database}`);
  await db.command(`USE ${database}`);
  // Like USE, a SET holds for the rest of the writer's session (its read connections insert nothing).
  await db.command(
    `SET ${Object.entries(STORE_SETTINGS)
      .map(([name, value]) => `${name} = ${value}`)
      .join(', ')}`,
  );
  // Sessions of the same engine at the same path: they see every write of the writer's at once.
  const readers = Array.from({ length: config.STATS_READ_CONNECTIONS }, () =>
    createClient({ connection: connect() as unknown as ClientConnection, log: clientLog(log) }),
  );
  for (const reader of readers) await reader.command({ query: `USE ${database}` });
  db.addReaders(readers);
  return db;
}

async function openServer(config: Config, url: string, log: Logger): Promise<Db> {
  const database = config.CLICKHOUSE_DATABASE;
  const cluster = config.CLICKHOUSE_CLUSTER;
  const credentials = { url, username: config.CLICKHOUSE_USER, password: config.CLICKHOUSE_PASSWORD };
  // Quiet: each failed attempt is one line of ours (waitFor), not the client's stack traces.
  const bootstrap = createClient({
    ...credentials,
    request_timeout: 10_000,
    log: { level: ClickHouseLogLevel.OFF },
  });
  try {
    const version = await waitFor('ClickHouse', () => serverVersion(bootstrap), {
      log,
      waitSeconds: config.STARTUP_WAIT_SECONDS,
    });
    log.info({ version, cluster }, 'ClickHouse server answers');
    await bootstrap.command({
      query: `CREATE DATABASE IF NOT EXISTS ${database}${cluster ? ` ON CLUSTER '${cluster}'` : ''}`,
    });
  } finally {
    await bootstrap.close();
  }
  const client = createClient({
    ...credentials,
    database,
    request_timeout: 30_000,
    log: clientLog(log),
    clickhouse_settings: { ...STORE_SETTINGS, ...(cluster ? CLUSTER_SETTINGS : {}) },
  });
  return new Db(client, 'server', undefined, cluster);
}

/** `SELECT version()`; a server older than MIN_SERVER_VERSION is refused for good (no retry). */
async function serverVersion(client: ClickHouseClient): Promise<string> {
  const rs = await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
  const [row] = await rs.json<{ v: string }>();
  const version = row?.v ?? '(unknown version)';
  if (!isSupportedServerVersion(version)) {
    const { major, minor } = MIN_SERVER_VERSION;
    throw new PermanentError(
      `ClickHouse server ${version} is too old: mailstats needs ${major}.${minor} or newer (insert deduplication ` +
        'through materialized views, which exactly-once ingest relies on, changed in 24.7). Upgrade the server, ' +
        'or unset CLICKHOUSE_URL to use the embedded engine.',
    );
  }
  return version;
}

export function isSupportedServerVersion(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) return false;
  const min = MIN_SERVER_VERSION;
  return major! > min.major || (major === min.major && minor! >= min.minor);
}
