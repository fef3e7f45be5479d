import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EventStore } from '../shared/clickhouse/event-store.js';
import { checkRecord } from '../shared/records/index.js';
import { localDate } from '../shared/dates.js';
import { benchBatches } from './stats-data.js';
import { benchService, table } from './support.js';

/**
 * 100k records of this shape are ~12.5 MB, over the 10 MiB ingest limit (docs/records.md "Ingest over HTTP") (413), so bodies
 * hold 75k records (~9.4 MB): the largest round number that fits.
 */
const BODY_RECORDS = 75_000;
/** Issue 12: POST /ingest records/s. */
const TARGET = 50_000;
/** `import` (docs/lifecycle.md): records/s end to end, the CLI's start included, and ≥ POST /ingest. */
const IMPORT_TARGET = 30_000;

/**
 * `npm run admin -- import FILE` on an NDJSON file of the same records, timed from the CLI's spawn to
 * its exit; its peak RSS through /usr/bin/time where that exists.
 */
async function importRun(
  url: string,
  lines: string[],
): Promise<{ rate: number; streaming: number; rssMiB?: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-bench-import-'));
  const file = join(dir, 'bench.ndjson');
  writeFileSync(file, lines.join('\n') + '\n');
  const records = lines.reduce((n, body) => n + body.split('\n').length, 0);
  const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
  const node = [process.execPath, '--import', 'tsx', 'admin/cli.ts', 'import', file];
  const [cmd, ...args] = timeBin ? [timeBin, '-f', 'maxrss_kib=%M', ...node] : node;
  const t = Date.now();
  const [stdout, stderr] = await new Promise<[string, string]>((ok, ko) =>
    execFile(
      cmd!,
      args,
      {
        cwd: resolve(import.meta.dirname, '..'),
        env: { ...process.env, MAILSTATS_URL: url, ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef' },
        maxBuffer: 1 << 24,
      },
      (err, out, errText) => (err ? ko(new Error(`import failed: ${errText}`)) : ok([out, errText])),
    ),
  );
  const rate = records / ((Date.now() - t) / 1000);
  rmSync(dir, { recursive: true, force: true });
  const kib = /maxrss_kib=(\d+)/.exec(stderr)?.[1];
  // The CLI's own rate, from its first read to its last acknowledgement (its start left out).
  const streaming = Number(/ (\d+) records\/s/.exec(stdout)?.[1] ?? NaN);
  return { rate, streaming, rssMiB: kib ? Math.round(Number(kib) / 1024) : undefined };
}

/** Wire form of the benchmark records: NDJSON bodies as producers would send them. */
function bodies(count: number, prefix: string): string[] {
  const today = localDate(Date.now(), 'Europe/Bucharest');
  const out: string[] = [];
  for (const batch of benchBatches(count * BODY_RECORDS, BODY_RECORDS, prefix, today)) {
    out.push(batch.map(({ record }) => JSON.stringify(record)).join('\n'));
  }
  return out;
}

/** POST /ingest throughput for 100k-record bodies, with its parts measured alone in the same run. */
export async function ingestBench(count = 5): Promise<string> {
  let svc = await benchService({ ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef' });
  const wire = bodies(count, 'http-');
  const rows: (string | number)[][] = [];
  const mib = (Buffer.byteLength(wire[0]!) / 2 ** 20).toFixed(1);

  let t = Date.now();
  for (const body of wire) {
    const res = await fetch(`${svc.url}/ingest`, {
      method: 'POST',
      body,
      headers: { authorization: 'Bearer bench', 'content-type': 'application/x-ndjson' },
    });
    const answer = (await res.json()) as { accepted: number; rejected: unknown[] };
    if (answer.accepted !== BODY_RECORDS)
      throw new Error(`ingest answered ${res.status}: ${JSON.stringify(answer)}`);
  }
  const http = (count * BODY_RECORDS) / ((Date.now() - t) / 1000);
  rows.push([
    'POST /ingest (HTTP → parse → validate → store)',
    Math.round(http).toLocaleString('en-US'),
    `≥ ${TARGET.toLocaleString('en-US')}`,
    http >= TARGET ? 'met' : '**missed**',
  ]);

  // On a fresh store, as POST /ingest was: the per-batch day recompute costs more on a fuller day.
  // (The engine binds one data directory per process: the first service closes before the next opens.)
  await svc.close();
  svc = await benchService({ ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef' });
  const imported = await importRun(svc.url!, bodies(count, 'import-'));
  const rss = imported.rssMiB === undefined ? '' : `; CLI peak RSS ${imported.rssMiB} MiB`;
  rows.push(
    [
      '`admin import FILE`, end to end (CLI start → read → chunks of 50k → same pipeline)',
      Math.round(imported.rate).toLocaleString('en-US'),
      `≥ ${IMPORT_TARGET.toLocaleString('en-US')}`,
      `${imported.rate >= IMPORT_TARGET ? 'met' : '**missed**'}${rss}`,
    ],
    [
      '`admin import FILE`, streaming (its summary: first read → last acknowledgement)',
      Math.round(imported.streaming).toLocaleString('en-US'),
      '≥ POST /ingest',
      imported.streaming >= http ? 'met' : '**missed**',
    ],
  );

  const parseWire = bodies(count, 'parse-'); // made before the clock starts: only parsing is timed
  t = Date.now();
  for (const body of parseWire) for (const line of body.split('\n')) checkRecord(JSON.parse(line));
  const parse = (count * BODY_RECORDS) / ((Date.now() - t) / 1000);
  rows.push([
    'JSON.parse + schema validation alone',
    Math.round(parse).toLocaleString('en-US'),
    '',
    '(part)',
  ]);

  const store = new EventStore(svc.db, 7);
  const today = localDate(Date.now(), 'Europe/Bucharest');
  const batches = [...benchBatches(count * BODY_RECORDS, BODY_RECORDS, 'store-', today)];
  t = Date.now();
  for (const b of batches) await store.write(b);
  const write = (count * BODY_RECORDS) / ((Date.now() - t) / 1000);
  rows.push([
    'store write alone (dedup + events + views + day recompute)',
    Math.round(write).toLocaleString('en-US'),
    '',
    '(ceiling: the part that bounds the route)',
  ]);
  await svc.close();

  return [
    `Ingest throughput, ${count} NDJSON bodies of ${BODY_RECORDS.toLocaleString('en-US')} records (${mib} MiB) each, sequential, embedded ClickHouse. Records/s. (100k records of this shape exceed the 10 MiB body limit.)`,
    '',
    table(['path', 'records/s', 'target', 'verdict'], rows),
  ].join('\n');
}
