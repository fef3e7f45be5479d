// Modes: embedded and server
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { freePort } from '../../scripts/kafka/broker.mjs';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';
import { serverEnv, sha256 } from '../support/service.js';
import { rng } from '../support/rng.js';

/**
 * docs/records.md "Counted once" and "Dating" under many kills: a worker process SIGKILLed ≥ 10 times at
 * random points — after a random number of stored batches, or 0–200 ms into the re-dating of a list —
 * while it consumes a stream in which the activity of every list is stored before its `list` record
 * arrives (one list changes its zone twice). After the last restart every list's answer equals an
 * independent model in the list's final time zone.
 */
const USER = 4;
const KEY = 'kills-key';
/** list → the `list` records it gets, in order (no timezone: DEFAULT_TIMEZONE, Bucharest). */
const LISTS: Record<number, { timezone?: string; version?: number }[]> = {
  40: [{ timezone: 'America/New_York' }],
  41: [{ timezone: 'Asia/Tokyo' }],
  42: [{}], // a late list record that keeps DEFAULT_TIMEZONE
  43: [{ timezone: 'Pacific/Auckland' }],
  44: [
    { timezone: 'America/Los_Angeles', version: 1 },
    { timezone: 'Asia/Kolkata', version: 2 },
  ],
  45: [{ timezone: 'UTC' }],
};
const finalZone = (list: number) => LISTS[list]!.at(-1)?.timezone ?? 'Europe/Bucharest';
const FROM = '2026-11-01';
const REDATING_STARTS = /"msg":"(re-dating a list|list time zone changed: rebuilding its aggregates)"/;
const TO = '2026-11-20';

function stream(n: number, seed: number) {
  const rnd = rng(seed);
  const types = ['send', 'open', 'click', 'purchase', 'event', 'condition'];
  const lists = Object.keys(LISTS).map(Number);
  const end = Date.parse('2026-11-15T00:00:00Z');
  const wire: Record<string, unknown>[] = [];
  const model: RawActivity[] = [];
  for (let i = 0; i < n; i++) {
    const type = types[Math.floor(rnd() * types.length)]!;
    const r: RawActivity = {
      type,
      event_id: `k${seed}-${i}`,
      list_id: lists[Math.floor(rnd() * lists.length)]!,
      workflow_id: 1 + Math.floor(rnd() * 3),
      subscriber_id: 1 + Math.floor(rnd() * 200),
      at: end - Math.floor(rnd() * 8 * 86_400_000),
    };
    const w: Record<string, unknown> = { ...r, timestamp: r.at };
    delete w.at;
    if (type === 'purchase') {
      r.value_ron = (Math.floor(rnd() * 10_000) / 100).toFixed(2);
      r.value_eur = '1.5';
      Object.assign(w, { order_id: `o${i}`, value_ron: r.value_ron, value_eur: r.value_eur });
    }
    if (type === 'event' || type === 'condition') r.status = w.status = rnd() < 0.8 ? 'ok' : 'failed';
    // Some duplicates, as a resending producer makes them: the first delivery counts.
    wire.push(w);
    model.push(r);
    if (rnd() < 0.03) wire.push({ ...w });
  }
  return { wire, model };
}

