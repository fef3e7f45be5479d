import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { adminFetch } from './admin-http.js';
import { UsageError } from './commands.js';

/** `dlq export [--reason TEXT] [--since TIME] [FILE]` and `dlq stats` (docs/lifecycle.md), Kafka mode. */

function query(o: { reason?: string; since?: string }): string {
  const q = new URLSearchParams();
  if (o.reason !== undefined) q.set('reason', o.reason);
  if (o.since !== undefined) {
    if (!Number.isFinite(Date.parse(o.since)))
      throw new UsageError(`--since "${o.since}" is not a time (e.g. 2026-11-02T10:00:00Z)`);
    q.set('since', o.since);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export async function dlqExport(
  o: { reason?: string; since?: string },
  file: string | undefined,
  url: string,
): Promise<number> {
  const res = await adminFetch(url, `/dlq/export${query(o)}`);
  const body = Readable.fromWeb(res.body as never);
  if (file) {
    await pipeline(body, createWriteStream(file));
    console.error(`dead letters written to ${file}`);
  } else await pipeline(body, process.stdout, { end: false });
  return 0;
}

export async function dlqStats(o: { reason?: string; since?: string }, url: string): Promise<number> {
  const res = await adminFetch(url, `/dlq/stats${query(o)}`);
  const { total, reasons } = (await res.json()) as { total: number; reasons: Record<string, number> };
  console.log(`${total} dead letters`);
  for (const [reason, n] of Object.entries(reasons).sort((a, b) => b[1] - a[1]))
    console.log(`${String(n).padStart(10)}  ${reason}`);
  return 0;
}
