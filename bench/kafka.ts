import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { freePort, startKafkaBroker } from '../scripts/kafka/broker.mjs';
import { eventRow, toDateTime64 } from '../shared/clickhouse/event-store.js';
import { EVENT_COLUMNS } from '../shared/clickhouse/schema.js';
import { localDate } from '../shared/dates.js';
import { BENCH, benchBatches } from './stats-data.js';
import { benchService, table } from './support.js';

const PARTITIONS = 3;
const fmtRate = (n: number) => Math.round(n).toLocaleString('en-US');

/** Kafka → worker → ClickHouse sustained rate, against raw consumption and raw insert of the same data. */
export async function kafkaBench(total = 3_000_000): Promise<string> {
  const broker = process.env.KAFKA_BROKERS ? undefined : await startKafkaBroker();
  const brokers = process.env.KAFKA_BROKERS ?? broker!.brokers;
  const kafka = new Kafka({ clientId: 'bench', brokers: [brokers], logLevel: logLevel.NOTHING });
  const id = randomUUID().slice(0, 8);
  const topics = { events: `b${id}.events`, catalog: `b${id}.catalog`, dlq: `b${id}.dlq` };
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: Object.values(topics).map((topic) => ({ topic, numPartitions: PARTITIONS })),
  });
  await admin.disconnect();

  // The data: one list's year of sends, opens, clicks and purchases.
  const today = localDate(Date.now(), 'Europe/Bucharest');
  const producer = kafka.producer();
  await producer.connect();
  let t = Date.now();
  for (const batch of benchBatches(total, 10_000, 'k', today)) {
    await producer.send({
      topic: topics.events,
      acks: -1,
      messages: batch.map(({ record }, i) => ({ key: String(i % 64), value: JSON.stringify(record) })),
    });
  }
  const produceRate = total / ((Date.now() - t) / 1000);
  await producer.send({
    topic: topics.catalog,
    acks: -1,
    messages: [
      {
        key: 'u',
        value: JSON.stringify({
          type: 'user',
          user_id: 1,
          api_key_sha256: createHash('sha256').update('k').digest('hex'),
        }),
      },
      { key: 'l', value: JSON.stringify({ type: 'list', list_id: BENCH.listId }) },
      {
        key: 'a',
        value: JSON.stringify({ type: 'list_access', user_id: 1, list_id: BENCH.listId, granted: true }),
      },
    ],
  });
  await producer.disconnect();
  console.error(`kafka bench: produced ${total} records at ${fmtRate(produceRate)}/s`);

  // Ceiling 1: bare kafkajs consumption of the same topic, no processing.
  const consumer = kafka.consumer({
    groupId: `raw-${id}`,
    maxBytesPerPartition: 16 * 1024 * 1024,
    minBytes: 1024 * 1024,
    maxWaitTimeInMs: 500,
  });
  await consumer.connect();
  await consumer.subscribe({ topic: topics.events, fromBeginning: true });
  let consumed = 0;
  t = Date.now();
  await new Promise<void>((done) => {
    void consumer.run({
      eachBatch: async ({ batch }) => {
        consumed += batch.messages.length;
        if (consumed >= total) done();
      },
    });
  });
  const rawConsume = total / ((Date.now() - t) / 1000);
  await consumer.disconnect();

  // Ceiling 2: bare insert of the same rows into a table of the events columns (no views, no dedup).
  const svc = await benchService();
  await svc.db.command('CREATE TABLE raw_insert AS events');
  const now = toDateTime64(Date.now());
  let rawInsertMs = 0;
  for (const batch of benchBatches(total, 50_000, 'r', today)) {
    const rows = batch.map((a) => eventRow(a, now));
    const t0 = Date.now();
    await svc.db.insert('raw_insert', EVENT_COLUMNS, rows);
    rawInsertMs += Date.now() - t0;
  }
  await svc.close();
  const rawInsert = total / (rawInsertMs / 1000);

  // End to end: the worker as its own process (ROLE=all for its API), catching up on the whole topic.
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    env: {
      ...process.env,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'mailstats-kbench-')),
      PORT: String(port),
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      KAFKA_BROKERS: brokers,
      KAFKA_EVENTS_TOPIC: topics.events,
      KAFKA_CATALOG_TOPIC: topics.catalog,
      KAFKA_DLQ_TOPIC: topics.dlq,
      KAFKA_GROUP_ID: `w-${id}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const rss: number[] = [];
  const sampler = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) rss.push(Number(m[1]) / 1024);
    } catch {
      /* not started yet or gone */
    }
  }, 500);
  const from = new Date(Date.parse(today) - (BENCH.days - 1) * 86_400_000).toISOString().slice(0, 10);
  const url = `http://127.0.0.1:${port}/api/1.2/rest/1/k/automation.stats.json?list_id=${BENCH.listId}&start_date=${from}&stop_date=${today}`;
  let started = 0;
  let counted = 0;
  while (counted < total) {
    await new Promise((r) => setTimeout(r, 1000));
    try {
      const res = await fetch(url);
      if (res.status !== 200) continue;
      if (!started) started = Date.now();
      const days = (await res.json()) as {
        sends_total: number;
        opens_total: number;
        clicks_total: number;
        purchase_count: number;
      }[];
      counted = days.reduce(
        (a, d) => a + d.sends_total + d.opens_total + d.clicks_total + d.purchase_count,
        0,
      );
    } catch {
      /* the API is not up yet */
    }
  }
  const e2e = total / ((Date.now() - started) / 1000);
  clearInterval(sampler);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await broker?.stop();

  const steady = rss.slice(Math.floor(rss.length / 2)).sort((a, b) => a - b);
  const ceiling = Math.min(rawConsume, rawInsert);
  return [
    `${total.toLocaleString('en-US')} records on a ${PARTITIONS}-partition topic (local KRaft broker, one worker process, embedded ClickHouse). Records/s; end to end is measured from the worker's API answering until every record is counted.`,
    '',
    table(
      ['path', 'records/s', 'share of the lower ceiling'],
      [
        ['kafkajs consumption alone (ceiling)', fmtRate(rawConsume), ''],
        ['ClickHouse insert of the same rows alone (ceiling)', fmtRate(rawInsert), ''],
        [
          'end to end: Kafka → validate → dedup → store → day recompute → commit',
          fmtRate(e2e),
          `${Math.round((e2e / ceiling) * 100)}%`,
        ],
      ],
    ),
    '',
    `Worker RSS: steady median ${Math.round(steady[Math.floor(steady.length / 2)] ?? 0)} MB, max ${Math.round(Math.max(...rss))} MB (sampled every 0.5 s). Producing the topic ran at ${fmtRate(produceRate)} records/s.`,
    '',
    'Targets: ≥ 100,000 records/s end to end and ≥ 70% of the lower ceiling; worker RSS ≤ 400 MB steady.',
  ].join('\n');
}
