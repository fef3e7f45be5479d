import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { EventStore } from '../shared/clickhouse/event-store.js';
import { READ_SETTINGS, statsSql, type StatsQuery } from '../shared/clickhouse/stats-store.js';
import { addDays, localDate } from '../shared/dates.js';
import { BENCH, benchBatches } from './stats-data.js';
import { statsMixBench } from './stats-mix.js';
import { statsRound2 } from './stats-round2.js';
import { benchService, fmt, measure, percentile, table } from './support.js';

const KEY = 'bench-key';

const SHAPES: { name: string; params: string; workflowIds: number[] | null; triggerId: number | null }[] = [
  { name: 'all workflows', params: '', workflowIds: null, triggerId: null },
  { name: 'one workflow', params: '&workflow_ids=7', workflowIds: [7], triggerId: null },
  { name: 'one workflow + trigger', params: '&workflow_ids=7&trigger_id=2', workflowIds: [7], triggerId: 2 },
  {
    name: '5 workflows + trigger',
    params: '&workflow_ids=1,2,3,4,5&trigger_id=2',
    workflowIds: [1, 2, 3, 4, 5],
    triggerId: 2,
  },
  {
    name: '25 workflows',
    params: `&workflow_ids=${Array.from({ length: 25 }, (_, i) => i + 1).join(',')}`,
    workflowIds: Array.from({ length: 25 }, (_, i) => i + 1),
    triggerId: null,
  },
];

/** Issue 12's latency targets, for 10M raw records; a 1M row is the reference its growth is measured from. */
const TARGET = { p50: 10, p99: 30, subsetP99: 150, growth: 1.5, overSql: 1.3, size: 10_000_000 };

/** The row's verdict: met, or which target it missed and by how much. */
function verdict(
  shape: (typeof SHAPES)[number],
  size: number,
  m: { p50: number; p99: number; sqlP50: number; growth: number | undefined },
): string {
  if (size < TARGET.size) return '(reference for 10M)';
  const subset = shape.workflowIds !== null && shape.workflowIds.length > 1;
  const missed = [
    ...(subset
      ? [m.p99 > TARGET.subsetP99 && `p99 > ${TARGET.subsetP99}`]
      : [m.p50 > TARGET.p50 && `p50 > ${TARGET.p50}`, m.p99 > TARGET.p99 && `p99 > ${TARGET.p99}`]),
    m.growth !== undefined && m.growth > TARGET.growth && `> ${TARGET.growth}× 1M`,
    m.p50 / m.sqlP50 > TARGET.overSql && `> ${TARGET.overSql}× SQL`,
  ].filter((x): x is string => typeof x === 'string');
  return missed.length === 0 ? 'met' : `**missed** (${missed.join(', ')})`;
}

