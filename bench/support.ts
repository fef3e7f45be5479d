import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../shared/config.js';
import { startService, type Service } from '../service/start.js';
import express from 'express';

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Run `fn` `warmup` times, then `runs` times; latencies in ms, sorted. */
export async function measure(fn: () => Promise<unknown>, runs: number, warmup = 20): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out.sort((a, b) => a - b);
}

export const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

/**
 * A fresh embedded service for one benchmark, once it reports itself ready (/readyz: its render workers
 * started too). Measured from the TypeScript sources, a worker loads its modules through tsx for seconds
 * on Node 26, and a run that starts before would time that start-up beside the path it measures.
 */
export async function benchService(env: Record<string, string> = {}): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-bench-'));
  const svc = await startService(
    loadConfig({
      DATA_DIR: dir,
      PORT: '0',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      INGEST_TOKEN: 'bench-ingest-token-0123456789abcdef',
      ...env,
    }),
  );
  const deadline = Date.now() + 120_000;
  while ((await fetch(`${svc.httpUrl}/readyz`)).status !== 200) {
    if (Date.now() > deadline) throw new Error('the bench service was not ready within 120 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  return svc;
}

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * A bare Express route answering `body` (JSON bytes) at `/fixed`: the ceiling of sending those bytes
 * with the framework the service uses, served by the bench process. `close` stops it.
 */
export async function bareRoute(body: Buffer): Promise<{ origin: string; close: () => Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/fixed', (_req, res) => {
    res.type('application/json').send(body);
  });
  const server = createServer(app);
  const origin = await new Promise<string>((ok) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      ok(`http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`);
    }),
  );
  return { origin, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}
