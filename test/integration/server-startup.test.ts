// Modes: embedded and server
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { isSupportedServerVersion, openDb } from '../../shared/clickhouse/client.js';
import { loadConfig } from '../../shared/config.js';
import { PermanentError } from '../../shared/retry.js';
import { startService } from '../../service/start.js';
import { serverEnv } from '../support/service.js';

const root = resolve(import.meta.dirname, '../..');

/** A pino logger whose lines are kept for assertions. */
function capturingLog() {
  const lines: { msg: string; attempt?: number; err?: string }[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

/** Answers every query like a ClickHouse server of the given version (a fake: backoff is what's tested). */
function fakeClickHouse(version: string) {
  const queries: string[] = [];
  const urls: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      queries.push(body);
      urls.push(req.url ?? '');
      res.setHeader('content-type', 'text/plain');
      res.end(/version\(\)/.test(body) ? JSON.stringify({ v: version }) + '\n' : '');
    });
  });
  return { server, queries, urls };
}

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
});

describe('server version', () => {
  it.each([
    ['24.8.1.2684', true],
    ['24.12.1', true],
    ['25.8.2.29', true],
    ['26.1', true],
    ['24.7.3.42', false],
    ['23.8.16.40', false],
    ['18.16.1', false],
    ['garbage', false],
  ])('%s supported: %s', (v, ok) => {
    expect(isSupportedServerVersion(v)).toBe(ok);
  });
});

describe('CLICKHOUSE_CLUSTER: reads and chained writes see their own writes across replicas', () => {
  it.each([
    ['with', { CLICKHOUSE_CLUSTER: 'main' }, true],
    ['without', {}, false],
  ])(
    '%s a cluster, quorum inserts and sequential reads are asked for on every request',
    async (_, env, on) => {
      const fake = fakeClickHouse('25.8.2.29');
      servers.push(fake.server);
      await new Promise<void>((ok) => fake.server.listen(0, '127.0.0.1', ok));
      const port = (fake.server.address() as { port: number }).port;
      const db = await openDb(
        loadConfig({ CLICKHOUSE_URL: `http://127.0.0.1:${port}`, ...env }),
        capturingLog().log,
      );
      const from = fake.urls.length;
      await db.query('SELECT 1');
      await db.insert('event_ids', ['event_id', 'first_seen'], [['e1', '2026-11-01 00:00:00.000']]);
      await db.close();
      const sent = fake.urls.slice(from).map((u) => new URL(u, 'http://x').searchParams);
      expect(sent).toHaveLength(2);
      for (const params of sent) {
        expect(params.get('insert_quorum')).toBe(on ? 'auto' : null);
        expect(params.get('insert_quorum_parallel')).toBe(on ? '0' : null);
        expect(params.get('select_sequential_consistency')).toBe(on ? '1' : null);
        // STORE_SETTINGS (shared/clickhouse/client.ts), with a cluster or without
        expect(params.get('optimize_on_insert')).toBe('0');
      }
    },
  );
});