/** Stats latency over 365 days at 1M and 10M raw records, API against its bare SQL in the same run. */
export async function statsBench(
  // BENCH_STATS_MAX=1000000: stop at 1M (the many-tenants rows are for 1M records; loading 10M takes minutes).
  sizes = [1_000_000, 10_000_000].filter((n) => n <= Number(process.env.BENCH_STATS_MAX ?? Infinity)),
  runs = 200,
): Promise<string> {
  const svc = await benchService();
  const store = new EventStore(svc.db, 7);
  await svc.pipeline.ingest(
    [
      { type: 'user', user_id: 1, api_key_sha256: createHash('sha256').update(KEY).digest('hex') },
      { type: 'list', list_id: BENCH.listId, name: 'bench' },
      { type: 'list_access', user_id: 1, list_id: BENCH.listId, granted: true },
    ].map((value, i) => ({ line: i + 1, value })),
  );
  // HTTP ceilings: a bare node:http route and a bare Express route answering the very bytes the
  // service answered for the shape being measured, through the same client loop.
  let current = Buffer.alloc(0);
  const bare = createServer((_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': current.length,
    });
    res.end(current);
  });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/fixed', (_req, res) => {
    res.type('application/json').send(current);
  });
  const framework = createServer(app);
  const listen = (server: Server) =>
    new Promise<string>((ok) => {
      server.listen(0, '127.0.0.1', () => {
        const a = server.address();
        ok(`http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/fixed`);
      });
    });
  const bareUrl = await listen(bare);
  const expressUrl = await listen(framework);
  const get = (target: string) => async () => {
    const res = await fetch(target);
    await res.arrayBuffer();
  };
  const today = localDate(Date.now(), 'Europe/Bucharest');
  const from = addDays(today, -(BENCH.days - 1));
  const rows: (string | number)[][] = [];
  const p50s = new Map<string, number>();
  let loaded = 0;
  // Written straight to the store, so in the list's current dating generation (the list record above
  // dated it): rows of another generation are never read, and every answer would be empty.
  const [dating] = await svc.db.query<{ gen: number }>(
    'SELECT max(gen) AS gen FROM list_dating WHERE list_id = {list:UInt64} AND done = 1',
    { list: BENCH.listId },
    { output_format_json_quote_64bit_integers: 0 },
  );
  const gen = dating?.gen ?? 0;
  for (const size of sizes) {
    const t = Date.now();
    for (const batch of benchBatches(size - loaded, 100_000, `s${loaded}-`, today, gen))
      await store.write(batch);
    const loadSeconds = (Date.now() - t) / 1000;
    loaded = size;
    // Written around the pipeline (straight to the store): nothing cached may outlive it.
    svc.statsCache.bumpAll();
    for (const table of ['daily_sets', 'daily_scopes']) await svc.db.command(`OPTIMIZE TABLE ${table} FINAL`);
    console.error(`stats bench: ${size} records loaded in ${loadSeconds.toFixed(0)} s`);
    // Answers of real days, not empty ones: the year over all workflows has a row for every day.
    const year = await fetch(
      `${svc.url}/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=${BENCH.listId}&start_date=${from}&stop_date=${today}`,
    );
    const days = ((await year.json()) as unknown[]).length;
    if (days < BENCH.days - 1)
      throw new Error(`stats bench: the year's answer has ${days} days, not ${BENCH.days}`);
    for (const shape of SHAPES) {
      const url = `${svc.url}/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=${BENCH.listId}&start_date=${from}&stop_date=${today}${shape.params}`;
      const q: StatsQuery = {
        listId: BENCH.listId,
        workflowIds: shape.workflowIds,
        triggerId: shape.triggerId,
        from,
        to: today,
      };
      const { sql, params } = statsSql(q);
      const call = async () => {
        const res = await fetch(url);
        if (res.status !== 200) throw new Error(`stats answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer(); // the whole answer, received but not parsed: parsing is the client's cost
      };
      // Uncached (the latency targets are for reads of ClickHouse), then served from the answer cache.
      svc.statsCache.enabled = false;
      const api = await measure(call, runs);
      svc.statsCache.enabled = true;
      const cached = await measure(call, runs);
      const sqlTimes = await measure(() => svc.db.query(sql, params, READ_SETTINGS), runs);
      current = Buffer.from(await (await fetch(url)).arrayBuffer());
      const nodeHttp = await measure(get(bareUrl), runs);
      const viaExpress = await measure(get(expressUrl), runs);
      const [a50, a99, s50, s99] = [
        percentile(api, 50),
        percentile(api, 99),
        percentile(sqlTimes, 50),
        percentile(sqlTimes, 99),
      ];
      const base = p50s.get(shape.name);
      const growth = base !== undefined ? `${(a50 / base).toFixed(2)}×` : '';
      if (base === undefined) p50s.set(shape.name, a50);
      rows.push([
        shape.name,
        `${size / 1e6}M`,
        fmt(a50),
        fmt(a99),
        fmt(s50),
        fmt(s99),
        `${(a50 / s50).toFixed(2)}×`,
        fmt(percentile(nodeHttp, 50)),
        fmt(percentile(viaExpress, 50)),
        growth,
        fmt(percentile(cached, 50)),
        fmt(percentile(cached, 99)),
        verdict(shape, size, { p50: a50, p99: a99, sqlP50: s50, growth: base && a50 / base }),
      ]);
    }
  }
  const origin = new URL(svc.url!).origin;
  const apiBase = `/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=${BENCH.listId}&`;
  const settled = () => (svc.dayRows ? svc.dayRows.settled() : Promise.resolve());
  const records = `${loaded / 1e6}M`;
  const round2 = await statsRound2(origin, apiBase, svc.db, svc.statsCache, today, records, settled);
  const mix = await statsMixBench(origin, apiBase, svc.statsCache, today, records, settled);
  await svc.close();
  await new Promise<void>((ok) => bare.close(() => ok()));
  await new Promise<void>((ok) => framework.close(() => ok()));
  return [
    `Stats latency, 365-day period, one list with ${BENCH.workflows} workflows, ${BENCH.triggers} triggers and ~${BENCH.subscribers / 1000}k subscribers; ${runs} sequential requests after 20 warm-ups, after \`OPTIMIZE … FINAL\`. API = HTTP round trip through the service with the answer cache off (body received, not parsed; the client runs in the same process); cached = the same with the answer cache on (after the first request, every one is a hit); SQL = the same query through the same client (the ceiling); bare node:http / Express = a route answering the same bytes with no work, through the same client loop (the HTTP ceilings). Times in ms.`,
    '',
    table(
      [
        'shape',
        'raw records',
        'API p50',
        'API p99',
        'SQL p50',
        'SQL p99',
        'API ÷ SQL (p50)',
        'bare node:http, same bytes, p50',
        'bare Express, same bytes, p50',
        'p50 vs 1M',
        'API cached p50',
        'API cached p99',
        'targets (uncached)',
      ],
      rows,
    ),
    '',
    'Targets (10M rows; the 1M rows are their reference): all workflows and one workflow (with or without trigger) p50 ≤ 10 ms, p99 ≤ 30 ms uncached; any subset p99 ≤ 150 ms; p50 ≤ 1.5× the 1M row; API p50 ≤ 1.3× bare SQL.',
    '',
    round2,
    '',
    mix.text,
  ].join('\n');
}
