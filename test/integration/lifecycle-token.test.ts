// Modes: embedded only — the admin token file in DATA_DIR
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, inject, it, vi } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { startService } from '../../service/start.js';
import { adminCli } from '../support/admin-cli.js';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';
import { capturingLogger } from '../support/raw-http.js';
import { startTestService, tenant } from '../support/service.js';
import { startupOutput } from '../support/startup-output.js';

const startMain = (env: Record<string, string>) => startupOutput(env, /admin: .*\n/);

/** The admin token (docs/lifecycle.md): generated into DATA_DIR/admin-token, 0600, never printed or logged. */
describe('admin token', () => {
  it('generated: kept in DATA_DIR/admin-token (0600), the banner says where, the token appears nowhere', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-admin-token-'));
    try {
      const output = await startMain({ DATA_DIR: dir, LOG_LEVEL: 'debug' });
      expect(output).toMatch(
        /admin: {8}npm run admin -- <command> {2}\(the admin token is in .*admin-token\)/,
      );
      const file = join(dir, 'admin-token');
      const token = readFileSync(file, 'utf8').trim();
      expect(token).toMatch(/^[0-9a-f]{48}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(output).not.toContain(token);
      expect(token).not.toBe(readFileSync(join(dir, 'ingest-token'), 'utf8').trim());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('configured: the banner names ADMIN_TOKEN, not its value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-admin-token-'));
    try {
      const output = await startMain({
        DATA_DIR: dir,
        LOG_LEVEL: 'debug',
        ADMIN_TOKEN: 'configured-admin-7d1e-0123456789abcdef',
      });
      expect(output).toMatch(/admin: .*the admin token is ADMIN_TOKEN/);
      expect(output).not.toContain('configured-admin-7d1e-0123456789abcdef');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('identical admin-token and ingest-token files stop the start, naming both files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-same-tokens-'));
    try {
      const same = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c';
      writeFileSync(join(dir, 'admin-token'), same, { mode: 0o600 });
      writeFileSync(join(dir, 'ingest-token'), same, { mode: 0o600 });
      const config = loadConfig({ DATA_DIR: dir, PORT: '0', SEED_DEMO: 'false', LOG_LEVEL: 'silent' });
      await expect(startService(config)).rejects.toThrow(
        new RegExp(`${join(dir, 'admin-token')} and ${join(dir, 'ingest-token')} hold the same token`),
      );
      // An INGEST_TOKEN equal to the admin-token file is refused the same way, naming the variable.
      const env = loadConfig({
        DATA_DIR: dir,
        PORT: '0',
        SEED_DEMO: 'false',
        LOG_LEVEL: 'silent',
        INGEST_TOKEN: same,
      });
      await expect(startService(env)).rejects.toThrow(/admin-token and INGEST_TOKEN hold the same token/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('configuration: ADMIN_TOKEN must differ from INGEST_TOKEN; BACKUP_ROOT must be absolute', () => {
    expect(() =>
      loadConfig({
        ADMIN_TOKEN: 'same-token-0123456789abcdef0123456789',
        INGEST_TOKEN: 'same-token-0123456789abcdef0123456789',
      }),
    ).toThrow(/ADMIN_TOKEN: must differ from INGEST_TOKEN/);
    expect(() => loadConfig({ BACKUP_ROOT: 'backups' })).toThrow(/BACKUP_ROOT: must be an absolute path/);
    expect(loadConfig({}).BACKUP_ROOT).toBe(resolve('./data/backups'));
    expect(loadConfig({ DATA_DIR: '/srv/ms' }).BACKUP_ROOT).toBe('/srv/ms/backups');
  });

  it('each admin action writes one audit line (what, which lists, counts), never a token or a record', async () => {
    const { log, lines } = capturingLogger('info');
    const admin = 'audit-admin-token-0123456789-abcdef0123456789';
    const work = mkdtempSync(join(tmpdir(), 'mailstats-audit-'));
    const svc = await startTestService({ ADMIN_TOKEN: admin, BACKUP_ROOT: work }, { log });
    try {
      const record = {
        type: 'send',
        event_id: 'secret-event-id-77',
        list_id: 3,
        workflow_id: 1,
        subscriber_id: 5,
      };
      expect((await svc.ingest([{ ...record, timestamp: '2026-11-10T10:00:00Z' }])).status).toBe(200);
      const post = (path: string, body: string, type = 'application/json') =>
        fetch(`${svc.url}/admin${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': type },
          body,
        });
      expect(
        (await post('/erase', JSON.stringify({ pairs: [{ list_id: 3, subscriber_id: 5 }] }))).status,
      ).toBe(200);
      expect((await post('/backup', JSON.stringify({ dir: join(work, 'b') }))).status).toBe(200);
      // An import by the CLI: a start line at its first chunk (before anything is written) and the
      // end line with its counts, both naming the import.
      const file = join(work, 'audit.ndjson');
      const imported = [1, 2, 3].map((i) => ({
        ...record,
        event_id: `secret-import-event-${i}`,
        timestamp: '2026-11-11T10:00:00Z',
      }));
      writeFileSync(file, [...imported, { type: 'send' }].map((r) => JSON.stringify(r)).join('\n') + '\n');
      const cli = await adminCli(['import', '--chunk-records', '2', file], {
        MAILSTATS_URL: svc.url!,
        ADMIN_TOKEN: admin,
      });
      expect(cli.code, cli.err).toBe(1); // one record rejected
      // An import killed after its first chunk: its start line is there, and a second chunk of the same
      // import writes none.
      const chunk = (id: string) =>
        post(
          `/import?import_id=${id}&file=killed.ndjson`,
          JSON.stringify({ ...record, event_id: 'secret-killed-event', timestamp: '2026-11-11T11:00:00Z' }),
          'application/x-ndjson',
        );
      expect((await chunk('killed-import-0001')).status).toBe(200);
      expect((await chunk('killed-import-0001')).status).toBe(200);
      expect((await chunk('bad id')).status).toBe(400);
      const audit = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.audit !== undefined);
      expect(audit.map((l) => [l.audit, l.phase])).toEqual([
        ['erase', undefined],
        ['backup', undefined],
        ['import', 'start'],
        ['import', 'end'],
        ['import', 'start'],
      ]);
      expect(audit[0]).toMatchObject({ lists: [3], subscribers: 1, deleted: 1 });
      expect(audit[0]!.erasures).toEqual([expect.stringMatching(/^3,5,\d{4}-\d\d-\d\dT[\d:.]+Z$/)]);
      expect(audit[1]).toMatchObject({ dir: join(work, 'b') });
      expect(audit[2]).toMatchObject({ file });
      expect(audit[2]!.import_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(audit[3]).toMatchObject({
        import_id: audit[2]!.import_id,
        file,
        accepted: 3,
        rejected: 1,
        client_reported: { accepted: 3, rejected: 1, finished: true },
      });
      expect(audit[4]).toMatchObject({ import_id: 'killed-import-0001', file: 'killed.ndjson' });
      const text = lines.join('\n');
      for (const secret of [
        admin,
        'test-ingest-token-0123456789abcdef',
        'secret-event-id-77',
        'secret-import-event',
        'secret-killed-event',
      ])
        expect(text).not.toContain(secret);
    } finally {
      await svc.stop();
      rmSync(work, { recursive: true, force: true });
    }
  }, 180_000);

  it('the admin token cannot read stats (as api_key or as Bearer) nor the catalog; the ingest token runs no admin action', async () => {
    const admin = 'separate-admin-token-0123456789-abcdef0123';
    const ingestToken = 'test-ingest-token-0123456789abcdef';
    const svc = await startTestService({ ADMIN_TOKEN: admin });
    try {
      expect(
        (await svc.ingest(tenant({ userId: 4, apiKey: 'user-key-4', lists: [{ list_id: 3 }] }))).status,
      ).toBe(200);
      const rest = (user: number, key: string, headers: Record<string, string> = {}) =>
        fetch(
          `${svc.url}/api/1.2/rest/${user}/${encodeURIComponent(key)}/automation.stats.json?list_id=3&start_date=2026-11-01&stop_date=2026-11-02`,
          { headers },
        ).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
      const refused = { status: 403, body: { err: true, code: 101 } };
      expect((await rest(4, 'user-key-4')).status).toBe(200); // the user's key reads
      expect(await rest(4, admin)).toMatchObject(refused);
      expect(await rest(1, admin)).toMatchObject(refused);
      // A Bearer header is not a credential of API 1.2: with the admin token there, and no key or a wrong one.
      const bearer = { authorization: `Bearer ${admin}` };
      expect(await rest(4, 'x', bearer)).toMatchObject(refused);
      expect(await rest(4, admin, bearer)).toMatchObject(refused);
      const xmlrpc = await fetch(`${svc.url}/api/1.2/xmlrpc/4/${admin}`, {
        method: 'POST',
        headers: { 'content-type': 'text/xml', ...bearer },
        body: '<?xml version="1.0"?><methodCall><methodName>list.all</methodName><params></params></methodCall>',
      });
      expect(await xmlrpc.text()).toMatch(/<name>faultCode<\/name><value><int>101<\/int>/);
      // Nor the ingest side's catalog read (the admin CLI's `users`, `lists`, `grants`).
      const catalog = await fetch(`${svc.url}/ingest/catalog`, { headers: bearer });
      expect(catalog.status).toBe(401);

      // The ingest token on every admin endpoint: 401, and nothing done.
      const asIngest = { authorization: `Bearer ${ingestToken}`, 'content-type': 'application/json' };
      const calls: [string, string, string?][] = [
        ['POST', '/admin/import', '{"type":"send"}'],
        [
          'POST',
          '/admin/import/summary',
          '{"file":"x","accepted":0,"rejected":0,"seconds":0,"finished":true}',
        ],
        ['POST', '/admin/erase', '{"pairs":[{"list_id":3,"subscriber_id":1}]}'],
        ['GET', '/admin/erasures/export'],
        ['POST', '/admin/backup', '{"dir":"/tmp/never-written-by-ingest-token"}'],
        ['GET', '/admin/dlq/export'],
        ['GET', '/admin/dlq/stats'],
      ];
      for (const [method, path, body] of calls) {
        const res = await fetch(`${svc.url}${path}`, { method, headers: asIngest, body });
        expect([path, res.status]).toEqual([path, 401]);
        expect(((await res.json()) as { message: string }).message).toBe('Missing or wrong admin token');
      }
    } finally {
      await svc.stop();
    }
  }, 120_000);

  it('dlq export and dlq stats each write one audit line (counts), never a token or a dead letter', async () => {
    const { log, lines } = capturingLogger('info');
    const admin = 'audit-dlq-admin-token-0123456789-abcdef0123';
    const env = kafkaEnv(inject('kafkaBrokers'));
    const svc = await startTestService({ ...env, ADMIN_TOKEN: admin }, { log });
    try {
      const broken = { type: 'send', event_id: 'secret-dead-event-5', list_id: 3, subscriber_id: 5 };
      await produce(testKafka(inject('kafkaBrokers')), env.KAFKA_EVENTS_TOPIC, [broken]);
      const get = async (path: string) => {
        const res = await fetch(`${svc.url}/admin${path}`, { headers: { authorization: `Bearer ${admin}` } });
        expect(res.status).toBe(200);
        return res.text();
      };
      await vi.waitFor(async () => expect(JSON.parse(await get('/dlq/stats')).total).toBe(1), {
        timeout: 120_000,
        interval: 1_000,
      });
      const before = lines.length;
      expect(JSON.parse(await get('/dlq/stats'))).toMatchObject({ total: 1 });
      expect(await get('/dlq/export?reason=workflow_id')).toContain('secret-dead-event-5');
      const audit = lines
        .slice(before)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.audit !== undefined);
      expect(audit).toEqual([
        expect.objectContaining({ audit: 'dlq stats', total: 1 }),
        expect.objectContaining({ audit: 'dlq export', exported: 1, reason: 'workflow_id' }),
      ]);
      const text = lines.join('\n');
      for (const secret of [admin, 'test-ingest-token-0123456789abcdef', 'secret-dead-event-5'])
        expect(text).not.toContain(secret);
    } finally {
      await svc.stop();
    }
  }, 180_000);
});
