// Modes: embedded only — the CLI against DATA_DIR (token files of the embedded store); the HTTP commands do not depend on the store
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant, listAdd, userAdd, UsageError, withIngestToken } from '../../admin/commands.js';
import { adminCli } from '../support/admin-cli.js';
import { startTestService, type TestService } from '../support/service.js';

const admin = (args: string[], env: Record<string, string> = {}, stdin?: string) =>
  adminCli(args, env, { stdin, timeout: 60_000 });

let service: TestService;
let env: Record<string, string>;
beforeAll(async () => {
  service = await startTestService();
  env = { MAILSTATS_URL: service.url!, INGEST_TOKEN: 'test-ingest-token-0123456789abcdef' };
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
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^list 71 saved\. If the demo tenant .*removed it/);
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

  it('a given key works, and adding the user again with a new key rotates it (with --replace)', async () => {
    await admin(['list', 'add', '--id', '72'], env);
    const a = 'first-key-0123456789';
    const b = 'second-key-0123456789';
    expect(await admin(['user', 'add', '--id', '7002', '--key-stdin'], env, `${a}\n`)).toMatchObject({
      code: 0,
      out: 'user 7002 saved.\n',
    });
    await admin(['grant', '--user', '7002', '--list', '72'], env);
    const at = (key: string) =>
      service.call(`/api/1.2/rest/7002/${key}/automation.stats.json?list_id=72&days=7`);
    expect((await at(a)).status).toBe(200);
    const again = await admin(['user', 'add', '--id', '7002', '--key-stdin'], env, b);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/user 7002 already exists.*--replace/s);
    expect((await at(b)).status).toBe(403);
    expect((await at(a)).status).toBe(200);
    const replaced = await admin(['user', 'add', '--id', '7002', '--key-stdin', '--replace'], env, b);
    expect(replaced).toMatchObject({ code: 0 });
    expect(replaced.out).toMatch(/user 7002 saved; its previous api key no longer works/);
    expect((await at(b)).status).toBe(200);
    expect((await at(a)).status).toBe(403);
  }, 300_000);

  it('never prints a given key; refuses bad input before sending (exit 2)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mailstats-key-')), 'key');
    writeFileSync(file, 'secret-key-0123456789\n', { mode: 0o600 });
    const r = await admin(['user', 'add', '--id', '7003', '--key-file', file], env);
    expect(r.code).toBe(0);
    expect(r.out + r.err).not.toContain('secret-key-0123456789');
    const bad = await admin(['user', 'add', '--id', '1'], env);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.err).toMatch(/give one of --generate-key, --key-stdin, --key-file PATH or MAILSTATS_API_KEY/);
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

describe('admin CLI: keys never in argv', () => {
  it('--key is refused, saying why and what to use; nothing is sent', async () => {
    const r = await admin(['user', 'add', '--id', '7010', '--key', 'argv-key-0123456789'], env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--key is not taken: .*process list.*shell history/);
    expect(r.err).toMatch(/--generate-key.*--key-stdin.*--key-file PATH.*MAILSTATS_API_KEY/);
    expect(r.err).not.toContain('argv-key-0123456789');
    expect((await service.call('/api/1.2/rest/7010/argv-key-0123456789/list.all.json')).status).toBe(403);
  }, 180_000);

  it('the key from MAILSTATS_API_KEY works; two sources at once are refused', async () => {
    const key = 'env-key-0123456789abc';
    expect(await admin(['user', 'add', '--id', '7011'], { ...env, MAILSTATS_API_KEY: key })).toMatchObject({
      code: 0,
      out: 'user 7011 saved.\n',
    });
    expect((await service.call(`/api/1.2/rest/7011/${key}/list.all.json`)).status).toBe(200);
    const both = await admin(['user', 'add', '--id', '7012', '--generate-key'], {
      ...env,
      MAILSTATS_API_KEY: key,
    });
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/MAILSTATS_API_KEY.*--generate-key/);
  }, 180_000);

  it('an empty stdin or a missing key file is a clear error', async () => {
    const empty = await admin(['user', 'add', '--id', '7013', '--key-stdin'], env, '');
    expect(empty).toMatchObject({ code: 2 });
    expect(empty.err).toMatch(/--key-stdin: no key on standard input/);
    const missing = await admin(['user', 'add', '--id', '7013', '--key-file', '/nonexistent/k'], env);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.err).toMatch(/--key-file: cannot read \/nonexistent\/k/);
  }, 180_000);
});

