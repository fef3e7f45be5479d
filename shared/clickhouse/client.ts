import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { createChdbConnection, type ChdbConnection } from 'chdb/connection';
import { mkdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { clickhouseFailed } from '../metrics.js';

export type Params = Record<string, unknown>;
type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

/** The oldest server we accept: query parameters, Enum/LowCardinality, groupBitmap, GROUPING SETS. */
const MIN_SERVER_MAJOR = 23;

/**
 * The one ClickHouse handle of the process: embedded chDB or a server over HTTP, behind the same
 * `@clickhouse/client` API. It counts operations in flight so that `close()` never pulls chDB's
 * session from under a running query.
 */
export class Db {
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private closing = false;
  /** Test hook: runs before every operation and may delay it or throw (fault injection). */
  faultInjector: (() => Promise<void>) | undefined;

  constructor(
    private readonly client: ClickHouseClient,
    readonly mode: 'embedded' | 'server',
    /** chDB's zero-copy insert: about 2× faster than going through the client's stream. */
    private readonly chdb?: ChdbConnection,
  ) {}

  async query<T>(sql: string, params: Params = {}, settings: ClickHouseSettings = {}): Promise<T[]> {
    return this.track(async () => {
      const rs = await this.client.query({
        query: sql,
        query_params: params,
        format: 'JSONEachRow',
        clickhouse_settings: settings,
      });
      return rs.json<T>();
    });
  }

  async command(sql: string, params: Params = {}, settings: ClickHouseSettings = {}): Promise<void> {
    await this.track(() =>
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
    const payload = Buffer.from(encodeTsv(rows));
    const settings = {
      insert_deduplication_token: token,
      deduplicate_blocks_in_dependent_materialized_views: 1 as const,
    };
    await this.track(async () => {
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
    await this.client.close();
  }

  private async track<T>(op: () => Promise<T>): Promise<T> {
    if (this.closing) throw new Error('ClickHouse connection is closing');
    this.inFlight++;
    try {
      if (this.faultInjector) await this.faultInjector();
      return await op();
    } catch (err) {
      throw clickhouseFailed(err);
    } finally {
      if (--this.inFlight === 0) this.drained?.();
    }
  }
}

/** TabSeparated loads about 1.7× faster than JSONCompactEachRow here (measured, see BENCHMARKS.md). */
function encodeTsv(rows: unknown[][]): string {
  const lines = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) lines[i] = rows[i]!.map(tsvCell).join('\t');
  return lines.join('\n') + '\n';
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

export async function openDb(config: Config): Promise<Db> {
  const database = config.CLICKHOUSE_DATABASE;
  if (!config.CLICKHOUSE_URL) {
    const path = resolve(config.DATA_DIR);
    mkdirSync(path, { recursive: true });
    // chdb ships its own copy of the client-common types; the runtime contract is the same.
    const chdb = createChdbConnection({ path });
    const client = createClient({ connection: chdb as unknown as ClientConnection });
    const db = new Db(client, 'embedded', chdb);
    // chDB ignores the client's `database` option; USE holds for the rest of the session.
    await db.command(`CREATE DATABASE IF NOT EXISTS ${database}`);
    await db.command(`USE ${database}`);
    return db;
  }
  const bootstrap = createClient({
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
  });
  try {
    await assertServerVersion(bootstrap);
    await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  } finally {
    await bootstrap.close();
  }
  const client = createClient({
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database,
    request_timeout: 30_000,
  });
  return new Db(client, 'server');
}

async function assertServerVersion(client: ClickHouseClient): Promise<void> {
  const rs = await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
  const [row] = await rs.json<{ v: string }>();
  const major = Number(row?.v.split('.')[0]);
  if (!(major >= MIN_SERVER_MAJOR)) {
    throw new Error(
      `ClickHouse server ${row?.v ?? '(unknown version)'} is too old: mailstats needs ${MIN_SERVER_MAJOR}.x or newer ` +
        '(query parameters, groupBitmap, GROUPING SETS). Unset CLICKHOUSE_URL to use the embedded engine.',
    );
  }
}
