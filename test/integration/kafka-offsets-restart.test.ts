// Modes: embedded and server
// docs/records.md "Counted once": a partition's offsets start again from 0 (here: the broker is replaced
// by a fresh one while DATA_DIR is kept, as `npm run kafka:start` does on every run). The offset ranges
// recorded for the old partitions must not wedge the new ones, nor make ClickHouse drop new records as
// repeats of old ranges.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { startKafkaBroker, type KafkaBroker } from '../../scripts/kafka/broker.mjs';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { spawnService, stopService, untilServing, type ChildService } from '../support/kafka-child.js';
import { activityStream, kafkaEnv, produce, STREAM_PERIOD, testKafka } from '../support/kafka.js';
import { tenant } from '../support/service.js';

describe('a broker replaced under a kept DATA_DIR', () => {
  let broker: KafkaBroker | undefined;
  let child: ChildService | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstats-offsets-'));
  afterAll(async () => {
    await stopService(child);
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function expectCounted(delivered: RawActivity[]) {
    for (const listId of [10, 11]) {
      const expected = expectedStats(delivered, {
        listId,
        tz: 'Europe/Bucharest',
        currency: 'RON',
        from: '2026-11-01',
        to: '2026-11-20',
      });
      await vi.waitFor(
        async () => {
          const res = await fetch(
            `${child!.base}/api/1.2/rest/6/o/automation.stats.json?list_id=${listId}${STREAM_PERIOD}`,
          );
          expect(await res.json()).toEqual(expected);
        },
        { timeout: 120_000, interval: 1000 },
      );
    }
  }

  // Needs brokers of its own (local jars), as the shared broker must not be replaced.
  it.runIf(inject('kafkaBrokerSource') === 'local')(
    'counts the new records whose offsets fall in recorded ranges: none dropped, no partition wedged',
    async () => {
      broker = await startKafkaBroker({ timeoutMs: 180_000 });
      const env = { ...kafkaEnv(broker.brokers), KAFKA_BATCH_MAX_RECORDS: '300' };
      child = await spawnService(env, dataDir);
      await untilServing(child);
      let kafka = testKafka(broker.brokers);
      await produce(
        kafka,
        env.KAFKA_CATALOG_TOPIC,
        tenant({ userId: 6, apiKey: 'o', lists: [{ list_id: 10 }, { list_id: 11 }] }),
        () => 'c',
      );
      const before = activityStream(1500, 61);
      await produce(kafka, env.KAFKA_EVENTS_TOPIC, before.wire);
      await expectCounted(before.model);
      await stopService(child);

      // A fresh broker: same topic names, offsets from 0 again, no committed group offsets.
      await broker.stop();
      broker = await startKafkaBroker({ timeoutMs: 180_000 });
      const env2 = { ...env, KAFKA_BROKERS: broker.brokers };
      child = await spawnService(env2, dataDir);
      await untilServing(child);
      kafka = testKafka(broker.brokers);
      // First, on list 10's partition only, fewer records than its recorded range holds (today:
      // "fetch ended before the pending range", retried forever). Then more on both partitions: on
      // list 11's, still behind its old range, today the range is re-formed with its old token and
      // ClickHouse drops the new records as a repeat.
      const stream = activityStream(80, 62);
      const few = {
        wire: stream.wire.filter((r) => r.list_id === 10),
        model: stream.model.filter((r) => r.list_id === 10),
      };
      await produce(kafka, env.KAFKA_EVENTS_TOPIC, few.wire);
      await expectCounted([...before.model, ...few.model]);
      const more = activityStream(3000, 63);
      await produce(kafka, env.KAFKA_EVENTS_TOPIC, more.wire);
      await expectCounted([...before.model, ...few.model, ...more.model]);
    },
    420_000,
  );
});
