// Modes: embedded only — needs the demo tenant, which is seeded only embedded
// docs/records.md "Ingest over HTTP" and "The demo tenant", with KAFKA_BROKERS: any body within the
// 10 MiB limit is accepted whole (split into producer batches the broker accepts), and the first start
// loads the demo through Kafka.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { DEMO } from '../../ingest/demo-seed.js';
import { expectedStats } from '../support/expected-stats.js';
import { spawnService, stopService, untilServing, type ChildService } from '../support/kafka-child.js';
import { activityStream, kafkaEnv, STREAM_PERIOD } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

const brokers = inject('kafkaBrokers');

describe('POST /ingest in Kafka mode', () => {
  let svc: TestService | undefined;
  afterAll(() => svc?.stop());

  it('accepts a body of 75,000 records (under 10 MiB) whole and counts every record', async () => {
    svc = await startTestService(kafkaEnv(brokers));
    const { wire, model } = activityStream(75_000, 71);
    const catalog = tenant({ userId: 7, apiKey: 'big', lists: [{ list_id: 10 }, { list_id: 11 }] });
    const tenantBody = catalog.map((r) => JSON.stringify(r)).join('\n');
    const body = [...catalog, ...wire].map((r) => JSON.stringify(r)).join('\n');
    expect(Buffer.byteLength(body)).toBeGreaterThan(8 * 1024 * 1024);
    expect(Buffer.byteLength(body)).toBeLessThan(10 * 1024 * 1024);

    // The producer connects beside the API: until it is ready POST /ingest answers 503.
    await vi.waitFor(async () => expect((await svc!.ingest(tenantBody)).status).toBe(200), {
      timeout: 60_000,
      interval: 200,
    });
    const res = await svc.ingest(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ accepted: 75_005, rejected: [] });

    for (const listId of [10, 11]) {
      const expected = expectedStats(model, {
        listId,
        tz: 'Europe/Bucharest',
        currency: 'RON',
        from: '2026-11-01',
        to: '2026-11-20',
      });
      await vi.waitFor(
        async () => {
          const stats = await svc!.call(
            `/api/1.2/rest/7/big/automation.stats.json?list_id=${listId}${STREAM_PERIOD}`,
          );
          expect(stats.body).toEqual(expected);
        },
        { timeout: 180_000, interval: 1000 },
      );
    }
  }, 300_000);
});

describe('the first start with KAFKA_BROKERS and an empty store', () => {
  const dirs = [
    mkdtempSync(join(tmpdir(), 'mailstats-demo-k-')),
    mkdtempSync(join(tmpdir(), 'mailstats-demo-e-')),
  ];
  const children: ChildService[] = [];
  afterAll(async () => {
    for (const c of children) await stopService(c);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('loads the demo through Kafka, counted as in the embedded mode', async () => {
    const kafka = await spawnService({ ...kafkaEnv(brokers), SEED_DEMO: 'true' }, dirs[0]!);
    const embedded = await spawnService({ SEED_DEMO: 'true' }, dirs[1]!);
    children.push(kafka, embedded);
    await untilServing(embedded, 240_000);
    await untilServing(kafka, 240_000);

    const stats = async (c: ChildService, listId: number) => {
      const res = await fetch(
        `${c.base}/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/automation.stats.json?list_id=${listId}&days=${DEMO.days}`,
      );
      return { status: res.status, body: (await res.json()) as unknown };
    };
    for (const { list_id } of DEMO.lists) {
      await vi.waitFor(
        async () => {
          expect(kafka.proc.exitCode, kafka.output()).toBeNull();
          // Both asked in the same poll: the period counts back from today in the list's zone, and a
          // local midnight during the wait moved it (a CI run at 22:00 UTC, midnight in Bucharest).
          const want = await stats(embedded, list_id);
          expect(want.status).toBe(200);
          // The demo has activity on every list: an empty answer would prove nothing.
          expect(JSON.stringify(want.body)).toMatch(/[1-9]/);
          expect(await stats(kafka, list_id)).toEqual(want);
        },
        { timeout: 240_000, interval: 2000 },
      );
    }
  }, 600_000);
});
