// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Kafka } from 'kafkajs';
import { kafkaEnv, testKafka } from '../support/kafka.js';
import { sha256, startTestService, type TestService } from '../support/service.js';

/**
 * Issue 19 B and F, with the real broker: a catalog record that cannot be stored (props nested 20,000
 * deep) is dead-lettered alone and the partition goes on (a later key revocation applies); a tombstone
 * (null value) is dead-lettered with a null value, not empty bytes (docs/records.md "Ways in").
 */
const USER = 61;
const LIST = 71;
const OLD_KEY = 'old-key';
const NEW_KEY = 'new-key';

interface Dead {
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
}

async function readDlq(kafka: Kafka, topic: string, count: number): Promise<Dead[]> {
  const consumer = kafka.consumer({ groupId: `dlq-reader-${Date.now()}-${Math.random()}` });
  const dead: Dead[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
        );
        dead.push({ key: message.key?.toString() ?? null, value: message.value, headers });
      },
    });
    await vi.waitFor(() => expect(dead.length).toBeGreaterThanOrEqual(count), { timeout: 60_000 });
  } finally {
    await consumer.disconnect();
  }
  return dead;
}

describe('catalog poison and tombstones on the real broker', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const kafka = testKafka(brokers);
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService(env);
  });
  afterAll(() => svc?.stop());

  const listAll = (key: string) => svc.call(`/api/1.2/rest/${USER}/${key}/list.all.json`);

  it('a record with props nested 20,000 deep is dead-lettered alone; a later key change still applies', async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const deep = `{"type":"template","template_id":"deep","account_id":"acc","content":"x","props":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
    try {
      // One key, so all of them are on one partition, in this order.
      const json = (v: unknown) => JSON.stringify(v);
      await producer.send({
        topic: env.KAFKA_CATALOG_TOPIC,
        acks: -1,
        messages: [
          { key: 'c', value: json({ type: 'user', user_id: USER, api_key_sha256: sha256(OLD_KEY) }) },
          { key: 'c', value: json({ type: 'list', list_id: LIST, name: 'poison' }) },
          { key: 'c', value: json({ type: 'list_access', user_id: USER, list_id: LIST, granted: true }) },
          { key: 'c', value: deep },
          { key: 'c', value: json({ type: 'user', user_id: USER, api_key_sha256: sha256(NEW_KEY) }) },
        ],
      });
    } finally {
      await producer.disconnect();
    }
    // The key written after the poison record replaced the old one.
    await vi.waitFor(async () => expect((await listAll(NEW_KEY)).status).toBe(200), {
      timeout: 60_000,
      interval: 300,
    });
    expect((await listAll(OLD_KEY)).status).toBe(403);
    const dead = await readDlq(kafka, env.KAFKA_DLQ_TOPIC, 1);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.headers['mailstats-reason']).toMatch(/^props: nested more than 32 deep/);
    expect(dead[0]!.value?.toString()).toBe(deep); // the original bytes
  }, 120_000);

  it('a tombstone is dead-lettered with a null value; an empty message with empty bytes', async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      await producer.send({
        topic: env.KAFKA_EVENTS_TOPIC,
        acks: -1,
        messages: [
          { key: 'tomb', value: null },
          { key: 'empty', value: '' },
        ],
      });
    } finally {
      await producer.disconnect();
    }
    const dead = await readDlq(kafka, env.KAFKA_DLQ_TOPIC, 3);
    const tomb = dead.find((d) => d.key === 'tomb');
    const empty = dead.find((d) => d.key === 'empty');
    expect(tomb).toBeDefined();
    expect(tomb!.value).toBeNull();
    expect(tomb!.headers['mailstats-reason']).toBe('tombstone (null value)');
    expect(tomb!.headers['mailstats-source-topic']).toBe(env.KAFKA_EVENTS_TOPIC);
    expect(empty!.value).not.toBeNull();
    expect(empty!.value!.length).toBe(0);
    expect(empty!.headers['mailstats-reason']).toBe('empty message');
  }, 120_000);
});