describe('a worker SIGKILLed again and again while lists get their time zones late', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstats-kills-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts every record once, on its date in its list’s final zone', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const rnd = rng(Date.now() % 100_000);
    const kafka = testKafka(brokers);

    // Access first; then the stream in four parts, each followed by some lists' `list` records.
    const { wire, model } = stream(4000, 7);
    await produce(kafka, env.KAFKA_CATALOG_TOPIC!, [
      { type: 'user', user_id: USER, api_key_sha256: sha256(KEY) },
      ...Object.keys(LISTS).map((l) => ({
        type: 'list_access',
        user_id: USER,
        list_id: Number(l),
        granted: true,
      })),
    ]);
    const late = Object.entries(LISTS).flatMap(([list, recs]) =>
      recs.map((r) => ({ type: 'list', list_id: Number(list), name: `list ${list}`, currency: 'RON', ...r })),
    );
    // All activity first; the `list` records come part by part between the runs below, once some of
    // their lists' activity is stored, so that they re-date stored rows (not a list seen first).
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, wire);
    const produceLate = (part: number) =>
      produce(
        kafka,
        env.KAFKA_CATALOG_TOPIC!,
        late.filter((_, i) => i % 4 === part),
        (v) => String((v as { list_id: number }).list_id),
      );

    /** Start the service; resolves with the exit once it has been killed by `trigger`. */
    const run = (trigger: { batches: number; redatingDelayMs?: number } | undefined) =>
      new Promise<string>((resolve) => {
        child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
          env: {
            ...process.env,
            ...env,
            // In the server project: a database of its own, the same at every restart.
            ...serverEnv(dataDir),
            DATA_DIR: dataDir,
            PORT: String(port),
            SEED_DEMO: 'false',
            LOG_LEVEL: 'debug',
            INGEST_TOKEN: 'kills-test-token-0123456789abcdef',
            KAFKA_BATCH_MAX_RECORDS: '100',
          },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        const c = child;
        const started = Date.now();
        let batches = 0;
        let why = 'no trigger';
        const kill = (reason: string) => {
          if (c.exitCode !== null || c.signalCode !== null) return;
          why = reason;
          c.kill('SIGKILL');
        };
        createInterface({ input: c.stdout! }).on('line', (line) => {
          if (!trigger) return;
          // The line a write logs once its batches are stored ("activity stored" since writes are
          // grouped; before that the trigger matched nothing and every such run died at the time limit).
          if (line.includes('"activity stored"') && ++batches >= trigger.batches)
            kill(`after ${batches} batches`);
          // The line a worker logs as a list's re-dating starts (this version's, and the wording of
          // the version before it, so the test keeps catching that version's fault).
          if (trigger.redatingDelayMs !== undefined && REDATING_STARTS.test(line)) {
            const delay = trigger.redatingDelayMs;
            setTimeout(() => kill(`${delay} ms into a re-dating`), delay);
          }
        });
        // A start that stores nothing within the time limit is killed anyway (a kill during start-up).
        const timer = trigger && setTimeout(() => kill('at the time limit'), 45_000);
        c.once('exit', () => {
          clearTimeout(timer);
          console.log(`run ended after ${Date.now() - started} ms: ${why}`);
          resolve(why);
        });
      });

    const kills: string[] = [];
    for (let i = 0; i < 10; i++) {
      // Run 0 stores activity of the lists (no list record yet); runs 1–4 each get a part of the late
      // list records first and die inside the re-dating it starts; later runs die at random points.
      if (i >= 1 && i <= 4) await produceLate(i - 1);
      const trigger =
        i === 0
          ? { batches: 6 }
          : i <= 4
            ? { batches: 3 + Math.floor(rnd() * 4), redatingDelayMs: Math.floor(rnd() * 200) }
            : {
                batches: 1 + Math.floor(rnd() * 4),
                redatingDelayMs: rnd() < 0.6 ? Math.floor(rnd() * 200) : undefined,
              };
      kills.push(await run(trigger));
    }
    expect(kills).toHaveLength(10);
    // The fault this test is for: kills inside a list's re-dating did happen.
    expect(kills.filter((k) => k.includes('into a re-dating')).length, kills.join('; ')).toBeGreaterThan(0);
    // Most kills land mid-stream (after stored batches or inside a re-dating), not only at start-up.
    expect(kills.filter((k) => k !== 'at the time limit').length).toBeGreaterThanOrEqual(5);

    const final = run(undefined);
    for (const list of Object.keys(LISTS).map(Number)) {
      const expected = expectedStats(model, {
        listId: list,
        tz: finalZone(list),
        currency: 'RON',
        from: FROM,
        to: TO,
      });
      expect(expected.length).toBeGreaterThan(5);
      await vi.waitFor(
        async () => {
          const res = await fetch(
            `${base}/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list}&start_date=${FROM}&stop_date=${TO}`,
          );
          expect(await res.json()).toEqual(expected);
        },
        { timeout: 120_000, interval: 1000 },
      );
    }
    child!.kill('SIGTERM');
    await final;
    console.log(`kills: ${kills.join('; ')}`);
  }, 600_000);
});
