// Helpers of scripts/container-check.mjs: steps counted and reported, commands run loudly, the command
// blocks of the docs read as they are written.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The checks of one run: each step printed as it ends, all of them written to `reportFile`. */
export class CheckRun {
  constructor(reportFile) {
    this.reportFile = reportFile;
    this.steps = [];
    this.failed = 0;
    this.passed = 0;
  }

  /** Runs `fn` as one counted step; true when it passed. A failure is printed at once, never thrown. */
  async step(name, fn) {
    const t0 = Date.now();
    console.log(`container-check: … ${name}`);
    try {
      await fn();
      const ms = Date.now() - t0;
      this.passed += 1;
      this.steps.push({ name, ok: true, ms });
      console.log(`container-check: PASS ${name} (${(ms / 1000).toFixed(1)} s)`);
      return true;
    } catch (err) {
      const ms = Date.now() - t0;
      this.failed += 1;
      const error = String(err?.stack ?? err).slice(0, 4_000);
      this.steps.push({ name, ok: false, ms, error });
      console.log(`container-check: FAIL ${name} (${(ms / 1000).toFixed(1)} s)\n${error}`);
      return false;
    }
  }

  close() {
    mkdirSync(dirname(this.reportFile), { recursive: true });
    writeFileSync(
      this.reportFile,
      JSON.stringify({ passed: this.passed, failed: this.failed, steps: this.steps }, null, 2),
    );
    for (const s of this.steps.filter((x) => !x.ok)) console.log(`container-check: FAILED ${s.name}`);
    const total = this.steps.reduce((n, s) => n + s.ms, 0);
    console.log(
      `container-check: ${this.passed} steps passed, ${this.failed} failed, ${(total / 1000).toFixed(0)} s`,
    );
  }
}

/** A program with arguments; its stdout. Throws with the tail of its output when it fails. */
export function sh(cmd, args, { quiet = false, env = {}, cwd, input } = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    input,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    const tail = `${r.stdout ?? ''}\n${r.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${tail}`);
  }
  if (!quiet && r.stderr?.trim()) process.stderr.write(r.stderr.split('\n').slice(-5).join('\n') + '\n');
  return r.stdout;
}

/**
 * A block of shell lines, run by bash exactly as written (with `set -euo pipefail`, so a failing line
 * fails it), its output shown (or returned with `capture`).
 */
export function run(block, { cwd, env = {}, capture = false, tty = false } = {}) {
  console.log(
    block
      .split('\n')
      .map((l) => `  $ ${l}`)
      .join('\n'),
  );
  // `tty`: in a terminal of its own, as a person types it (`docker compose exec` asks for one).
  const [cmd, args] = tty
    ? ['script', ['-qefc', `set -euo pipefail\n${block}`, '/dev/null']]
    : ['bash', ['-euo', 'pipefail', '-c', block]];
  const r = spawnSync(cmd, args, {
    cwd,
    env: { ...process.env, SHELL: '/bin/bash', ...env },
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
    stdio: ['ignore', capture ? 'pipe' : 'inherit', capture ? 'pipe' : 'inherit'],
  });
  if (capture) process.stdout.write(`${r.stdout ?? ''}${r.stderr ?? ''}`);
  if (r.status !== 0) throw new Error(`exited ${r.status ?? r.signal}: ${block}`);
  // eslint-disable-next-line no-control-regex
  return (r.stdout ?? '').replace(/\x1b\[[0-9;]*m|\r|\x00/g, '');
}

/**
 * The fenced code blocks of a Markdown file marked for the check by the comment line
 * `<!-- container-check: NAME -->` just before them, in order: what the reader sees is what is run.
 */
export function docBlocks(file, name) {
  const text = readFileSync(file, 'utf8');
  const re = new RegExp(`<!-- container-check: ${name} -->\\s*\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``, 'g');
  return [...text.matchAll(re)].map((m) => m[1]);
}

/** Waits for `check` to hold (a bound against a hang, not a target). */
export async function until(what, boundMs, check) {
  const deadline = Date.now() + boundMs;
  let last;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`not within ${boundMs / 1000} s: ${what}${last ? ` (${last.message})` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Waits for a 200 from `url`. */
export async function waitHttp(url, boundMs) {
  await until(`200 from ${url}`, boundMs, async () => {
    const r = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return r.status === 200;
  });
}

/**
 * fetch, sent again (up to 3 times) when the connection failed before an answer: a kept-alive socket
 * the server had just closed. Only for requests that may be repeated (POST /ingest is: records are
 * counted once by their event_id).
 */
export async function fetchRetried(url, init) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
