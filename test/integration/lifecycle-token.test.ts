import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { capturingLogger } from '../support/raw-http.js';
import { startTestService } from '../support/service.js';
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

  it('configuration: ADMIN_TOKEN must differ from INGEST_TOKEN; BACKUP_ROOT must be absolute', () => {
    expect(() =>
      loadConfig({
        ADMIN_TOKEN: 'same-token-0123456789abcdef0123456789',
        INGEST_TOKEN: 'same-token-0123456789abcdef0123456789',
      }),
    ).toThrow(/ADMIN_TOKEN: must differ from INGEST_TOKEN/);
    expect(() => loadConfig({ BACKUP_ROOT: 'backups' })).toThrow(/BACKUP_ROOT: must be an absolute path/);
    expect(loadConfig({}).BACKUP_ROOT).toBe('/');
  });

  it('each admin action writes one audit line (what, which lists, counts), never a token or a record', async () => {
    const { log, lines } = capturingLogger('info');
    const admin = 'audit-admin-token-0123456789-abcdef0123456789';
    const svc = await startTestService({ ADMIN_TOKEN: admin }, { log });
    const work = mkdtempSync(join(tmpdir(), 'mailstats-audit-'));
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
      const audit = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.audit !== undefined);
      expect(audit.map((l) => l.audit)).toEqual(['erase', 'backup']);
      expect(audit[0]).toMatchObject({ lists: [3], subscribers: 1, deleted: 1 });
      expect(audit[1]).toMatchObject({ dir: join(work, 'b') });
      const text = lines.join('\n');
      for (const secret of [admin, 'test-ingest-token-0123456789abcdef', 'secret-event-id-77'])
        expect(text).not.toContain(secret);
    } finally {
      await svc.stop();
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
