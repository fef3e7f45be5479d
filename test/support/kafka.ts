import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Message } from 'kafkajs';
import { expectedStats, type RawActivity } from './expected-stats.js';
import { rng } from './rng.js';

/** Topic and group names of their own, so test files never see each other's records. */
export function kafkaEnv(brokers: string) {
  const id = randomUUID().slice(0, 8);
  return {
    KAFKA_BROKERS: brokers,
    KAFKA_EVENTS_TOPIC: `t${id}.events`,
    KAFKA_CATALOG_TOPIC: `t${id}.catalog`,
    KAFKA_DLQ_TOPIC: `t${id}.dlq`,
    KAFKA_GROUP_ID: `g${id}`,
    KAFKA_BATCH_MAX_MS: '100',
    KAFKA_SESSION_TIMEOUT_MS: '6000',
  };
}

export function testKafka(brokers: string): Kafka {
  return new Kafka({ clientId: 'mailstats-test', brokers: [brokers], logLevel: logLevel.NOTHING });
}

/** Produce raw values (objects are JSON-encoded; strings and Buffers go as they are) with acks = all. */
export async function produce(
  kafka: Kafka,
  topic: string,
  values: unknown[],
  key = (v: unknown) => keyOf(v),
) {
  // Idempotent: a request retried after a lost answer (a busy or restarting broker) is not written twice.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let i = 0; i < values.length; i += 2000) {
      const messages: Message[] = values.slice(i, i + 2000).map((v) => ({
        key: key(v),
        value: typeof v === 'string' || Buffer.isBuffer(v) ? v : JSON.stringify(v),
      }));
      await producer.send({ topic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
}

const keyOf = (v: unknown) =>
  typeof v === 'object' && v !== null && 'list_id' in v ? String((v as { list_id: unknown }).list_id) : 'x';

/** `n` activity records over the 10 days before `end`, for lists 10 and 11, with their model twins. */
export function activityStream(n: number, seed: number, end = Date.parse('2026-11-15T00:00:00Z')) {
  const rnd = rng(seed);
  const types = ['send', 'open', 'click', 'purchase', 'bounce', 'event', 'condition', 'action'];
  const wire: Record<string, unknown>[] = [];
  const model: RawActivity[] = [];
  for (let i = 0; i < n; i++) {
    const type = types[Math.floor(rnd() * types.length)]!;
    const r: RawActivity = {
      type,
      event_id: `s${seed}-${i}`,
      list_id: rnd() < 0.5 ? 10 : 11,
      workflow_id: 1 + Math.floor(rnd() * 4),
      subscriber_id: 1 + Math.floor(rnd() * 500),
      at: end - Math.floor(rnd() * 10 * 86_400_000),
    };
    const w: Record<string, unknown> = { ...r, timestamp: r.at };
    delete w.at;
    if (type === 'purchase') {
      r.value_ron = (Math.floor(rnd() * 100_000) / 100).toFixed(2);
      r.value_eur = '0.1';
      Object.assign(w, { order_id: `o${i}`, value_ron: r.value_ron, value_eur: r.value_eur });
    }
    if (['event', 'condition', 'action'].includes(type)) {
      r.status = rnd() < 0.8 ? 'ok' : 'failed';
      w.status = r.status;
    }
    wire.push(w);
    model.push(r);
  }
  return { wire, model };
}

export const STREAM_PERIOD = '&start_date=2026-11-01&stop_date=2026-11-20';

/** The two lists `activityStream` spreads its records over. */
export const STREAM_LISTS = [
  { list_id: 10, timezone: 'Europe/Bucharest' },
  { list_id: 11, timezone: 'America/New_York' },
];

/**
 * What automation.stats must answer for `list` over STREAM_PERIOD by the model of `records`, for the
 * query `shape` ('' or '&workflow_ids=…', as appended to the request).
 */
export function streamStats(
  records: RawActivity[],
  list: { list_id: number; timezone: string },
  shape = '',
): ReturnType<typeof expectedStats> {
  return expectedStats(records, {
    listId: list.list_id,
    tz: list.timezone,
    currency: 'RON',
    from: '2026-11-01',
    to: '2026-11-20',
    workflowIds: shape === '' ? undefined : shape.slice('&workflow_ids='.length).split(',').map(Number),
  });
}
