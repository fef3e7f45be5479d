import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { growthBench } from './growth.js';
import { ingestBench } from './ingest.js';
import { kafkaBench } from './kafka.js';
import { renderBench } from './render.js';
import { statsBench } from './stats.js';
import { serverBench } from './stats-server.js';
import { tenantsBench } from './tenants.js';

/** `npm run bench [-- section …]`: runs the sections (all by default) and rewrites their parts of BENCHMARKS.md. */
const SECTIONS: Record<string, { title: string; run: () => Promise<string> }> = {
  stats: { title: 'automation.stats latency', run: () => statsBench() },
  ingest: { title: 'POST /ingest throughput', run: () => ingestBench() },
  kafka: { title: 'Kafka → ClickHouse throughput', run: () => kafkaBench() },
  render: { title: 'transactional.templateRender throughput', run: () => renderBench() },
  tenants: { title: 'Many tenants: catalog, ingest and stats over 10,000 lists', run: () => tenantsBench() },
  server: { title: 'Server mode: API replicas answering from memory', run: () => serverBench() },
  growth: { title: 'Growth: one store from 1M raw records up', run: () => growthBench() },
};

const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = chosen.length ? chosen : Object.keys(SECTIONS);
const FILE = 'BENCHMARKS.md';
let doc: string;
try {
  doc = readFileSync(FILE, 'utf8');
} catch {
  doc = '# Benchmarks\n\nWritten by `npm run bench` (each section is replaced when it is run again).\n';
}

for (const name of names) {
  const section = SECTIONS[name];
  if (!section) throw new Error(`unknown section ${name}; known: ${Object.keys(SECTIONS).join(', ')}`);
  console.error(`bench: ${name}…`);
  const loadBefore = loadavg()[0]!;
  const body = await section.run();
  // A quick iteration (the end-to-end row alone) is printed, never written over the full table.
  if (
    name === 'kafka' &&
    (process.env.BENCH_KAFKA_E2E_ONLY === '1' || process.env.BENCH_KAFKA_PEERS_ONLY === '1')
  ) {
    console.log(body);
    continue;
  }
  // The machine is shared: the 1-minute load average before and after says how loaded the run was.
  const load = `load average (1 min) ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`;
  const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const block = `<!-- ${name} -->\n## ${section.title}\n\nMeasured ${new Date().toISOString().slice(0, 16)}Z on ${machine}; ${load}.\n\n${body}\n<!-- /${name} -->`;
  const re = new RegExp(`<!-- ${name} -->[\\s\\S]*?<!-- /${name} -->`);
  doc = re.test(doc) ? doc.replace(re, block) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(FILE, doc);
  console.log(body);
}
