#!/usr/bin/env node
// The README's first path, as a newcomer runs it: `npm start` on an empty data directory (the demo
// tenant loads), then a few of the README's requests, then a clean stop. .ci/run runs it on the machine's
// Node (the oldest supported) where the full suite runs on Node 26 only.
//
//   node scripts/smoke-readme.mjs [results.json]
//
// Prints one line per check and writes the checks to results.json in the shape of vitest's JSON report
// (numPassedTests, numFailedTests, testResults), so .ci/run counts them with the suite's. Exit 1 when any
// check failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const DEMO = '/api/1.2/rest/1001/demo-key-0123456789abcdef';

async function freePort() {
  const s = createServer();
  await new Promise((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address();
  await new Promise((ok) => s.close(ok));
  return port;
}

const checks = [];
async function check(name, fn) {
  const t = Date.now();
  try {
    await fn();
    checks.push({ name, ok: true });
    console.log(`smoke: ok    ${name} (${Date.now() - t} ms)`);
  } catch (err) {
    checks.push({ name, ok: false, message: err instanceof Error ? err.message : String(err) });
    console.log(`smoke: FAIL  ${name}: ${checks.at(-1).message}`);
  }
}
function expect(cond, what) {
  if (!cond) throw new Error(what);
}

const dataDir = mkdtempSync(join(tmpdir(), 'mailstats-smoke-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
// Its own process group, so the stop reaches node behind `npm start`'s shell.
const child = spawn('npm', ['start'], {
  cwd: root,
  env: { ...process.env, PORT: String(port), DATA_DIR: dataDir },
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
let output = '';
child.stdout.on('data', (c) => (output += String(c)));
child.stderr.on('data', (c) => (output += String(c)));
const exited = new Promise((ok) => child.on('exit', (code, signal) => ok({ code, signal })));

console.log(`smoke: npm start on Node ${process.version}, PORT ${port}, DATA_DIR ${dataDir}`);
await check('npm start prints the banner (demo tenant loaded)', async () => {
  const deadline = Date.now() + 300_000;
  while (!/demo tenant: .*just loaded/.test(output)) {
    expect(child.exitCode === null, `npm start exited (${child.exitCode}):\n${output.slice(-2000)}`);
    expect(Date.now() < deadline, `no banner within 300 s:\n${output.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

const started = checks[0].ok;
if (started) {
  await check("the README's automation.stats example answers with the demo's records", async () => {
    const res = await fetch(`${base}${DEMO}/automation.stats.json?list_id=1&days=7`);
    expect(res.status === 200, `status ${res.status}`);
    const body = await res.json();
    expect(
      Array.isArray(body) && body.length > 0,
      `not a non-empty array: ${JSON.stringify(body).slice(0, 200)}`,
    );
    expect(
      body.every((r) => r.list_id === '1' && typeof r.sends_unique === 'number'),
      'records not of list 1',
    );
  });
  await check("the README's templateRender example renders", async () => {
    const form = new URLSearchParams({
      list_id: '2',
      template_id: 'welcome-text',
      params: JSON.stringify({ name: 'Ana', list: 'Demo Newsletter' }),
    });
    const res = await fetch(`${base}${DEMO}/transactional.templateRender.json`, {
      method: 'POST',
      body: form,
    });
    const body = await res.json();
    expect(res.status === 200, `status ${res.status}: ${JSON.stringify(body)}`);
    expect(
      body.content === 'Hello Ana, welcome to Demo Newsletter!',
      `content ${JSON.stringify(body.content)}`,
    );
  });
  await check('a wrong key answers 403 code 101', async () => {
    const res = await fetch(`${base}/api/1.2/rest/1001/wrong-key/automation.stats.json?list_id=1`);
    const body = await res.json();
    expect(res.status === 403 && body.code === 101, `status ${res.status}: ${JSON.stringify(body)}`);
  });
  await check('the dashboard page loads', async () => {
    const res = await fetch(`${base}/dashboard/`);
    const text = await res.text();
    expect(res.status === 200 && /<html/i.test(text), `status ${res.status}`);
  });
}

await check('SIGTERM stops it cleanly', async () => {
  // To the group, as a terminal's Ctrl-C would: npm ends by the signal, node shuts down by itself.
  const closed = new Promise((ok) => child.stdout.on('close', ok));
  if (child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), 15_000);
  await exited;
  await closed; // every process holding its output is gone
  clearTimeout(timer);
  expect(started, 'it never started');
  expect(/"msg":"shutting down"/.test(output), `no "shutting down" line:\n${output.slice(-1000)}`);
  expect(!/shutdown took too long|"level":50/.test(output), `errors while stopping:\n${output.slice(-1000)}`);
});
rmSync(dataDir, { recursive: true, force: true });

const failed = checks.filter((c) => !c.ok);
const out = process.argv[2];
if (out)
  writeFileSync(
    out,
    JSON.stringify({
      numPassedTests: checks.length - failed.length,
      numFailedTests: failed.length,
      testResults: [
        {
          name: join(root, 'scripts/smoke-readme.mjs'),
          status: failed.length ? 'failed' : 'passed',
          assertionResults: checks.map((c) => ({
            fullName: `README smoke (Node ${process.version}) ${c.name}`,
            status: c.ok ? 'passed' : 'failed',
            failureMessages: c.ok ? [] : [c.message],
          })),
        },
      ],
    }),
  );
process.exitCode = failed.length ? 1 : 0;
