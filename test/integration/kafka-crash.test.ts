// Modes: embedded and server
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { freePort } from '../../scripts/kafka/broker.mjs';
import { expectedStats } from '../support/expected-stats.js';
import { activityStream, kafkaEnv, produce, STREAM_PERIOD, testKafka } from '../support/kafka.js';
import { serverEnv, tenant } from '../support/service.js';

describe('a worker killed with SIGKILL mid-stream', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstats-crash-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing and counts nothing twice after repeated kills and restarts', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const start = () => {
      child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
        env: {
          ...process.env,
          ...env,
          // In the server project: a database of its own, the same at every restart.
          ...serverEnv(dataDir),
          DATA_DIR: dataDir,
          PORT: String(port),
          SEED_DEMO: 'false',
          LOG_LEVEL: 'warn',
          INGEST_TOKEN: 'crash-test-token-0123456789abcdef',
          // Small batches: many commits, so kills land between and inside batches.
          KAFKA_BATCH_MAX_RECORDS: '250',
        },
        stdio: 'ignore',
      });
      return vi.waitFor(
        async () => {
          expect(child!.exitCode).toBeNull();
          expect((await fetch(`${base}/health`)).status).toBe(200);
        },
        // A start (tsx, the engine, migrations) can take a minute on a loaded 2-core machine.
        { timeout: 180_000, interval: 200 },
      );
    };
    const kafka = testKafka(brokers);
    await produce(
      kafka,
      env.KAFKA_CATALOG_TOPIC!,
      tenant({ userId: 5, apiKey: 'k', lists: [{ list_id: 10 }, { list_id: 11 }] }),
      () => 'c',
    );
    const { wire, model } = activityStream(12_000, 99);

    let kills = 0;
    for (let part = 0; part < 4; part++) {
      await produce(kafka, env.KAFKA_EVENTS_TOPIC!, wire.slice(part * 3000, (part + 1) * 3000));
      await start();
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 1200));
      if (part < 3) {
        child!.kill('SIGKILL');
        await new Promise((r) => child!.once('exit', r));
        kills++;
      }
    }
    expect(kills).toBe(3);

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
          const res = await fetch(
            `${base}/api/1.2/rest/5/k/automation.stats.json?list_id=${listId}${STREAM_PERIOD}`,
          );
          expect(await res.json()).toEqual(expected);
        },
        { timeout: 90_000, interval: 1000 },
      );
    }
    child!.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  }, 600_000);
});
