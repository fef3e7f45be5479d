/**
 * Peers of the Kafka path, measured in the same run as our worker: the other maintained
 * pure-JS client (@platformatic/kafka) against kafkajs — bare, and behind the service's Kafka seam
 * (ingest/kafka/client.ts) — and ClickHouse's own Kafka table engine in the same embedded chDB.
 * Bench-only code: nothing here is used by the service.
 */
import { Kafka, logLevel } from 'kafkajs';
import type { KafkaClient } from '../ingest/kafka/client.js';
import type { Db } from '../shared/clickhouse/client.js';
import { ACTIVITY_ENUM } from '../shared/clickhouse/schema.js';
import { importPeer } from './peer-package.js';

/** The part of @platformatic/kafka used here (installed on first use: ./peer-package.ts). */
interface PlatformaticKafka {
  Consumer: new (options: object) => {
    consume(options: object): Promise<{
      on(event: 'error' | 'data', listener: (arg: unknown) => void): unknown;
      close(): Promise<void>;
    }>;
    close(force: boolean): Promise<void>;
  };
  Producer: new (options: object) => {
    send(options: {
      acks: number;
      messages: { topic: string; key: string; value: string }[];
    }): Promise<unknown>;
    close(): Promise<void>;
  };
  stringSerializers: object;
}
const platformatic = () => importPeer<PlatformaticKafka>('@platformatic/kafka', '1.35.0');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A whole-topic read: records/s from subscribing to the last record, and after the first record arrived. */
export interface ConsumeRate {
  rate: number;
  /** Records/s from the first record on: the fetch path without the group join. */
  steady: number;
  /** From subscribing to the first record (group join, metadata, first fetch). */
  firstMs: number;
}

const consumeRate = (total: number, t0: number, first: number, end: number): ConsumeRate => ({
  rate: total / ((end - t0) / 1000),
  steady: (total - 1) / (Math.max(1, end - first) / 1000),
  firstMs: first - t0,
});

/** kafkajs: consume the whole topic (fresh group, from the beginning), no processing. */
export async function kafkajsConsume(brokers: string, topic: string, total: number): Promise<ConsumeRate> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [brokers], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: `raw-kjs-${Math.random().toString(36).slice(2)}`,
    maxBytesPerPartition: 16 * 1024 * 1024,
    minBytes: 1024 * 1024,
    maxWaitTimeInMs: 500,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let consumed = 0;
  let first = 0;
  const t = Date.now();
  await new Promise<void>((done) => {
    void consumer.run({
      eachBatch: async ({ batch }) => {
        if (!first && batch.messages.length) first = Date.now();
        consumed += batch.messages.length;
        if (consumed >= total) done();
      },
    });
  });
  const rate = consumeRate(total, t, first, Date.now());
  await consumer.disconnect();
  return rate;
}

/**
 * @platformatic/kafka: the same consumption with the same fetch sizes. Its stream buffers 1,024
 * messages by default; 65,536 (about one fetch) measured faster here, so that is used.
 */
export async function platformaticConsume(
  brokers: string,
  topic: string,
  total: number,
): Promise<ConsumeRate> {
  const { Consumer } = await platformatic();
  const consumer = new Consumer({
    groupId: `raw-pk-${Math.random().toString(36).slice(2)}`,
    clientId: 'bench-pk',
    bootstrapBrokers: [brokers],
  });
  const t = Date.now();
  const stream = await consumer.consume({
    topics: [topic],
    mode: 'earliest',
    autocommit: false,
    maxBytesPerPartition: 16 * 1024 * 1024,
    maxBytes: 48 * 1024 * 1024,
    minBytes: 1024 * 1024,
    maxWaitTime: 500,
    highWaterMark: 65_536,
  });
  let consumed = 0;
  let first = 0;
  await new Promise<void>((done, fail) => {
    stream.on('error', fail);
    stream.on('data', () => {
      if (!first) first = Date.now();
      if (++consumed === total) done();
    });
  });
  const rate = consumeRate(total, t, first, Date.now());
  await stream.close();
  await consumer.close(true);
  return rate;
}

/**
 * Through the seam (ingest/kafka/client.ts), as the worker gets its records: a group consumer's
 * `eachBatch` over the whole topic (fresh group, from the beginning), each batch's offset resolved,
 * nothing committed, with the worker's fetch sizes (KAFKA_FETCH_MAX_BYTES' default 16 MiB, half per
 * partition) and concurrency (4 partitions at once).
 */