describe('admin CLI: what it tells the operator', () => {
  it('grant naming an unknown user and list fails, naming both; --force stores it anyway', async () => {
    const r = await admin(['grant', '--user', '999999', '--list', '77'], env);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/user 999999 and list 77 are not known to the service/);
    expect(r.err).toMatch(/--force/);
    expect((await admin(['grants', '--user', '999999'], env)).out).not.toMatch(/999999/);
    await admin(['list', 'add', '--id', '78'], env);
    const oneUnknown = await admin(['grant', '--user', '999999', '--list', '78'], env);
    expect(oneUnknown.code).toBe(1);
    expect(oneUnknown.err).toMatch(/user 999999 is not known to the service/);
    const forced = await admin(['grant', '--user', '999999', '--list', '77', '--force'], env);
    expect(forced).toMatchObject({ code: 0 });
    expect(forced.out).toMatch(/user 999999 may now read list 77 \(once user 999999 and list 77 exist\)/);
  }, 300_000);

  it('users, lists and grants list what the service knows (never a key or its digest)', async () => {
    await admin(['list', 'add', '--id', '81', '--name', 'Shop 81', '--currency', 'EUR'], env);
    const created = await admin(['user', 'add', '--id', '8101', '--generate-key'], env);
    await admin(['grant', '--user', '8101', '--list', '81'], env);
    const users = await admin(['users'], env);
    expect(users.code).toBe(0);
    expect(users.out).toMatch(/^user_id\s+active$/m);
    expect(users.out).toMatch(/^8101\s+yes$/m);
    expect(users.out).not.toMatch(/[0-9a-f]{40}/);
    expect(users.out + created.err).not.toContain(/: ([0-9a-f]{40})$/m.exec(created.out)![1]!);
    const lists = await admin(['lists'], env);
    expect(lists.out).toMatch(/^81\s+Shop 81\s+Europe\/Bucharest\s+EUR\s+ro-RO$/m);
    const grants = await admin(['grants', '--list', '81'], env);
    expect(grants.out.trim().split('\n')).toEqual([
      expect.stringMatching(/^user_id\s+list_id$/),
      expect.stringMatching(/^8101\s+81$/),
    ]);
    await admin(['grant', '--user', '8101', '--list', '81', '--revoke'], env);
    expect((await admin(['grants', '--list', '81'], env)).out).not.toMatch(/^8101/m);
  }, 300_000);

  it('the catalog read needs the ingest token', async () => {
    const res = await fetch(`${service.url}/ingest/catalog`);
    expect(res.status).toBe(401);
    const bad = await fetch(`${service.url}/ingest/catalog?user=x`, {
      headers: { authorization: 'Bearer test-ingest-token-0123456789abcdef' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/user/);
  });

  it('list add with a currency the API does not report (USD) warns on stderr and stores it; RON and EUR do not warn', async () => {
    const usd = await admin(['list', 'add', '--id', '75', '--name', 'US shop', '--currency', 'USD'], env);
    expect(usd.code, usd.err).toBe(0);
    expect(usd.out).toMatch(/^list 75 saved\./);
    expect(usd.err).toMatch(
      /^admin: warning: list 75: currency USD is stored, but the API reports revenue in RON and EUR only/,
    );
    expect(usd.err).toMatch(/Use --currency RON or EUR/);
    expect((await admin(['lists', '--list', '75'], env)).out).toMatch(/^75\s+US shop\s+\S+\s+USD\s/m);
    const eur = await admin(['list', 'add', '--id', '76', '--currency', 'EUR'], env);
    expect(eur.code).toBe(0);
    expect(eur.out).toMatch(/^list 76 saved\./);
    expect(eur.err).not.toMatch(/warning/);
    expect(listAdd({ id: '77' }).warning).toBeUndefined(); // the default, RON
    expect(listAdd({ id: '77', currency: 'GBP' }).warning).toMatch(/currency GBP is stored/);
  }, 180_000);

  it('a 401 suggests restarting after token rotate; an unreachable service suggests --url and PORT', async () => {
    const denied = await admin(['list', 'add', '--id', '74'], { ...env, INGEST_TOKEN: 'wrong-token' });
    expect(denied.code).toBe(1);
    expect(denied.err).toMatch(/token rotate.*restart/s);
    const away = await admin(['lists'], { INGEST_TOKEN: 't', MAILSTATS_URL: 'http://127.0.0.1:9' });
    expect(away.code).toBe(1);
    expect(away.err).toMatch(
      /cannot reach mailstats at http:\/\/127\.0\.0\.1:9.*--url URL.*MAILSTATS_URL.*PORT/s,
    );
  }, 180_000);

  it('a command group alone prints its help', async () => {
    const user = await admin(['user']);
    expect(user.code).toBe(2);
    expect(user.out).toMatch(/^\s*user add --id N/m);
    expect(user.out).not.toMatch(/token rotate/);
    expect((await admin(['token'])).out).toMatch(/token rotate/);
  }, 120_000);

  it("<command> --help prints that command's help only", async () => {
    const erase = await admin(['erase', '--help']);
    expect(erase.code).toBe(0);
    expect(erase.out).toMatch(/^\s*erase --list N --subscriber S/m);
    expect(erase.out).not.toMatch(/user add|import \[--resume\]|token rotate/);
    const user = await admin(['user', 'add', '--help']);
    expect(user.code).toBe(0);
    expect(user.out).toMatch(/^\s*user add --id N/m);
    expect(user.out).not.toMatch(/erase --list|grant --user/);
    const unknown = await admin(['frobnicate', '--help']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/unknown command "frobnicate"/);
  }, 120_000);

  it('with only PORT set, the missing ingest token names DATA_DIR', async () => {
    const r = await admin(['users'], { PORT: '9' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /no ingest token: set INGEST_TOKEN, or set DATA_DIR to the running service's data directory/,
    );
  }, 120_000);
});

describe('token rotate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-admin-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('rewrites INGEST_TOKEN in an env file, keeps the other lines, mode 600, prints no token', async () => {
    const file = join(dir, '.env');
    writeFileSync(file, 'CLICKHOUSE_PASSWORD=pw\nINGEST_TOKEN=old\nOTHER=1\n');
    const r = await admin(['token', 'rotate', '--env', file]);
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

  it('says to restart mailstats, since the running service keeps its token until then', async () => {
    // A file that does not exist yet (with --env-file, Node itself read the flag and exited 9).
    const file = join(dir, 'restart.env');
    const compose = await admin(['token', 'rotate', '--env', file]);
    expect(compose.code).toBe(0);
    expect(compose.out).toContain(
      `new ingest token written to ${file} (INGEST_TOKEN); restart mailstats (docker compose up -d).`,
    );
    const embedded = await admin(['token', 'rotate'], { DATA_DIR: dir });
    expect(embedded.code).toBe(0);
    expect(embedded.out).toContain(
      `new ingest token written to ${join(dir, 'ingest-token')}; restart mailstats to use it.`,
    );
  }, 180_000);

  it('adds the line when missing', () => {
    expect(withIngestToken('A=1\n', 't')).toBe('A=1\nINGEST_TOKEN=t\n');
    expect(withIngestToken('', 't')).toBe('INGEST_TOKEN=t\n');
  });
});
