import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../shared/config.js';
import { startService, type Service } from '../shared/service.js';

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

/** A fresh embedded service for one benchmark. */
export function benchService(env: Record<string, string> = {}): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-bench-'));
  return startService(
    loadConfig({
      DATA_DIR: dir,
      PORT: '0',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      INGEST_TOKEN: 'bench',
      ...env,
    }),
  );
}

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
