// Modes: embedded and server
// docs/operations.md "Start-up" and "Shutdown": the query API does not wait for the consumer group (nor
// for Kafka at all), POST /ingest answers 503 while no producer is ready, and SIGTERM stops the process
// within 10 s whatever does not answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { freePort, startKafkaBroker, type KafkaBroker } from '../../scripts/kafka/broker.mjs';
import { expectedStats } from '../support/expected-stats.js';
import {
  INGEST_TOKEN,
  spawnService,
  stopService,
  untilServing,
  type ChildService,
} from '../support/kafka-child.js';
import { activityStream, kafkaEnv, produce, STREAM_PERIOD, testKafka } from '../support/kafka.js';
import { tenant } from '../support/service.js';

const brokers = inject('kafkaBrokers');
const tmp = (name: string) => mkdtempSync(join(tmpdir(), `mailstats-${name}-`));

/** POST /ingest of an NDJSON body with the test token. */
const postIngest = (base: string, body: string) =>
  fetch(`${base}/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
    body,
  });
const ONE_RECORD = JSON.stringify({ type: 'user', user_id: 1, api_key_sha256: 'a'.repeat(64) });

/** The member ids of a consumer group, as the broker sees them. */
async function groupMembers(brokerList: string, groupId: string): Promise<string[]> {
  const admin = testKafka(brokerList).admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    return groups[0]?.members.map((m) => m.memberId) ?? [];
  } finally {
    await admin.disconnect();
  }
}

/** SIGTERM, then the exit code, or 'still running' when the process has not exited after `ms`. */
async function terminate(child: ChildService, ms: number): Promise<number | string> {
  child.proc.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    child.exited,
    new Promise<string>((ok) => (timer = setTimeout(() => ok('still running'), ms))),
  ]);
  clearTimeout(timer);
  return result;
}

describe('after a crash, the query API', () => {
  const dataDir = tmp('rejoin');
  let child: ChildService | undefined;
  afterAll(async () => {
    await stopService(child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers while the consumer group still waits for the dead member', async () => {
    // A long session: the dead member stays in the group for a minute after the kill, and a new
    // consumer cannot join before it is gone.
    const env = { ...kafkaEnv(brokers), KAFKA_SESSION_TIMEOUT_MS: '60000' };
    const kafka = testKafka(brokers);
    await produce(
      kafka,
      env.KAFKA_CATALOG_TOPIC,
      tenant({ userId: 9, apiKey: 'j', lists: [{ list_id: 10 }] }),
      () => 'c',
    );
    const { wire, model } = activityStream(500, 91);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC, wire);
    const expected = expectedStats(model, {
      listId: 10,
      tz: 'Europe/Bucharest',
      currency: 'RON',
      from: '2026-11-01',
      to: '2026-11-20',
    });
    const path = `/api/1.2/rest/9/j/automation.stats.json?list_id=10${STREAM_PERIOD}`;

    const port = await freePort();
    child = await spawnService(env, dataDir, port);
    await untilServing(child);
    await vi.waitFor(async () => expect(await (await fetch(child!.base + path)).json()).toEqual(expected), {
      timeout: 90_000,
      interval: 500,
    });
    const dead = await groupMembers(brokers, env.KAFKA_GROUP_ID);
    expect(dead).toHaveLength(1);

    child.proc.kill('SIGKILL');
    await child.exited;
    child = await spawnService(env, dataDir, port);
    await vi.waitFor(
      async () => {
        expect(child!.proc.exitCode, child!.output()).toBeNull();
        const res = await fetch(child!.base + path);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual(expected);
      },
      { timeout: 90_000, interval: 100 },
    );
    // The API answered while the killed member still holds its place: the new consumer has not
    // joined yet (it cannot, before that session expires), so the API did not wait for it.
    expect(await groupMembers(brokers, env.KAFKA_GROUP_ID)).toContain(dead[0]);
  }, 240_000);
});

describe('with no Kafka broker reachable', () => {
  const dataDir = tmp('nobroker');
  let child: ChildService | undefined;
  afterAll(async () => {
    await stopService(child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the API, answers POST /ingest with 503, and stops within 10 s on SIGTERM', async () => {
    const nobody = `127.0.0.1:${await freePort()}`;
    child = await spawnService(kafkaEnv(nobody), dataDir);
    await untilServing(child);
    const res = await postIngest(child.base, ONE_RECORD);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ err: true, code: 503, message: expect.stringMatching(/Kafka/) });
    expect(await terminate(child, 10_000)).toBe(0);
    // Producers are configured so that kafkajs' idempotence warning's condition does not hold.
    expect(child.output()).not.toMatch(/invalidate EoS/);
  }, 180_000);
});

describe('with the broker down at start', () => {
  let broker: KafkaBroker | undefined;
  const dataDir = tmp('late');
  let child: ChildService | undefined;
  afterAll(async () => {
    await stopService(child);
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Needs a broker of its own (local jars): it is down while the service starts, then comes up.
  it.runIf(inject('kafkaBrokerSource') === 'local')(
    'waits for Kafka beside the API, then produces and consumes once the broker comes up',
    async () => {
      broker = await startKafkaBroker({ timeoutMs: 180_000 });
      process.kill(broker.pid!, 'SIGKILL');
      const env = kafkaEnv(broker.brokers);
      child = await spawnService(env, dataDir);
      await untilServing(child);
      const ingest = (body: string) => postIngest(child!.base, body);
      const records = [
        ...tenant({ userId: 12, apiKey: 'late', lists: [{ list_id: 10 }] }),
        ...activityStream(200, 97).wire.filter((r) => r.list_id === 10),
      ];
      const body = records.map((r) => JSON.stringify(r)).join('\n');
      expect((await ingest(body)).status).toBe(503);

      await broker.restart(); // same ports
      await vi.waitFor(async () => expect((await ingest(body)).status).toBe(200), {
        timeout: 90_000,
        interval: 500,
      });
      // The consumer joined too: what was produced is counted.
      const model = activityStream(200, 97).model.filter((r) => r.list_id === 10);
      const expected = expectedStats(model, {
        listId: 10,
        tz: 'Europe/Bucharest',
        currency: 'RON',
        from: '2026-11-01',
        to: '2026-11-20',
      });
      const path = `/api/1.2/rest/12/late/automation.stats.json?list_id=10${STREAM_PERIOD}`;
      await vi.waitFor(async () => expect(await (await fetch(child!.base + path)).json()).toEqual(expected), {
        timeout: 90_000,
        interval: 500,
      });
    },
    300_000,
  );
});

describe.each(['killed', 'stopped'] as const)('with the broker %s mid-stream', (how) => {
  let broker: KafkaBroker | undefined;
  const dataDir = tmp('gone');
  let child: ChildService | undefined;
  afterAll(async () => {
    await stopService(child);
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.runIf(inject('kafkaBrokerSource') === 'local')(
    'SIGTERM stops the process within 10 s',
    async () => {
      broker = await startKafkaBroker({ timeoutMs: 180_000 });
      // Small writes: the worker is in the middle of a batch (write, commit, next) when the broker goes.
      const env = { ...kafkaEnv(broker.brokers), KAFKA_BATCH_MAX_RECORDS: '200' };
      await produce(testKafka(broker.brokers), env.KAFKA_EVENTS_TOPIC, activityStream(30_000, 95).wire);
      child = await spawnService(env, dataDir);
      await untilServing(child);
      await vi.waitFor(
        async () => expect(await groupMembers(broker!.brokers, env.KAFKA_GROUP_ID)).toHaveLength(1),
        { timeout: 90_000, interval: 500 },
      );
      await new Promise((r) => setTimeout(r, 1_000));
      if (how === 'killed') {
        // Gone at once (kill -9), as a crashed or unplugged broker is.
        process.kill(broker.pid!, 'SIGKILL');
        await new Promise((r) => setTimeout(r, 2_000));
      } else {
        // A controlled shutdown: the coordinator and leaders move away before the port closes.
        await broker.stop();
        broker = undefined;
      }
      // A client's POST /ingest waits for a Kafka that is gone while the signal comes.
      const inFlight = postIngest(child.base, ONE_RECORD).catch((err: Error) => err);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await terminate(child, 10_000), child.output()).toBe(0);
      await inFlight;
      expect(child.output()).not.toMatch(/invalidate EoS/);
    },
    300_000,
  );
});
