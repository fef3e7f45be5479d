import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { validateItems } from '../ingest/validate.js';
import { decodeBody } from '../query-api/ingest-body.js';
import { freePort } from '../scripts/kafka/broker.mjs';
import { encodeRows } from '../shared/clickhouse/client.js';
import { EventStore, eventRow } from '../shared/clickhouse/event-store.js';
import { EVENT_COLUMNS } from '../shared/clickhouse/schema.js';
import { checkRecord } from '../shared/records/index.js';
import { localDate, toDateTime64 } from '../shared/dates.js';
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

/** Issue 20: POST /ingest from outside the service's process, one client, bodies of 25k lines. */
const SPAWNED_BODY_RECORDS = 25_000;
const SPAWNED_TARGET = 50_000;
/** Issue 20's row posts 1M records; BENCH_INGEST_RECORDS (or ingestBench's second argument) for a smaller run. */
const SPAWNED_RECORDS = Number(process.env.BENCH_INGEST_RECORDS) || 1_000_000;
const SPAWNED_TOKEN = 'bench-ingest-token-0123456789abcdef';

const rate = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * The service as its own process, as `npm start` runs it (`node --import tsx main.ts` in the repository
 * root), on a fresh DATA_DIR and a free port, once /readyz answers 200. BENCH_CPU_PROF_DIR: a CPU profile
 * of its main thread (written when it exits on SIGTERM) to see where its time goes.
 */
