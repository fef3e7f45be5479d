/**
 * Draws docs/screenshots/monitoring.png: the Grafana dashboard's panels (monitoring/grafana/dashboards/
 * mailstats.json) over real traffic, without Grafana (not installable here). It runs the service
 * (`main.ts`, ROLE all, embedded ClickHouse, Kafka at KAFKA_BROKERS) and the real Prometheus server
 * (/usr/bin/prometheus, Debian) on loopback, scraping it every 5 s with the shipped alert rules; sends
 * traffic for a few minutes; then asks Prometheus's HTTP API for each panel's expressions over that
 * time (Grafana's $__rate_interval as 30 s) and draws the series with uPlot in Chromium.
 *
 *   KAFKA_BROKERS=127.0.0.1:37321 npx tsx scripts/monitoring-screenshot.ts [minutes, default 5]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { chromium } from 'playwright-core';
import { DEMO, DEMO_ORDER_PARAMS, demoRecords } from '../ingest/demo-seed.js';
import { freePort } from './kafka/broker.mjs';

const root = resolve(import.meta.dirname, '..');
const minutes = Number(process.argv[2] ?? 5);
const brokers = process.env.KAFKA_BROKERS;
if (!brokers) throw new Error('set KAFKA_BROKERS (a running broker, e.g. 127.0.0.1:37321)');
const SCRAPE_S = 5;
const RATE_INTERVAL = '30s';

const dir = mkdtempSync(join(tmpdir(), 'mailstats-monitoring-'));
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 180_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await ok().catch(() => false)) return;
    await sleep(500);
  }
  throw new Error(`${what} did not come up in ${ms / 1000} s`);
}

function run(cmd: string, args: string[], env: Record<string, string>, log: string) {
  const child = spawn(cmd, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  child.stdout!.on('data', (b: Buffer) => out.push(b));
  child.stderr!.on('data', (b: Buffer) => out.push(b));
  child.on('exit', () => writeFileSync(join(dir, log), Buffer.concat(out)));
  children.push(child);
  return child;
}

// --- the service (ROLE all: API, POST /ingest producing to Kafka, the consumer) ---------------------
const id = randomUUID().slice(0, 8);
const topics = { events: `mon${id}.events`, catalog: `mon${id}.catalog`, dlq: `mon${id}.dlq` };
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const token = `monitoring-ingest-token-${id}-0123456789abcdef`;
run(
  process.execPath,
  ['--disable-warning=TimeoutNegativeWarning', '--import', 'tsx', 'main.ts'],
  {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: join(dir, 'data'),
    // The demo's records written as the script's own data (a seeded demo would be removed by the feeder's
    // first record: docs/records.md "The demo tenant").
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    INGEST_TOKEN: token,
    KAFKA_BROKERS: brokers,
    KAFKA_EVENTS_TOPIC: topics.events,
    KAFKA_CATALOG_TOPIC: topics.catalog,
    KAFKA_DLQ_TOPIC: topics.dlq,
    KAFKA_GROUP_ID: `mon${id}`,
  },
  'service.log',
);

// --- Prometheus, scraping it with the shipped rules ------------------------------------------------
const promPort = await freePort();
const prom = `http://127.0.0.1:${promPort}`;
writeFileSync(
  join(dir, 'prometheus.yml'),
  [
    'global:',
    `  scrape_interval: ${SCRAPE_S}s`,
    `  evaluation_interval: ${SCRAPE_S}s`,
    'rule_files:',
    `  - ${join(root, 'monitoring/prometheus/rules/mailstats.rules.yml')}`,
    'scrape_configs:',
    '  - job_name: mailstats-all',
    '    static_configs:',
    `      - targets: ['127.0.0.1:${port}']`,
    '',
  ].join('\n'),
);
run(
  '/usr/bin/prometheus',
  [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'tsdb')}`,
    `--web.listen-address=127.0.0.1:${promPort}`,
  ],
  {},
  'prometheus.log',
);

try {
  await waitFor('the service', async () => (await fetch(`${base}/readyz`)).status === 200);
  await waitFor('Prometheus', async () => (await fetch(`${prom}/-/ready`)).status === 200);
  const api = `${base}/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}`;
  const renderBody = JSON.stringify({
    list_id: 1,
    template_id: 'order-confirmation',
    params: DEMO_ORDER_PARAMS,
  });
  const render = () =>
    fetch(`${api}/transactional.templateRender.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: renderBody,
    });
  // In parts: the whole demo is over POST /ingest's body limit.
  const demoLines = demoRecords().flatMap((i) => ('value' in i ? [JSON.stringify(i.value)] : []));
  for (let i = 0; i < demoLines.length; i += 5_000) {
    const part = await fetch(`${base}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` },
      body: demoLines.slice(i, i + 5_000).join('\n'),
    });
    if (part.status !== 200) throw new Error(`loading the demo answered ${part.status}`);
  }
  await waitFor('the demo (through Kafka)', async () => (await render()).status === 200);

  const kafka = new Kafka({
    clientId: 'monitoring-screenshot',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer();
  await producer.connect();
  const started = Date.now() / 1000;
  const loadBefore = loadavg()[0]!.toFixed(1);
  const end = Date.now() + minutes * 60_000;
  let seq = 0;
  const activity = (i: number) => ({
    type: ['send', 'open', 'click'][i % 3],
    event_id: `mon-${id}-${i}`,
    list_id: 1,
    workflow_id: 1 + (i % 5),
    subscriber_id: i % 5000,
    timestamp: Date.now() - 3_600_000,
  });
  const ingest = (lines: string[]) =>
    fetch(`${base}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` },
      body: lines.join('\n'),
    });
  const phase = (fraction: number) => Date.now() > end - (1 - fraction) * minutes * 60_000;
  const done = { burst: false, heavy: false, dead: false };

  // Stats and renders from a few concurrent clients; ingest, a Kafka burst, dead letters on a schedule.
  const client = async (n: number) => {
    for (let i = 0; Date.now() < end; i++) {
      const r = Math.random();
      const days = r < 0.7 ? [7, 30, 90][i % 3] : 1 + Math.floor(Math.random() * 89); // repeats and distinct
      if (r < 0.55) await fetch(`${api}/automation.stats.json?list_id=${1 + (i % 2)}&days=${days}`);
      else if (r < 0.9) await render();
      else if (r < 0.95) await fetch(`${api}/list.all.json`);
      else if (r < 0.98)
        await fetch(`${api}/automation.stats.json?list_id=abc`); // 406: a client mistake
      else await fetch(`${base}/api/1.2/rest/${DEMO.userId}/wrong-key/list.all.json`);
      await sleep(20 + n * 5);
    }
  };
  const feeder = async () => {
    while (Date.now() < end) {
      const lines = Array.from({ length: 300 }, () => JSON.stringify(activity(seq++)));
      lines.push(JSON.stringify(activity(seq - 1)), JSON.stringify(activity(seq - 2))); // duplicates
      lines.push('{"type": "send"', '{"type": "teleport"}'); // rejected lines
      await ingest(lines);
      if (!done.burst && phase(0.35)) {
        done.burst = true; // a producer's backlog straight into Kafka: the lag panel's spike
        for (let b = 0; b < 20; b++)
          await producer.send({
            topic: topics.events,
            messages: Array.from({ length: 2000 }, () => {
              const a = activity(seq++);
              return { key: '1', value: JSON.stringify(a) };
            }),
          });
      }
      if (!done.dead && phase(0.55)) {
        done.dead = true; // a broken producer: dead letters
        await producer.send({
          topic: topics.events,
          messages: Array.from({ length: 150 }, (_, k) => ({
            key: '1',
            value: `{"type": "send", "event_id": ${k}`,
          })),
        });
      }
      if (!done.heavy && phase(0.7)) {
        done.heavy = true; // templates stored beyond the render limits
        const heavy = '{{a}}'.repeat(6_000);
        await ingest(
          [1, 2, 3, 4, 5].map((k) =>
            JSON.stringify({
              type: 'template',
              template_id: `heavy-${k}`,
              account_id: DEMO.accountId,
              content: heavy,
            }),
          ),
        );
      }
      await sleep(2_000);
    }
  };
  await Promise.all([client(0), client(1), client(2), feeder()]);
  await producer.disconnect();
  await sleep((SCRAPE_S + 2) * 1000);
  const stopped = Date.now() / 1000;
  const loadAfter = loadavg()[0]!.toFixed(1);

  // --- each panel's expressions from Prometheus -----------------------------------------------------
  const dashboard = JSON.parse(
    readFileSync(join(root, 'monitoring/grafana/dashboards/mailstats.json'), 'utf8'),
  ) as {
    panels: {
      title: string;
      fieldConfig: { defaults: { unit?: string } };
      targets: { expr: string; legendFormat?: string }[];
    }[];
  };
  const step = SCRAPE_S;
  const times: number[] = [];
  for (let t = Math.floor(started); t <= stopped; t += step) times.push(t);
  const panels = [];
  for (const p of dashboard.panels) {
    const series: { name: string; values: (number | null)[] }[] = [];
    for (const t of p.targets) {
      const expr = t.expr.replaceAll('$__rate_interval', RATE_INTERVAL);
      const q = new URLSearchParams({
        query: expr,
        start: String(times[0]),
        end: String(times.at(-1)),
        step: String(step),
      });
      const body = (await (await fetch(`${prom}/api/v1/query_range?${q}`)).json()) as {
        status: string;
        error?: string;
        data: { result: { metric: Record<string, string>; values: [number, string][] }[] };
      };
      if (body.status !== 'success') throw new Error(`${p.title}: ${expr}: ${body.error}`);
      for (const r of body.data.result) {
        const at = new Map(r.values.map(([ts, v]) => [Math.round(ts), Number(v)]));
        const name = (t.legendFormat ?? expr).replace(
          /\{\{\s*(\w+)\s*\}\}/g,
          (_, k: string) => r.metric[k] ?? '',
        );
        series.push({
          name,
          values: times.map((ts) => {
            const v = at.get(ts);
            return v === undefined || !Number.isFinite(v) ? null : v;
          }),
        });
      }
    }
    panels.push({ title: p.title, unit: p.fieldConfig.defaults.unit ?? '', series });
  }
  const alerts = (
    (await (await fetch(`${prom}/api/v1/alerts`)).json()) as {
      data: { alerts: { labels: Record<string, string>; state: string }[] };
    }
  ).data.alerts.map((a) => `${a.labels.alertname} (${a.state})`);

  // --- drawn with uPlot in Chromium ------------------------------------------------------------------
  const uplotJs = readFileSync(join(root, 'node_modules/uplot/dist/uPlot.iife.min.js'), 'utf8');
  const uplotCss = readFileSync(join(root, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
  const caption =
    `${minutes} minutes of traffic against one mailstats process (ROLE all, embedded ClickHouse, Kafka), ` +
    `scraped every ${SCRAPE_S} s by Prometheus ${await promVersion()} with the shipped rules; each panel is the ` +
    `dashboard's own PromQL (rate interval ${RATE_INTERVAL}) from Prometheus's query_range API, drawn with uPlot. ` +
    `Generated ${new Date().toISOString().slice(0, 16)}Z by scripts/monitoring-screenshot.ts. ` +
    `Machine: ${cpus().length} cores shared with other work, 1-minute load average ${loadBefore} at the start, ${loadAfter} at the end. ` +
    `Alerts at the end: ${alerts.length ? alerts.join(', ') : 'none'}.`;
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>${uplotCss}
    body{margin:0;padding:12px;background:#111217;color:#ccccdc;font:12px Inter,Arial,sans-serif}
    h1{font-size:16px;margin:0 0 4px} p{margin:0 0 10px;color:#9fa1aa;max-width:1560px}
    .grid{display:grid;grid-template-columns:repeat(3,1fr);gap:8px}
    .panel{background:#181b1f;border:1px solid #2c3235;border-radius:3px;padding:6px}
    .panel h2{font-size:13px;margin:0 0 4px;color:#e0e0e8;font-weight:500}
    .u-legend{font-size:10px;color:#ccccdc} .u-legend .u-marker{width:8px;height:8px}
    .empty{height:200px;display:flex;align-items:center;justify-content:center;color:#6e7077}
  </style></head><body><h1>mailstats — dashboard panels over real traffic (not Grafana: see caption)</h1>
  <p>${caption}</p><div class="grid" id="grid"></div>
  <script>${uplotJs}</script><script>
  const times = ${JSON.stringify(times)};
  const panels = ${JSON.stringify(panels)};
  const colors = ['#73bf69','#f2cc0c','#8ab8ff','#ff780a','#f2495c','#5794f2','#b877d9','#fade2a','#96d98d','#ff9830','#c4162a','#1f60c4'];
  const fmt = (unit, v) => {
    if (v == null) return '';
    const a = Math.abs(v);
    if (unit === 's') return a >= 1 ? v.toFixed(2)+' s' : a >= 0.001 ? (v*1000).toFixed(a >= 0.01 ? 0 : 1)+' ms' : (v*1e6).toFixed(0)+' µs';
    if (unit === 'bytes') return (v/1048576).toFixed(0)+' MiB';
    if (unit === 'percentunit') return (v*100).toFixed(0)+'%';
    if (unit === 'reqps') return (a >= 10 ? v.toFixed(0) : v.toFixed(2))+'/s';
    return a >= 1e6 ? (v/1e6).toFixed(1)+'M' : a >= 1e3 ? (v/1e3).toFixed(1)+'k' : a >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(2);
  };
  for (const p of panels) {
    const el = document.createElement('div'); el.className = 'panel';
    el.innerHTML = '<h2></h2>'; el.firstChild.textContent = p.title;
    document.getElementById('grid').appendChild(el);
    if (p.series.length === 0) { const e = document.createElement('div'); e.className='empty'; e.textContent='no data'; el.appendChild(e); continue; }
    new uPlot({
      width: 500, height: 200,
      scales: { x: { time: true }, y: p.unit === 'percentunit' ? { range: [0, 1] } : { auto: true } },
      axes: [{ stroke: '#9fa1aa', grid: { stroke: '#2c3235' }, ticks: { stroke: '#2c3235' } },
             { stroke: '#9fa1aa', grid: { stroke: '#2c3235' }, ticks: { stroke: '#2c3235' }, size: 72,
               values: (u, vals) => vals.map((v) => fmt(p.unit, v)) }],
      legend: { live: false },
      cursor: { show: false },
      series: [{}, ...p.series.map((s, i) => ({ label: s.name, stroke: colors[i % colors.length], width: 1.5,
        value: (u, v) => fmt(p.unit, v) }))],
    }, [times, ...p.series.map((s) => s.values)], el);
  }
  </script></body></html>`;
  writeFileSync(join(dir, 'dashboard.html'), html);
  const profile = mkdtempSync(join(tmpdir(), 'mailstats-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1600, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`file://${join(dir, 'dashboard.html')}`);
  await page.waitForTimeout(500);
  mkdirSync(join(root, 'docs/screenshots'), { recursive: true });
  await page.screenshot({ path: join(root, 'docs/screenshots/monitoring.png'), fullPage: true });
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  console.log(caption);
  console.log(`panels: ${panels.map((p) => `${p.title}: ${p.series.length} series`).join('; ')}`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await sleep(3_000);
  console.log(`logs and data kept in ${dir}`);
}

async function promVersion() {
  const b = (await (await fetch(`${prom}/api/v1/status/buildinfo`)).json()) as { data: { version: string } };
  return b.data.version;
}
