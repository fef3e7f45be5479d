import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant, listAdd, userAdd, UsageError, withIngestToken } from '../../admin/commands.js';
import { startTestService, type TestService } from '../support/service.js';

const root = resolve(import.meta.dirname, '../..');

function admin(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; out: string; err: string }>((ok) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'admin/cli.ts', ...args],
      { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 60_000 },
      (_e, stdout, stderr) => ok({ code: child.exitCode, out: stdout, err: stderr }),
    );
  });
}

let service: TestService;
let env: Record<string, string>;
beforeAll(async () => {
  service = await startTestService();
  env = { MAILSTATS_URL: service.url!, INGEST_TOKEN: 'test-ingest-token' };
});
afterAll(async () => {
  await service?.stop();
});

describe('admin CLI through POST /ingest', () => {
  it('first run: list, user with a generated key, grant → the key reads the list', async () => {
    const list = await admin(
      ['list', 'add', '--id', '71', '--name', 'Shop', '--timezone', 'Europe/Paris'],
      env,
    );
    expect(list).toMatchObject({ code: 0, out: 'list 71 saved.\n' });
    const user = await admin(['user', 'add', '--id', '7001', '--generate-key'], env);
    expect(user.code).toBe(0);
    const key = /api key \(shown once, stored only as its SHA-256\): ([0-9a-f]{40})$/m.exec(user.out)?.[1];
    expect(key).toBeDefined();
    const path = `/api/1.2/rest/7001/${key}/automation.stats.json?list_id=71&days=7`;
    expect((await service.call(path)).status).toBe(403); // no grant yet: 101
    expect(await admin(['grant', '--user', '7001', '--list', '71'], env)).toMatchObject({ code: 0 });
    const ok = await service.call(path);
    expect(ok.status).toBe(200);
    expect(Array.isArray(ok.body)).toBe(true);
    expect(await admin(['grant', '--user', '7001', '--list', '71', '--revoke'], env)).toMatchObject({
      code: 0,
    });
    expect((await service.call(path)).status).toBe(403);
  }, 300_000);

  it('a given key works, and adding the user again with a new key rotates it', async () => {
    await admin(['list', 'add', '--id', '72'], env);
    await admin(['grant', '--user', '7002', '--list', '72'], env);
    const a = 'first-key-0123456789';
    const b = 'second-key-0123456789';
    expect(await admin(['user', 'add', '--id', '7002', '--key', a], env)).toMatchObject({
      code: 0,
      out: 'user 7002 saved.\n',
    });
    const at = (key: string) =>
      service.call(`/api/1.2/rest/7002/${key}/automation.stats.json?list_id=72&days=7`);
    expect((await at(a)).status).toBe(200);
    await admin(['user', 'add', '--id', '7002', '--key', b], env);
    expect((await at(b)).status).toBe(200);
    expect((await at(a)).status).toBe(403);
  }, 300_000);

  it('never prints a given key; refuses bad input before sending (exit 2)', async () => {
    const r = await admin(['user', 'add', '--id', '7003', '--key', 'secret-key-0123456789'], env);
    expect(r.code).toBe(0);
    expect(r.out + r.err).not.toContain('secret-key-0123456789');
    const bad = await admin(['user', 'add', '--id', '1'], env);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.err).toMatch(/exactly one of --key KEY or --generate-key/);
    expect((await admin(['grant', '--user', '1', '--list', '1', '--bogus'], env)).code).toBe(2);
    expect((await admin(['--help'])).out).toMatch(/user add --id N/);
  }, 180_000);

  it('validates with the ingest schemas before sending', () => {
    expect(() => userAdd({ id: '0', 'generate-key': true })).toThrow(UsageError);
    expect(() => userAdd({ id: '1', key: 'short' })).toThrow(/16-128 URL-safe characters/);
    expect(() => listAdd({ id: '5', timezone: 'Mars/Base' })).toThrow(/timezone: must be an IANA time zone/);
    expect(() => listAdd({ id: '5', currency: 'euro' })).toThrow(
      /currency: must be a 3-letter ISO 4217 code/,
    );
    expect(() => grant({ user: '1' })).toThrow(/--list must be a positive integer/);
    expect(grant({ user: '1', list: '2', revoke: true }).records).toEqual([
      { type: 'list_access', user_id: 1, list_id: 2, granted: false },
    ]);
  });

  it('a wrong ingest token is a clear failure (exit 1)', async () => {
    const r = await admin(['list', 'add', '--id', '73'], { ...env, INGEST_TOKEN: 'wrong-token' });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/POST \/ingest answered 401/);
  }, 180_000);
});

describe('token rotate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-admin-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('rewrites INGEST_TOKEN in an env file, keeps the other lines, mode 600, prints no token', async () => {
    const file = join(dir, '.env');
    writeFileSync(file, 'CLICKHOUSE_PASSWORD=pw\nINGEST_TOKEN=old\nOTHER=1\n');
    const r = await admin(['token', 'rotate', '--env-file', file]);
    expect(r.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    const token = /^INGEST_TOKEN=([0-9a-f]{80})$/m.exec(text)?.[1];
    expect(token).toBeDefined();
    expect(text).toContain('CLICKHOUSE_PASSWORD=pw\n');
    expect(text).toContain('OTHER=1\n');
    expect(r.out).not.toContain(token!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  }, 180_000);

  it('writes DATA_DIR/ingest-token for the embedded store', async () => {
    const r = await admin(['token', 'rotate'], { DATA_DIR: dir });
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, 'ingest-token'), 'utf8')).toMatch(/^[0-9a-f]{80}$/);
  }, 180_000);

  it('adds the line when missing', () => {
    expect(withIngestToken('A=1\n', 't')).toBe('A=1\nINGEST_TOKEN=t\n');
    expect(withIngestToken('', 't')).toBe('INGEST_TOKEN=t\n');
  });
});