async function spawnService(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-bench-spawned-'));
  const prof = process.env.BENCH_CPU_PROF_DIR;
  const child = spawn(
    process.execPath,
    [
      ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
      '--disable-warning=TimeoutNegativeWarning', // as `npm start`
      '--import',
      'tsx',
      'main.ts',
    ],
    {
      cwd: resolve(import.meta.dirname, '..'),
      env: {
        ...process.env,
        DATA_DIR: dir,
        PORT: String(port),
        SEED_DEMO: 'false',
        LOG_LEVEL: 'warn',
        INGEST_TOKEN: SPAWNED_TOKEN,
        // The embedded default: a KAFKA_BROKERS or CLICKHOUSE_URL of the bench's own environment (a broker
        // reused for the Kafka sections) would turn POST /ingest into a Kafka produce or a remote write.
        KAFKA_BROKERS: '',
        CLICKHOUSE_URL: '',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  const stop = async () => {
    if (!gone) child.kill('SIGTERM');
    // main.ts stops within 10 s (docs/operations.md "Shutdown"); past that, it is killed.
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (gone) throw new Error(`the spawned service exited (code ${child.exitCode}) before it was ready`);
    const status = await fetch(`${url}/readyz`).then(
      (res) => res.status,
      () => 0, // not listening yet
    );
    if (status === 200) return { url, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error('the spawned service was not ready within 120 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Issue 20's row: `records` records as sequential NDJSON bodies of 25k lines, posted by one client (this
 * process) to the service running as its own process; records/s from the first send to the last answer.
 * Every answer must accept its whole body.
 */
async function spawnedIngest(records: number): Promise<{ rate: number; bodies: Buffer[] }> {
  const today = localDate(Date.now(), 'Europe/Bucharest');
  // Encoded before the clock starts: the client times sending and answers only.
  const wire: { body: Buffer<ArrayBuffer>; lines: number }[] = [];
  for (const batch of benchBatches(records, SPAWNED_BODY_RECORDS, 'spawned-', today))
    wire.push({
      body: Buffer.from(batch.map(({ record }) => JSON.stringify(record)).join('\n')),
      lines: batch.length,
    });
  const svc = await spawnService();
  try {
    const profiling = Boolean(process.env.BENCH_CPU_PROF_DIR);
    // The profile's clock (CLOCK_MONOTONIC, µs) is process.hrtime's: the window of the run within it.
    const from = process.hrtime.bigint();
    const t = Date.now();
    for (const { body, lines } of wire) {
      const res = await fetch(`${svc.url}/ingest`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${SPAWNED_TOKEN}`, 'content-type': 'application/x-ndjson' },
      });
      const answer = (await res.json()) as { accepted?: number; rejected?: unknown[] };
      if (res.status !== 200 || answer.accepted !== lines || answer.rejected?.length !== 0)
        throw new Error(`ingest answered ${res.status}: ${JSON.stringify(answer).slice(0, 500)}`);
    }
    const seconds = (Date.now() - t) / 1000;
    if (profiling)
      console.error(
        `bench ingest: spawned service profiled; the run's window is ${from / 1000n}–${process.hrtime.bigint() / 1000n} µs (CLOCK_MONOTONIC), ${wire.length} bodies`,
      );
    return { rate: records / seconds, bodies: wire.map((w) => w.body) };
  } finally {
    await svc.stop();
  }
}

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

/**
 * POST /ingest throughput. Issue 12's rows: `count` bodies of 75k records to the service in this process,
 * with its parts measured alone. Issue 20's rows: `spawnedRecords` records in 25k-line bodies to the
 * service as its own process, with its limits measured alone; all in the same run.
 */
export async function ingestBench(count = 5, spawnedRecords = SPAWNED_RECORDS): Promise<string> {
  // Issue 20's row first, while this process holds no engine of its own: here it is only the client.
  const spawned = await spawnedIngest(spawnedRecords);
  // Issue 20's limits, right after its row: the store write alone in the batches those bodies make, on a
  // fresh store as the spawned service's was (the first engine this process opens).
  const today = localDate(Date.now(), 'Europe/Bucharest');
  let svc = await benchService();
  const store20 = new EventStore(svc.db, 7);
  const batches20 = [...benchBatches(spawnedRecords, SPAWNED_BODY_RECORDS, 'store20-', today)];
  let t = Date.now();
  for (const b of batches20) await store20.write(b);
  const write20 = spawnedRecords / ((Date.now() - t) / 1000);
  await svc.close();
  // The engine alone: the same rows, encoded beforehand, inserted into `events` of a fresh store (its
  // materialized view fills daily_sets), one insert per batch: the one statement storing a record cannot
  // do without. What the store write adds to it is the dedup look-up, the ledger and the day recompute.
  svc = await benchService();
  const now20 = toDateTime64(Date.now());
  const payloads20 = batches20.map((b) => encodeRows(b.map((a) => eventRow(a, now20))));
  t = Date.now();
  for (const [i, payload] of payloads20.entries())
    await svc.db.insertEncoded('events', EVENT_COLUMNS, payload, `engine-alone-${i}`);
  const engine20 = spawnedRecords / ((Date.now() - t) / 1000);
  await svc.close();
  // The route's own decoding and validation (body bytes → string → lines → JSON → records) of the very
  // bodies the spawned service took.
  t = Date.now();
  for (const body of spawned.bodies) validateItems(decodeBody(body.toString('utf8')));
  const parse20 = spawnedRecords / ((Date.now() - t) / 1000);

  // Issue 12's rows.
  svc = await benchService({ ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef' });
  const wire = bodies(count, 'http-');
  const rows: (string | number)[][] = [];
  const mib = (Buffer.byteLength(wire[0]!) / 2 ** 20).toFixed(1);

  t = Date.now();
  for (const body of wire) {
    const res = await fetch(`${svc.url}/ingest`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${svc.ingestToken}`, 'content-type': 'application/x-ndjson' },
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

  const series = 1 / (1 / write20 + 1 / parse20);
  const mib20 = (spawned.bodies[0]!.length / 2 ** 20).toFixed(1);
  const ceiling = `ceiling: store write alone at 25k batches: ${rate(write20)}/s; decode + validation alone ${rate(parse20)}/s; the two in series ${rate(series)}/s`;
  const rows20: (string | number)[][] = [
    [
      'POST /ingest, the service as its own process (`node --import tsx main.ts`), one client, 25k-line bodies, from outside',
      rate(spawned.rate),
      `≥ ${SPAWNED_TARGET.toLocaleString('en-US')}`,
      spawned.rate >= SPAWNED_TARGET ? 'met' : `**missed** (${ceiling})`,
    ],
    [
      'store write alone, 25k-record batches, fresh store (dedup + events + views + day recompute)',
      rate(write20),
      '',
      '(ceiling: the write part of the route, statements + row encoding)',
    ],
    [
      'the engine alone: the same rows inserted into `events` (and its view into daily_sets), 25k-row inserts encoded beforehand, fresh store',
      rate(engine20),
      '',
      "(the engine's floor: the store write adds the dedup look-up, the ledger and the day recompute)",
    ],
    [
      "the route's decode + validation alone (`decodeBody` + `validateItems`), 25k-line bodies",
      rate(parse20),
      '',
      '(part)',
    ],
    [
      'the two in series (1 / (1/write + 1/decode))',
      rate(series),
      '',
      '(ceiling of a route that decodes, then writes)',
    ],
  ];

  return [
    `POST /ingest in the bench's process: ${count} NDJSON bodies of ${BODY_RECORDS.toLocaleString('en-US')} records (${mib} MiB) each, sequential, embedded ClickHouse, the service in the bench's process. Records/s. (100k records of this shape exceed the 10 MiB body limit.)`,
    '',
    table(['path', 'records/s', 'target', 'verdict'], rows),
    '',
    `POST /ingest from outside: ${spawnedRecords.toLocaleString('en-US')} records as sequential NDJSON bodies of ${SPAWNED_BODY_RECORDS.toLocaleString('en-US')} lines (${mib20} MiB), one client in the bench's process, the service as its own process on a fresh DATA_DIR; records/s from the first send to the last answer. Its limits measured alone in the same run, in the bench's process. Records/s.`,
    '',
    table(['path', 'records/s', 'target', 'verdict'], rows20),
  ].join('\n');
}
