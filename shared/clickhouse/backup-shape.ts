import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BackupRequestError } from './backup-error.js';
import type { Db } from './client.js';
import { rawTtlDays } from './event-store.js';

/**
 * What a restored store may hold: exactly the tables and views our own migrations create, with the
 * same statements (docs/lifecycle.md, "What a restore trusts"). Compared twice: on the backup's files
 * before the engine reads the backup, and on the restored database before it is handed over.
 */

/** A backup's content is not what mailstats writes: restore refuses it, naming what differs. */
export class BackupContentError extends BackupRequestError {}

/** An identifier we put into a statement: a plain name, nothing that could close or open one. */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

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

/** One entry of a backup's index: the path the engine restores it under, and the file that holds it. */
interface IndexEntry {
  name: string;
  size: number;
  /** The file in the backup directory that holds the entry's bytes (another entry's, when deduplicated). */
  dataFile: string;
}

/**
 * What each element of the engine's index may hold, and nothing else: a strict allow-list, so that
 * what is accepted here reads the same to any XML reader, the engine's included. No declaration but the
 * plain one, no attribute, comment, CDATA, entity or character reference (no `&` at all), no element
 * twice where the engine reads one, no element the engine writes only for what mailstats never writes
 * (a base backup, an archive, an encrypted disk).
 */
const INDEX_TOP: Record<string, RegExp> = {
  version: /^1$/,
  deduplicate_files: /^[01]$/,
  timestamp: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  backup_id: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
};
const INDEX_FILE: Record<string, RegExp> = {
  name: /^[A-Za-z0-9_][A-Za-z0-9_./-]{0,511}$/,
  size: /^\d{1,19}$/,
  checksum: /^[0-9a-f]{32}$/,
  data_file: /^[A-Za-z0-9_][A-Za-z0-9_./-]{0,511}$/,
};

type Token = { open: string } | { close: string } | { text: string };

/** The index as a flat list of tokens, or a refusal of anything but plain elements and plain text. */
function indexTokens(xml: string, where: string): Token[] {
  const body = xml.replace(/^<\?xml version="1\.0"( encoding="UTF-8")?\?>/, '');
  const tokens: Token[] = [];
  for (const part of body.split(/(<[^<>]*>)/)) {
    if (part === '') continue;
    const tag = /^<(\/?)([a-z_]{1,32})>$/.exec(part);
    if (tag) tokens.push(tag[1] ? { close: tag[2]! } : { open: tag[2]! });
    else if (part.startsWith('<') || /[<>&]/.test(part))
      throw new BackupContentError(
        `${where}: ${JSON.stringify(part.slice(0, 60))} is not what the engine writes in its index ` +
          '(no declaration, attribute, comment, CDATA, entity or character reference is accepted)',
      );
    else tokens.push({ text: part });
  }
  return tokens;
}

/**
 * The engine's index of a backup (`.backup`), read with the strict allow-list above: its entries, or a
 * refusal naming what is not what the engine writes for a mailstats backup.
 */
export function readBackupIndex(indexFile: string): IndexEntry[] {
  const tokens = indexTokens(readFileSync(indexFile, 'utf8'), indexFile);
  let at = 0;
  const refuse = (what: string): never => {
    throw new BackupContentError(
      `${indexFile}: ${what}: not the index the engine writes for a mailstats backup`,
    );
  };
  const blank = () => {
    const t = tokens[at];
    if (t && 'text' in t && /^\s*$/.test(t.text)) at++;
  };
  const expectOpen = (name: string) => {
    blank();
    const t = tokens[at++];
    if (!t || !('open' in t) || t.open !== name) refuse(`expected <${name}>`);
  };
  /** The children of an element up to its closing tag: leaf elements by name, and nested <file>s. */
  const leaves = (parent: string, allowed: Record<string, RegExp>, nested?: string) => {
    const values = new Map<string, string>();
    const children: number[] = [];
    for (;;) {
      blank();
      const t = tokens[at++];
      if (!t) return refuse(`<${parent}> is not closed`);
      if ('close' in t) {
        if (t.close !== parent) refuse(`</${t.close}> where </${parent}> was expected`);
        return { values, children };
      }
      if ('text' in t) return refuse(`text ${JSON.stringify(t.text.slice(0, 60))} in <${parent}>`);
      if (t.open === nested) {
        children.push(at);
        // Skipped here, read by the caller from this position.
        let depth = 1;
        while (depth > 0) {
          const u = tokens[at++];
          if (!u) return refuse(`<${nested}> is not closed`);
          if ('open' in u) depth++;
          else if ('close' in u) depth--;
        }
        continue;
      }
      const pattern = allowed[t.open];
      if (!pattern) return refuse(`<${t.open}> in <${parent}>`);
      if (values.has(t.open)) refuse(`<${t.open}> twice in <${parent}>`);
      const v = tokens[at];
      let text = '';
      if (v && 'text' in v) {
        text = v.text;
        at++;
      }
      const end = tokens[at++];
      if (!end || !('close' in end) || end.close !== t.open) refuse(`<${t.open}> holds more than text`);
      if (!pattern.test(text)) refuse(`<${t.open}>${JSON.stringify(text.slice(0, 80))}`);
      values.set(t.open, text);
    }
  };
  expectOpen('config');
  const top = leaves('config', INDEX_TOP, 'contents');
  blank();
  if (at !== tokens.length) refuse('something after </config>');
  if (!top.values.has('version')) refuse('no <version>');
  if (top.children.length !== 1) refuse(`${top.children.length} <contents> elements`);
  at = top.children[0]!;
  const contents = leaves('contents', {}, 'file');
  const entries: IndexEntry[] = [];
  for (const start of contents.children) {
    at = start;
    const { values, children } = leaves('file', INDEX_FILE);
    if (children.length > 0) refuse('a nested element in <file>');
    const name = values.get('name') ?? refuse('a <file> without <name>');
    const size = values.get('size') ?? refuse(`${name} has no <size>`);
    if (Number(size) > 0 && !values.has('checksum')) refuse(`${name} has no <checksum>`);
    entries.push({ name, size: Number(size), dataFile: values.get('data_file') ?? name });
  }
  return entries;
}