export async function seamConsume(client: KafkaClient, topic: string, total: number): Promise<ConsumeRate> {
  const consumer = client.consumer({
    groupId: `seam-${Math.random().toString(36).slice(2)}`,
    sessionTimeoutMs: 30_000,
    maxBytes: 16 * 1024 * 1024,
    maxBytesPerPartition: 8 * 1024 * 1024,
    minBytes: 1024 * 1024,
    maxWaitMs: 500,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let consumed = 0;
  let first = 0;
  const t = Date.now();
  await new Promise<void>((done, fail) => {
    consumer
      .run({
        partitionsConsumedConcurrently: 4,
        eachBatch: async ({ batch, resolveOffset }) => {
          if (!first && batch.messages.length) first = Date.now();
          consumed += batch.messages.length;
          if (batch.messages.length) resolveOffset(batch.messages.at(-1)!.offset);
          if (consumed >= total) done();
        },
      })
      .catch(fail);
  });
  const rate = consumeRate(total, t, first, Date.now());
  await consumer.disconnect();
  return rate;
}

/** Through the seam: the service's producer (idempotent, one request in flight, acks all); records/s. */
export async function seamProduce(client: KafkaClient, topic: string, batches: Message[][]): Promise<number> {
  const producer = client.producer();
  await producer.connect();
  let n = 0;
  const t = Date.now();
  for (const messages of batches) {
    await producer.send([{ topic, messages }]);
    n += messages.length;
  }
  const rate = n / ((Date.now() - t) / 1000);
  await producer.disconnect();
  return rate;
}

type Message = { key: string; value: string };

/** kafkajs: produce the given batches (acks all) to `topic`; records/s. */
export async function kafkajsProduce(brokers: string, topic: string, batches: Message[][]): Promise<number> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [brokers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  let n = 0;
  const t = Date.now();
  for (const messages of batches) {
    await producer.send({ topic, acks: -1, messages });
    n += messages.length;
  }
  const rate = n / ((Date.now() - t) / 1000);
  await producer.disconnect();
  return rate;
}

/** @platformatic/kafka: the same batches, acks all; records/s. */
export async function platformaticProduce(
  brokers: string,
  topic: string,
  batches: Message[][],
): Promise<number> {
  const { Producer, stringSerializers } = await platformatic();
  const producer = new Producer({
    clientId: 'bench-pk',
    bootstrapBrokers: [brokers],
    serializers: stringSerializers,
  });
  let n = 0;
  const t = Date.now();
  for (const messages of batches) {
    await producer.send({ acks: -1, messages: messages.map((m) => ({ topic, key: m.key, value: m.value })) });
    n += messages.length;
  }
  const rate = n / ((Date.now() - t) / 1000);
  await producer.close();
  return rate;
}

export interface EngineResult {
  /** 'background': the materialized view consumed by itself; 'direct': driven by INSERT … SELECT FROM the Kafka table. */
  mode: 'background' | 'direct' | 'none';
  /** From creating the view (or the first INSERT … SELECT): group join and first fetch included. */
  rate?: number;
  /** From the first stored row to the last: the streaming rate alone. */
  steady?: number;
  stored: number;
  /**
   * CPU of this process (all its threads: the embedded engine's consumer and inserts, and this bench's
   * polling) per record over the streaming part, µs: what the worker's `cpuUsPerRecord` is for ours.
   */
  cpuUsPerRecord?: number;
  note: string;
}

const QUEUE_COLUMNS = `
  event_id String, type ${ACTIVITY_ENUM}, list_id UInt64, workflow_id UInt64, trigger_id UInt64,
  subscriber_id UInt64, timestamp Int64, order_id String, value_ron Decimal(18, 4), value_eur Decimal(18, 4)`;

/** The queue's JSON records as rows of the events schema (the day in UTC: a peer, not our dating rules). */
const TO_EVENTS = `
  SELECT event_id, type, list_id, workflow_id, trigger_id, subscriber_id,
    fromUnixTimestamp64Milli(timestamp, 'UTC') AS ts, toDate(ts) AS day,
    order_id, value_ron, value_eur, now64(3) AS ingested_at
  FROM ke_queue`;
const TARGET =
  'ke_events (event_id, type, list_id, workflow_id, trigger_id, subscriber_id, ts, day, order_id, value_ron, value_eur, ingested_at)';

async function stored(db: Db): Promise<number> {
  const [row] = await db.query<{ n: string | number }>('SELECT count() AS n FROM ke_events');
  return Number(row?.n ?? 0);
}

/**
 * ClickHouse's own Kafka table engine in the same embedded chDB: a Kafka table on the same topic and a
 * materialized view into a copy of `events` (the PostHog design). chDB has no server background
 * schedule pool driving the view's streaming (chdb-io/chdb#339: "consumer never starts"), so if nothing
 * arrives within `startMs` the same engine is driven from the foreground by INSERT … SELECT FROM the
 * Kafka table (stream_like_engine_allow_direct_select) — the engine's consume + parse + insert path.
 */
export async function kafkaEngine(
  db: Db,
  brokers: string,
  topic: string,
  total: number,
  { startMs = 30_000, capMs = 120_000 } = {},
): Promise<EngineResult> {
  const group = `ke-${Math.random().toString(36).slice(2)}`;
  // DDL takes no query parameters; every value here is generated by this bench, none from input.
  const quote = (s: string) => `'${s.replace(/[\\']/g, '\\$&')}'`;
  await db.command('CREATE TABLE ke_events AS events');
  await db.command(
    `CREATE TABLE ke_queue (${QUEUE_COLUMNS}) ENGINE = Kafka SETTINGS
       kafka_broker_list = ${quote(brokers)}, kafka_topic_list = ${quote(topic)},
       kafka_group_name = ${quote(group)}, kafka_format = 'JSONEachRow', kafka_num_consumers = 1,
       kafka_max_block_size = 65536, kafka_flush_interval_ms = 500`,
  );
  const t0 = Date.now();
  await db.command(`CREATE MATERIALIZED VIEW ke_mv TO ${TARGET} AS ${TO_EVENTS}`);
  let n = 0;
  let last = t0;
  let first = { at: 0, n: 0, cpu: 0 };
  let lastCpu = 0;
  const cpuUs = () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  };
  while (Date.now() - t0 < capMs && n < total) {
    await sleep(250);
    const now = await stored(db);
    if (now > n) {
      n = now;
      last = Date.now();
      lastCpu = cpuUs();
      if (!first.at) first = { at: last, n, cpu: lastCpu };
    }
    if (n === 0 && Date.now() - t0 > startMs) break;
  }
  if (n > 0) {
    return {
      mode: 'background',
      rate: n / ((last - t0) / 1000),
      steady: n > first.n ? (n - first.n) / ((last - first.at) / 1000) : undefined,
      cpuUsPerRecord: n > first.n ? (lastCpu - first.cpu) / (n - first.n) : undefined,
      stored: n,
      note: n < total ? `only ${n} of ${total} stored within ${capMs / 1000} s` : '',
    };
  }

  // Nothing in `startMs`: the background streaming did not run. Drive the same engine directly.
  await db.command('DROP VIEW ke_mv');
  const t1 = Date.now();
  let idle = 0;
  let error = '';
  while (Date.now() - t1 < capMs && n < total && idle < 3) {
    try {
      await db.command(
        `INSERT INTO ${TARGET} ${TO_EVENTS}`,
        {},
        { stream_like_engine_allow_direct_select: 1 },
      );
    } catch (err) {
      error = (err as Error).message.split('\n')[0]!.slice(0, 200);
      break;
    }
    const now = await stored(db);
    idle = now === n ? idle + 1 : 0;
    if (now > n) {
      n = now;
      last = Date.now();
    }
  }
  const bg = `the materialized view stored nothing in ${startMs / 1000} s (no background streaming in chDB)`;
  if (n === 0)
    return {
      mode: 'none',
      stored: 0,
      note: `${bg}; direct SELECT stored nothing either${error ? `: ${error}` : ''}`,
    };
  return {
    mode: 'direct',
    rate: n / ((last - t1) / 1000),
    stored: n,
    note: `${bg}; driven by INSERT … SELECT FROM the Kafka table instead${n < total ? ` (${n} of ${total} stored)` : ''}`,
  };
}
