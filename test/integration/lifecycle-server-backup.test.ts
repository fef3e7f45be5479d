import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseServer } from '../../scripts/clickhouse-server.mjs';
import { loadConfig } from '../../shared/config.js';
import { startService, type Service } from '../../service/start.js';
import { adminCli } from '../support/admin-cli.js';
import { activityStream, STREAM_LISTS } from '../support/kafka.js';
import { tenant } from '../support/service.js';

const ADMIN = 'server-backup-admin-token-0123456789-abcdef';
const INGEST = 'server-backup-ingest-token-0123456789-abcd';

/**
 * backup and restore with CLICKHOUSE_URL (docs/lifecycle.md, "With CLICKHOUSE_URL"), against a real
 * ClickHouse server (scripts/clickhouse-server.mjs): the server's own BACKUP/RESTORE into a new database.
 */
describe('backup and restore on a ClickHouse server', () => {
  let server: Awaited<ReturnType<typeof startClickHouseServer>>;
  let svc: Service | undefined;
  const { wire } = activityStream(500, 91);

  beforeAll(async () => {
    server = await startClickHouseServer();
    const config = loadConfig({
      CLICKHOUSE_URL: server.url,
      CLICKHOUSE_DATABASE: 'backup_source',
      PORT: '0',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'silent',
      INGEST_TOKEN: INGEST,
      ADMIN_TOKEN: ADMIN,
    });
    svc = await startService(config);
    for (const body of [tenant({ userId: 3, apiKey: 'server-key', lists: STREAM_LISTS }), wire]) {
      const res = await fetch(`${svc.url}/ingest`, {
        method: 'POST',
        headers: { authorization: `Bearer ${INGEST}`, 'content-type': 'application/x-ndjson' },
        body: body.map((r) => JSON.stringify(r)).join('\n'),
      });
      expect(res.status).toBe(200);
    }
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    await server?.stop();
  });

  const count = async (database: string) => {
    const res = await fetch(
      `${server.url}/?query=${encodeURIComponent(`SELECT count() FROM ${database}.events`)}`,
    );
    return Number((await res.text()).trim());
  };

  it('backup on the server, then restore into a new database with the same records', async () => {
    const dir = join(server.backupsDir, 'b1');
    const b = await adminCli(['backup', dir], { MAILSTATS_URL: svc!.url!, ADMIN_TOKEN: ADMIN });
    expect(b.code, b.err).toBe(0);
    await svc!.close();
    svc = undefined;

    const env = { CLICKHOUSE_URL: server.url, CLICKHOUSE_DATABASE: 'backup_restored' };
    const r = await adminCli(['restore', dir, '--from-database', 'backup_source'], env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/restored .* into backup_restored/);
    expect(await count('backup_restored')).toBe(await count('backup_source'));
    expect(await count('backup_restored')).toBe(wire.length);

    // Not into a database that holds tables.
    const again = await adminCli(['restore', dir, '--from-database', 'backup_source'], env);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/database backup_restored on .* is not empty/);
  }, 300_000);

  it('a backup with a table mailstats never creates is refused after the RESTORE, and its database dropped', async () => {
    const sql = (q: string) => fetch(`${server.url}/`, { method: 'POST', body: q }).then((r) => r.text());
    await sql(
      "CREATE TABLE backup_source.leak (event_id String) ENGINE = URL('http://127.0.0.1:9/', JSONEachRow)",
    );
    const dir = join(server.backupsDir, 'evil');
    expect(await sql(`BACKUP DATABASE backup_source TO File('${dir}')`)).toMatch(/BACKUP_CREATED/);
    const env = { CLICKHOUSE_URL: server.url, CLICKHOUSE_DATABASE: 'backup_evil' };
    const r = await adminCli(['restore', dir, '--from-database', 'backup_source'], env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /not what mailstats creates; refused: leak \(not a table of mailstats: ENGINE = URL/,
    );
    expect(await sql("SELECT count() FROM system.databases WHERE name = 'backup_evil'")).toBe('0\n');
  }, 300_000);
});
