import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/**
 * Open-loop load at a fixed rate, the way wrk2 measures: request i is due at start + i / rate whatever
 * became of the earlier ones, and its latency counts from when it was due, so a server that falls
 * behind shows as latency, not as fewer requests (no coordinated omission). Written here because
 * autocannon's rate limit does not pace: each connection sends its quota for the second back to back
 * at the top of every second and then idles, so "50% of capacity" was full load half the time.
 */
export interface PacedOptions {
  origin: string;
  rate: number;
  seconds: number;
  connections: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Request i goes to paths[i % paths.length]. */
  paths: string[];
  /** How long requests still in flight at the end may take to finish before they count as unfinished. */
  graceSeconds?: number;
}

export interface PacedResult {
  offered: number;
  completed: number;
  /** Completed per second of the sending window. */
  rate: number;
  /** Latency from due time, ms; Infinity when more than that share of requests never finished. */
  p50: number;
  p99: number;
  max: number;
  /** Non-2xx answers and connection errors. */
  failed: number;
  unfinished: number;
}

/** Runs the load from a child process, so the generator shares neither the server's event loop nor its thread. */
export function pacedLoad(opts: PacedOptions): Promise<PacedResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-paced-'));
  const file = join(dir, 'options.json');
  writeFileSync(file, JSON.stringify(opts));
  return new Promise<PacedResult>((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', fail);
    child.on('exit', (code) => {
      rmSync(dir, { recursive: true, force: true });
      if (code !== 0) return fail(new Error(`paced load exited ${code}`));
      // JSON has no Infinity: null stands for it on the wire.
      const r = JSON.parse(out, (_k, v: unknown) => (v === null ? Infinity : v)) as PacedResult;
      ok(r);
    });
  });
}

async function run(opts: PacedOptions): Promise<PacedResult> {
  const { hostname, port } = new URL(opts.origin);
  const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
  const offered = Math.max(1, Math.round(opts.rate * opts.seconds));
  const interval = 1000 / opts.rate;
  const latency = new Float64Array(offered).fill(Infinity);
  let completed = 0;
  let failed = 0;
  let settled = 0;
  let allSettled: () => void = () => {};
  const settledAll = new Promise<void>((r) => (allSettled = r));
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  const headers = { ...opts.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
  const start = performance.now() + 20;
  const settle = () => {
    if (++settled === offered) allSettled();
  };
  const send = (i: number) => {
    const due = start + i * interval;
    const req = request(
      {
        agent,
        hostname,
        port,
        method: opts.method ?? 'GET',
        path: opts.paths[i % opts.paths.length],
        headers,
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300) {
            latency[i] = performance.now() - due;
            completed++;
          } else failed++;
          settle();
        });
      },
    );
    req.on('error', () => {
      failed++;
      settle();
    });
    req.end(body);
  };
  let next = 0;
  const end = start + opts.seconds * 1000;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      while (next < offered && start + next * interval <= now) send(next++);
      if (next >= offered) return done();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
  const windowEnd = Math.max(end, performance.now());
  await Promise.race([
    settledAll,
    new Promise((r) => setTimeout(r, (opts.graceSeconds ?? 10) * 1000).unref()),
  ]);
  agent.destroy();
  const sorted = Float64Array.from(latency).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  const inWindow = latency.reduce((n, l, i) => (start + i * interval + l <= windowEnd ? n + 1 : n), 0);
  return {
    offered,
    completed,
    rate: inWindow / ((windowEnd - start) / 1000),
    p50: at(50),
    p99: at(99),
    max: sorted[sorted.length - 1]!,
    failed,
    unfinished: offered - settled,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const opts = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as PacedOptions;
  const r = await run(opts);
  process.stdout.write(JSON.stringify(r, (_k, v: unknown) => (v === Infinity ? null : v)));
  process.exit(0);
}
