import type { Kafka } from 'kafkajs';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { KafkaProgress } from '../../shared/clickhouse/kafka-progress.js';
import type { Pipeline } from '../../ingest/pipeline.js';
import { wrapKafkajs } from '../../ingest/kafka/kafkajs.js';
import { IngestWorker } from '../../ingest/kafka/worker.js';

/**
 * kafkajs stands in here, through the seam's kafkajs adapter (what is tested is the worker's answer to
 * its crash event, as the adapter passes it on). The event's
 * behaviour, from kafkajs' consumer: after a crash it disconnects the consumer, then emits CRASH with
 * `restart` = whether it will start the consumer again itself — false for errors it deems not retriable,
 * e.g. KafkaJSGroupCoordinatorNotFound when the broker restarts during a group join (seen on the real
 * broker in kafka-broker-restart.test.ts: the service then read nothing more, ever).
 */
function fakeKafka() {
  const listeners = new Map<string, ((e: unknown) => void)[]>();
  const calls = { connect: 0, subscribe: 0, run: 0, disconnect: 0 };
  const events = { CRASH: 'crash', GROUP_JOIN: 'join', STOP: 'stop', DISCONNECT: 'disconnect' };
  const consumer = {
    events,
    on: (name: string, fn: (e: unknown) => void) => listeners.set(name, [...(listeners.get(name) ?? []), fn]),
    connect: async () => void calls.connect++,
    subscribe: async () => void calls.subscribe++,
    run: async () => void calls.run++,
    disconnect: async () => void calls.disconnect++,
  };
  const producer = { connect: async () => {}, disconnect: async () => {} };
  const kafka = { consumer: () => consumer, producer: () => producer } as unknown as Kafka;
  const crash = (restart: boolean) =>
    (listeners.get(events.CRASH) ?? []).forEach((fn) =>
      fn({ payload: { error: new Error('Failed to find group coordinator'), restart } }),
    );
  return { kafka, calls, crash };
}

const worker = (kafka: Kafka) =>
  new IngestWorker(
    wrapKafkajs(kafka),
    {} as Pipeline,
    {} as KafkaProgress,
    {
      groupId: 'g',
      topics: { events: 'e', catalog: 'c', dlq: 'd' },
      maxBatchRecords: 10,
      maxBatchMs: 10,
      sessionTimeoutMs: 6_000,
    },
    pino({ level: 'silent' }),
  );

/** A worker started on a fake kafkajs. */
async function started() {
  const { kafka, calls, crash } = fakeKafka();
  const w = worker(kafka);
  await w.start();
  return { w, calls, crash };
}
/** Time for a restart the worker would (wrongly) begin to show in the calls. */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('IngestWorker after a kafkajs crash', () => {
  it('starts the consumer again when kafkajs will not (a crash it deems not retriable)', async () => {
    const { w, calls, crash } = await started();
    expect(calls.run).toBe(1);
    crash(false);
    await vi.waitFor(() => expect(calls.run).toBe(2));
    expect(calls.subscribe).toBe(2);
    await w.stop();
  });

  it('leaves the restart to kafkajs when it restarts the consumer itself', async () => {
    const { w, calls, crash } = await started();
    crash(true);
    await settle();
    expect(calls.run).toBe(1);
    await w.stop();
  });

  it('does not start again once stopped', async () => {
    const { w, calls, crash } = await started();
    await w.stop();
    crash(false);
    await settle();
    expect(calls.run).toBe(1);
  });
});