describe('the embedded writer session', () => {
  it('skips the collapse of inserted blocks (STORE_SETTINGS), as the server client does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-store-settings-'));
    const db = await openDb(loadConfig({ DATA_DIR: dir }), capturingLog().log);
    try {
      const [row] = await db.query<{ v: number }>("SELECT toUInt8(getSetting('optimize_on_insert')) AS v");
      expect(row!.v).toBe(0);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('start-up waits for ClickHouse with backoff', () => {
  it('retries a refused connection until the server answers, one log line per attempt', async () => {
    const port = await freePort();
    const { log, lines } = capturingLog();
    const fake = fakeClickHouse('24.8.14.39');
    servers.push(fake.server);
    // Nothing listens for the first ~2.5 s: connections are refused.
    setTimeout(() => fake.server.listen(port, '127.0.0.1'), 2500);
    const db = await openDb(
      loadConfig({ CLICKHOUSE_URL: `http://127.0.0.1:${port}`, STARTUP_WAIT_SECONDS: '60' }),
      log,
    );
    expect(db.mode).toBe('server');
    const waits = lines.filter((l) => l.msg === 'waiting for ClickHouse');
    expect(waits.length).toBeGreaterThanOrEqual(2);
    expect(waits.map((w) => w.attempt)).toEqual(waits.map((_, i) => i + 1));
    expect(waits[0]!.err).toMatch(/ECONNREFUSED/);
    expect(lines.some((l) => l.msg === 'ClickHouse server answers')).toBe(true);
    expect(fake.queries.some((q) => /CREATE DATABASE IF NOT EXISTS mailstats/.test(q))).toBe(true);
    await db.close();
  });

  it('gives up after STARTUP_WAIT_SECONDS with a clear message', async () => {
    const port = await freePort();
    const { log, lines } = capturingLog();
    await expect(
      openDb(loadConfig({ CLICKHOUSE_URL: `http://127.0.0.1:${port}`, STARTUP_WAIT_SECONDS: '2' }), log),
    ).rejects.toThrow(/ClickHouse did not answer within \d+ s \(STARTUP_WAIT_SECONDS\): .*ECONNREFUSED/);
    expect(lines.filter((l) => l.msg === 'waiting for ClickHouse').length).toBeGreaterThanOrEqual(2);
  });

  it('refuses a server older than 24.8 at once (no retries)', async () => {
    const fake = fakeClickHouse('24.7.3.42');
    servers.push(fake.server);
    await new Promise<void>((ok) => fake.server.listen(0, '127.0.0.1', ok));
    const port = (fake.server.address() as { port: number }).port;
    const { log } = capturingLog();
    const err = await openDb(
      loadConfig({ CLICKHOUSE_URL: `http://127.0.0.1:${port}`, STARTUP_WAIT_SECONDS: '60' }),
      log,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as Error).message).toMatch(
      /ClickHouse server 24\.7\.3\.42 is too old: mailstats needs 24\.8 or newer/,
    );
    expect(fake.queries).toHaveLength(1);
  });
});

describe('stopping during the start-up recovery', () => {
  it('logs no error: the aborted retry loop is not a failed recovery', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-stop-'));
    try {
      const { log, lines } = capturingLog();
      // On the run's server in the `server` project (a database of its own), else on the embedded engine.
      const svc = await startService(
        loadConfig({ DATA_DIR: dir, SEED_DEMO: 'false', LOG_LEVEL: 'info', ...serverEnv() }),
        log,
      );
      await svc.close(); // at once: the recovery is still queued or running
      await svc.recovered;
      expect(lines.filter((l) => (l as { level?: number }).level! >= 50)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("against Debian's clickhouse-server 18.16 (the only server installable here)", () => {
  const binary = '/usr/sbin/clickhouse-server';
  it('the server-mode path waits for it to come up, talks to it, and refuses it as too old', async () => {
    if (!existsSync(binary))
      throw new Error(
        `${binary} is missing: install it with \`apt-get install -y --no-install-recommends clickhouse-server\` (.ci/run does)`,
      );
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-ch18-'));
    const [http, tcp] = [await freePort(), await freePort()];
    writeFileSync(
      join(dir, 'config.xml'),
      `<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>${http}</http_port><tcp_port>${tcp}</tcp_port><listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path><tmp_path>${dir}/tmp/</tmp_path><user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
</yandex>`,
    );
    mkdirSync(join(dir, 'data'));
    let ch: ChildProcess | undefined;
    // Started a moment after mailstats, so the first attempts are refused.
    const starter = setTimeout(() => {
      ch = spawn(binary, [`--config-file=${join(dir, 'config.xml')}`], { stdio: 'ignore' });
    }, 1500);
    const { log, lines } = capturingLog();
    try {
      const err = await startService(
        loadConfig({
          CLICKHOUSE_URL: `http://127.0.0.1:${http}`,
          STARTUP_WAIT_SECONDS: '120',
          PORT: '0',
          LOG_LEVEL: 'info',
        }),
        log,
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PermanentError);
      expect((err as Error).message).toMatch(
        /ClickHouse server 18\.16\.\d+ is too old: mailstats needs 24\.8 or newer/,
      );
      expect(lines.filter((l) => l.msg === 'waiting for ClickHouse').length).toBeGreaterThanOrEqual(1);
    } finally {
      clearTimeout(starter);
      ch?.kill('SIGTERM');
      if (ch && ch.exitCode === null) await new Promise((ok) => ch!.once('exit', ok));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `node main.ts` with the embedded engine made unresolvable (as on a server-mode image). */
function runWithoutChdb(env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string }>((ok) => {
    const child = execFile(
      process.execPath,
      ['--import', './test/support/hide-chdb.mjs', '--import', 'tsx', 'main.ts'],
      { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 60_000 },
      (_err, stdout, stderr) => ok({ code: child.exitCode, out: stdout + stderr }),
    );
  });
}

describe('the embedded engine is loaded only when CLICKHOUSE_URL is unset', () => {
  it('server mode starts without chdb and reaches the connection step', async () => {
    const port = await freePort();
    const { code, out } = await runWithoutChdb({
      CLICKHOUSE_URL: `http://127.0.0.1:${port}`,
      STARTUP_WAIT_SECONDS: '2',
    });
    expect(out).toMatch(/"msg":"waiting for ClickHouse"/);
    expect(out).toContain('mailstats could not start: ClickHouse did not answer within');
    expect(out).not.toMatch(/chdb/i);
    expect(code).toBe(1);
  });

  it('control: embedded mode with chdb hidden fails naming the missing engine (the hook works)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-nochdb-'));
    try {
      const { code, out } = await runWithoutChdb({ DATA_DIR: dir });
      expect(out).toContain(
        'The embedded ClickHouse engine (npm package chdb, an optional dependency) is not installed',
      );
      expect(code).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
