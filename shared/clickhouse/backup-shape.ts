import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { createLogger } from '../log.js';
import { BackupRequestError } from './backup-error.js';
import type { Db } from './client.js';
import { migrate } from './migrate.js';
import { MIGRATIONS } from './migrations.js';

/**
 * What a restored store may hold: exactly the tables and views our own migrations create, with the
 * same statements (docs/lifecycle.md, "What a restore trusts"). Compared twice: on the backup's files
 * before the engine runs anything of them, and on the restored database before it is handed over.
 */

/** A backup's content is not what mailstats writes: restore refuses it, naming what differs. */
export class BackupContentError extends BackupRequestError {}

/** An identifier we put into a statement: a plain name, nothing that could close or open one. */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Where the expected schema is built, in the restoring process's own (empty) store; dropped after. */
const SCRATCH = 'mailstats_restore_expected';

/**
 * A table's statement with what legitimately differs between two stores of one schema taken out: the
 * UUIDs, the database's name, the retention of event_ids (set at every start from DEDUP_WINDOW_DAYS,
 * shared/clickhouse/event-store.ts) and that of events (RAW_RETENTION_DAYS, likewise).
 */
export function normalizeStatement(sql: string, database: string): string {
  return (
    sql
      .trim()
      .replace(/ UUID '[0-9a-f-]{36}'/g, '')
      .replaceAll(`\`${database}\`.`, '⟨db⟩.')
      .replace(new RegExp(`\\b${database}\\.`, 'g'), '⟨db⟩.')
      .replace(/ TTL toDateTime\(first_seen\) \+ toIntervalDay\(\d+\)(?= SETTINGS| *$)/, '')
      // The raw-event retention of `events` (RAW_RETENTION_DAYS, set at every start, event-store.ts).
      .replace(/ TTL toDateTime\(coalesce\(sent_at, ts\)\) \+ toIntervalDay\(\d+\)(?= SETTINGS| *$)/, '')
      .replace(/, ttl_only_drop_parts = 1\b/, '')
  );
}

/**
 * The statements of every table and view the migrations up to `schemaVersion` create, by name, built in
 * a scratch database of `db` (the restore's own engine, so the engine's wording is the same).
 */
export async function expectedTables(db: Db, schemaVersion: number): Promise<Map<string, string>> {
  await db.command(`DROP DATABASE IF EXISTS ${SCRATCH} SYNC`);
  await db.command(`CREATE DATABASE ${SCRATCH}`);
  try {
    await db.command(`USE ${SCRATCH}`);
    await migrate(
      db,
      createLogger('silent'),
      MIGRATIONS.filter((m) => m.version <= schemaVersion),
    );
    return await tablesOf(db, SCRATCH);
  } finally {
    await db.command('USE default');
    await db.command(`DROP DATABASE IF EXISTS ${SCRATCH} SYNC`);
  }
}

/** A database's tables and views as the engine states them, normalized. */
export async function tablesOf(db: Db, database: string): Promise<Map<string, string>> {
  const rows = await db.query<{ name: string; create_table_query: string }>(
    'SELECT name, create_table_query FROM system.tables WHERE database = {database:String} ORDER BY name',
    { database },
  );
  return new Map(rows.map((r) => [r.name, normalizeStatement(r.create_table_query, database)]));
}

/** Refuses `found` unless it is `expected` exactly, naming every table that is extra, missing or different. */
export function compareTables(
  found: Map<string, string>,
  expected: Map<string, string>,
  where: string,
): void {
  const problems: string[] = [];
  for (const [name, sql] of found) {
    if (!expected.has(name)) problems.push(`${name} (not a table of mailstats: ${clip(sql)})`);
    else if (expected.get(name) !== sql) problems.push(`${name} (its statement differs: ${clip(sql)})`);
  }
  for (const name of expected.keys()) if (!found.has(name)) problems.push(`${name} (missing)`);
  if (problems.length > 0)
    throw new BackupContentError(`${where} is not what mailstats creates; refused: ${problems.join('; ')}`);
}

/** The telling part of a statement in a message: its engine (or a view's query), cut at 160 characters. */
export const clip = (sql: string) => {
  const at = Math.max(0, sql.search(/ ENGINE = | AS SELECT /));
  const part = sql.slice(at).trim();
  return part.length > 160 ? `${part.slice(0, 160)}…` : part;
};

interface BackupEntry {
  name: string;
  data_file?: string;
  use_base?: unknown;
  base_size?: unknown;
}

/**
 * The tables of a backup directory as the engine would create them, read from its files before any
 * RESTORE: the engine's index (`.backup`) says which file holds each statement. Refused here: a backup
 * that points at another one (a base backup may be anywhere, a URL included), entries outside the one
 * database, and a database engine other than Atomic (some reach the network when created).
 */
export function backupTables(dir: string, database: string): Map<string, string> {
  const indexFile = join(dir, '.backup');
  if (!existsSync(indexFile))
    throw new BackupContentError(`${dir} has no .backup index: not a backup the engine wrote`);
  const parser = new XMLParser({
    processEntities: false,
    parseTagValue: false,
    isArray: (n) => n === 'file',
  });
  const index = parser.parse(readFileSync(indexFile, 'utf8')) as {
    config?: { base_backup?: unknown; contents?: { file?: BackupEntry[] } };
  };
  const config = index.config;
  if (!config) throw new BackupContentError(`${indexFile} is not the engine's backup index`);
  if (config.base_backup !== undefined)
    throw new BackupContentError(`${indexFile} refers to a base backup: mailstats writes none`);
  const entries = config.contents?.file ?? [];
  const physical = (e: BackupEntry) => {
    const file = String(e.data_file ?? e.name);
    if (file.split('/').some((part) => part === '..' || part === '') || file.startsWith('/'))
      throw new BackupContentError(`${indexFile}: entry ${e.name} points outside the backup (${file})`);
    return join(dir, file);
  };
  const tables = new Map<string, string>();
  const dataOf = new Set<string>();
  let databaseStatement: string | undefined;
  for (const e of entries) {
    const name = String(e.name);
    if ((e.use_base !== undefined && String(e.use_base) !== 'false') || Number(e.base_size ?? 0) > 0)
      throw new BackupContentError(
        `${indexFile}: entry ${name} is read from a base backup: mailstats writes none`,
      );
    if (name === `metadata/${database}.sql`) {
      databaseStatement = readFileSync(physical(e), 'utf8');
      continue;
    }
    const table = new RegExp(`^metadata/${database}/([A-Za-z0-9_]+)\\.sql$`).exec(name)?.[1];
    if (table !== undefined) {
      tables.set(table, normalizeStatement(readFileSync(physical(e), 'utf8'), database));
      continue;
    }
    const data = new RegExp(`^data/${database}/([A-Za-z0-9_]+)/`).exec(name)?.[1];
    if (data !== undefined) {
      physical(e);
      dataOf.add(data);
      continue;
    }
    throw new BackupContentError(`${indexFile}: entry ${name} is not part of database ${database}`);
  }
  if (databaseStatement === undefined) throw new BackupContentError(`${dir} holds no database ${database}`);
  if (
    !new RegExp(`^CREATE DATABASE ${database}( UUID '[0-9a-f-]{36}')? ENGINE = Atomic\\s*$`).test(
      databaseStatement,
    )
  )
    throw new BackupContentError(
      `${dir}: database ${database} is not what mailstats creates (${clip(databaseStatement.trim())})`,
    );
  for (const table of dataOf)
    if (!tables.has(table))
      throw new BackupContentError(`${dir} holds data of ${table}, a table it does not define`);
  return tables;
}