/**
 * The tables of a backup directory as the engine would create them, read from its files before any
 * RESTORE, and a refusal of anything in its index that is not the database's statement, a table's
 * statement or a data file of a table named in `tables` (the tables our migrations create): a base
 * backup (which may be anywhere, a URL included), entries outside the one database, a database engine
 * other than Atomic, a file stored under another entry's name unless both are data of our tables.
 */
export function backupTables(
  dir: string,
  database: string,
  tables?: ReadonlySet<string>,
): Map<string, string> {
  const indexFile = join(dir, '.backup');
  if (!existsSync(indexFile))
    throw new BackupContentError(`${dir} has no .backup index: not a backup the engine wrote`);
  const entries = readBackupIndex(indexFile);
  const names = new Set<string>();
  for (const e of entries) {
    if (names.has(e.name)) throw new BackupContentError(`${indexFile}: entry ${e.name} is listed twice`);
    names.add(e.name);
  }
  const plain = (p: string) => !p.split('/').some((part) => part === '..' || part === '.' || part === '');
  const dataPath = new RegExp(`^data/${database}/([A-Za-z0-9_]+)/[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`);
  const ownFile = new Map(entries.map((e) => [e.name, e.dataFile]));
  const found = new Map<string, string>();
  let databaseStatement: string | undefined;
  for (const e of entries) {
    if (!plain(e.name) || !plain(e.dataFile))
      throw new BackupContentError(`${indexFile}: entry ${e.name} points outside the backup (${e.dataFile})`);
    const table = new RegExp(`^metadata/${database}/([A-Za-z0-9_]+)\\.sql$`).exec(e.name)?.[1];
    if (e.name === `metadata/${database}.sql` || table !== undefined) {
      // A statement is read from the file of its own name, as this check reads it.
      if (e.dataFile !== e.name)
        throw new BackupContentError(`${indexFile}: the statement ${e.name} is stored as ${e.dataFile}`);
      const text = readFileSync(join(dir, e.name), 'utf8');
      if (table === undefined) databaseStatement = text;
      else found.set(table, normalizeStatement(text, database));
      continue;
    }
    const data = dataPath.exec(e.name)?.[1];
    if (data === undefined)
      throw new BackupContentError(`${indexFile}: entry ${e.name} is not part of database ${database}`);
    if (tables && !tables.has(data))
      throw new BackupContentError(
        `${indexFile}: entry ${e.name} is data of ${data}, not a table of mailstats`,
      );
    if (e.dataFile !== e.name) {
      // A deduplicated file: stored once, under the name of another data entry of our tables.
      const of = dataPath.exec(e.dataFile)?.[1];
      if (of === undefined || (tables && !tables.has(of)) || ownFile.get(e.dataFile) !== e.dataFile)
        throw new BackupContentError(
          `${indexFile}: entry ${e.name} is stored as ${e.dataFile}, not a data file of the backup`,
        );
    }
    // An empty file (size 0, e.g. a part the raw-event retention emptied) is stored as no file at all.
    if (e.size > 0 && !existsSync(join(dir, e.dataFile)))
      throw new BackupContentError(
        `${indexFile}: entry ${e.name}: its file ${e.dataFile} is not in the backup`,
      );
    if (!found.has(data) && !names.has(`metadata/${database}/${data}.sql`))
      throw new BackupContentError(`${dir} holds data of ${data}, a table it does not define`);
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
  return found;
}

/**
 * A store kept under a raw-event retention (RAW_RETENTION_DAYS, set at every start) has a TTL on
 * `events`: the restore's own `events` (created by our migrations in `database`) takes the backup's, so
 * that the engine finds the statements equal; the next start sets its own setting. Only digits are read
 * from the backup's statement into the DDL (docs/lifecycle.md, "Retention").
 */
export async function takeRawRetention(db: Db, database: string, dir: string, from: string): Promise<void> {
  const file = join(dir, 'metadata', from, 'events.sql');
  const days = existsSync(file) ? rawTtlDays(readFileSync(file, 'utf8')) : undefined;
  if (days === undefined) return;
  await db.command(`ALTER TABLE ${database}.events MODIFY SETTING ttl_only_drop_parts = 1`);
  await db.command(
    // An integer (matched as digits): DDL takes no query parameters.
    `ALTER TABLE ${database}.events MODIFY TTL toDateTime(coalesce(sent_at, ts)) + INTERVAL ${days} DAY`,
    {},
    { materialize_ttl_after_modify: 0 },
  );
}
