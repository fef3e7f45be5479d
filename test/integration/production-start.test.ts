// Modes: embedded and server
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { serverEnv, startTestService } from '../support/service.js';

const root = resolve(import.meta.dirname, '../..');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

/** fetch's failure reason (ECONNREFUSED…) or the status. */
const reach = (url: string) =>
  fetch(url).then(
    (r) => r.status,
    (e: { cause?: { code?: string } }) => e.cause?.code ?? 'error',
  );

describe('HOST', () => {
  const path = '/api/1.2/rest/1/no-such-key-000/automation.stats.json?list_id=1&days=7';
  it('listens on loopback by default: 127.0.0.2 (another loopback address) is refused', async () => {
    const service = await startTestService();
    try {
      const port = new URL(service.url!).port;
      expect(service.url).toBe(`http://127.0.0.1:${port}`);
      expect(await reach(`http://127.0.0.1:${port}${path}`)).toBe(403);
      expect(await reach(`http://127.0.0.2:${port}${path}`)).toBe('ECONNREFUSED');
    } finally {
      await service.stop();
    }
  });

  it('HOST=0.0.0.0 listens on every interface', async () => {
    const service = await startTestService({ HOST: '0.0.0.0' });
    try {
      const port = new URL(service.url!).port;
      expect(await reach(`http://127.0.0.2:${port}${path}`)).toBe(403);
    } finally {
      await service.stop();
    }
  });
});

describe('production start: npm run build, then node dist/main.js', () => {
  it('builds, starts without warnings, answers, and stops on SIGTERM', async () => {
    // tsc from the tree (what `npm run build` runs), with the Node running the tests.
    await promisify(execFile)(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
      {
        cwd: root,
      },
    );
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-dist-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'dist/main.js'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        DATA_DIR: dir,
        PORT: String(port),
        SEED_DEMO: 'false',
        LOG_LEVEL: 'info',
        // The `server` project: the compiled start against the run's server (a database of its own).
        ...serverEnv(),
      },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
    try {
      await new Promise<void>((ok, fail) => {
        const timer = setInterval(() => {
          if (out.includes('mailstats is running')) ok();
          if (child.exitCode !== null) fail(new Error(`exited ${child.exitCode}: ${out}${err}`));
        }, 100);
        void exited.then(() => clearInterval(timer));
        void new Promise((r) => setTimeout(r, 120_000)).then(() => fail(new Error(`no start: ${out}${err}`)));
      }).finally(() => undefined);
      const res = await fetch(
        `http://127.0.0.1:${port}/api/1.2/rest/1/no-such-key-000/automation.stats.json?list_id=1&days=7`,
      );
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ err: true, code: 101 });
      // The dashboard (built by `npm install`'s prepare, as by `npm run build`) is served from the
      // compiled start too, and the process becomes ready.
      const page = await fetch(`http://127.0.0.1:${port}/dashboard/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="app"');
      await vi.waitFor(
        async () => expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200),
        {
          timeout: 60_000,
          interval: 200,
        },
      );
      expect(err).toBe(''); // no warnings (Node prints them on stderr)
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
