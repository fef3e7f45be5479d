// Modes: embedded and server
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Admin } from 'kafkajs';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { spawnService, type ChildService } from '../support/kafka-child.js';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';
import { sha256 } from '../support/service.js';
import { rng } from '../support/rng.js';

/**
 * docs/records.md "Counted once" as a property: for a seed, a stream over several partitions (resent
 * duplicates in the same write and in later ones, poison messages, activity of a list that arrives before
 * its `list` record, and a list whose time zone changes while records arrive, over a month's end so that
 * a new zone moves records into another month), consumed by a service SIGKILLed at random instants
 * (during start-up, in the middle of writes and group commits, inside re-datings) and started again;
 * after the last start every list's answer, day by day, equals an independent model in the list's final
 * zone. Half the stream is in the last ten days, whose sets a write's day recompute reads from
 * recent_sets (ARCHITECTURE.md, "Storage"). A failure names its seed: KILL_SEED=<seed> KILL_RUNS=1
 * repeats it (on the same day: the recent half is dated from the run's clock).
 *
 * Sized by the environment (CI runs the defaults, a few minutes; `npm run test:kill` runs more):
 * KILL_SEED (first seed; default: from the clock), KILL_RUNS (seeds, 1), KILL_RECORDS (records a seed, 6000),
 * KILL_KILLS (kills a seed, 4).
 *
 * Each restart also reports when its first offset commit came, counted from the process's start (after a
 * SIGKILL the group keeps the dead member until its session times out: KAFKA_SESSION_TIMEOUT_MS, left at
 * its default here).
 */
const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};
const FIRST_SEED = num('KILL_SEED', Date.now() % 1_000_000);
const RUNS = num('KILL_RUNS', 1);
const RECORDS = num('KILL_RECORDS', 6000);
const KILLS = num('KILL_KILLS', 4);

const USER = 8;
const KEY = 'property-key';
const FROM = '2026-09-20';
/** Two days past today: the recent records' local dates in zones ahead of UTC. */
const TO = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
const DAY_MS = 86_400_000;
/** The lists and their `list` records, in the order they are produced (undefined: none yet). */
const EARLY: Record<number, string | undefined> = {
  80: 'Asia/Tokyo',
  81: 'America/New_York',
  82: undefined, // activity first, dated in DEFAULT_TIMEZONE; its `list` record comes mid-stream
  83: 'UTC',
  84: 'Pacific/Auckland',
  85: 'Asia/Tokyo', // re-dated mid-stream: America/Los_Angeles
};
const LATE: Record<number, string> = { 82: 'Asia/Kolkata', 85: 'America/Los_Angeles' };
const finalZone = (list: number) => LATE[list] ?? EARLY[list] ?? 'Europe/Bucharest';
const REDATING = /"msg":"re-dating a list"/;

function stream(n: number, seed: number) {
  const rnd = rng(seed);
  const types = ['send', 'open', 'click', 'purchase', 'event', 'condition', 'bounce'];
  const lists = Object.keys(EARLY).map(Number);
  const start = Date.parse('2026-09-25T00:00:00Z');
  // The last 10 days up to now: a write's recompute reads their sets from recent_sets (kept 7 days, read
  // for 6), the older ones' from daily_sets; some days fall on either side of that edge.
  const recent = Date.now() - 10 * DAY_MS;
  const wire: unknown[] = [];
  const model: RawActivity[] = [];
  const later: { at: number; w: Record<string, unknown> }[] = [];
  for (let i = 0; i < n; i++) {
    const type = types[Math.floor(rnd() * types.length)]!;
    const r: RawActivity = {
      type,
      event_id: `p${seed}-${i}`,
      list_id: lists[Math.floor(rnd() * lists.length)]!,
      workflow_id: 1 + Math.floor(rnd() * 3),
      subscriber_id: 1 + Math.floor(rnd() * 300),
      // Half in eleven days around the end of September (zones put the same instant in different
      // months), half in the last ten days.
      at: rnd() < 0.5 ? start + Math.floor(rnd() * 11 * DAY_MS) : recent + Math.floor(rnd() * 10 * DAY_MS),
    };
    const w: Record<string, unknown> = { ...r, timestamp: r.at };
    delete w.at;
    if (type === 'purchase') {
      r.value_ron = (Math.floor(rnd() * 10_000) / 100).toFixed(2);
      r.value_eur = '0.5';
      Object.assign(w, { order_id: `o${i}`, value_ron: r.value_ron, value_eur: r.value_eur });
    }
    if (type === 'event' || type === 'condition') r.status = w.status = rnd() < 0.8 ? 'ok' : 'failed';
    wire.push(w);
    model.push(r);
    // Resent by a producer: at once (likely the same write), or some records later (another write).
    if (rnd() < 0.03) wire.push({ ...w });
    if (rnd() < 0.03) later.push({ at: i + 50 + Math.floor(rnd() * 1500), w: { ...w } });
    for (let j = later.length - 1; j >= 0; j--) if (later[j]!.at <= i) wire.push(later.splice(j, 1)[0]!.w);
    if (rnd() < 0.005) wire.push(rnd() < 0.5 ? '{"not": json' : { type: 'open', list_id: 'x' });
  }
  wire.push(...later.map((l) => l.w));
  return { wire, model };
}

describe('counted once under SIGKILLs at random instants (a seeded property)', () => {
  const brokers = inject('kafkaBrokers');
  const dirs: string[] = [];
  let child: ChildService | undefined;
  let admin: Admin | undefined;
  afterAll(async () => {
    child?.proc.kill('SIGKILL');
    await admin?.disconnect();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const seeds = Array.from({ length: RUNS }, (_, i) => FIRST_SEED + i);
  it.each(seeds)(
    'seed %i: every record counted once, on its date in its list’s final zone',
    async (seed) => {
      console.log(
        `kill property: seed ${seed} (${RECORDS} records, ${KILLS} kills); KILL_SEED=${seed} KILL_RUNS=1 repeats it`,
      );
      try {
        await property(seed);
      } catch (err) {
        throw new Error(
          `seed ${seed} (KILL_SEED=${seed} KILL_RUNS=1 KILL_RECORDS=${RECORDS} KILL_KILLS=${KILLS}): ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      }
    },
    // Per seed: starts of a minute each on a loaded machine, the answers' wait, and the kills.
    300_000 + KILLS * 120_000 + RECORDS * 20,
  );

  async function property(seed: number) {
    const rnd = rng(seed * 7919 + 1);
    const dataDir = mkdtempSync(join(tmpdir(), 'mailstats-property-'));
    dirs.push(dataDir);
    const env: Record<string, string> = {
      ...kafkaEnv(brokers),
      KAFKA_PARTITIONS: '4',
      // Small writes, so that kills land between and inside many of them, and groups form.
      KAFKA_BATCH_MAX_RECORDS: String(100 + Math.floor(rnd() * 400)),
      LOG_LEVEL: 'info',
    };
    // The default session timeout: the recovery time reported is the one an operator gets
    // (KILL_SESSION_TIMEOUT_MS sets another, to compare).
    delete env.KAFKA_SESSION_TIMEOUT_MS;
    if (process.env.KILL_SESSION_TIMEOUT_MS)
      env.KAFKA_SESSION_TIMEOUT_MS = process.env.KILL_SESSION_TIMEOUT_MS;
    const kafka = testKafka(brokers);
    admin ??= kafka.admin();
    await admin.connect();
    const topics = [env.KAFKA_EVENTS_TOPIC!, env.KAFKA_CATALOG_TOPIC!];

    const lists = Object.keys(EARLY).map(Number);
    await produce(kafka, env.KAFKA_CATALOG_TOPIC!, [
      { type: 'user', user_id: USER, api_key_sha256: sha256(KEY) },
      ...lists.map((l) => ({ type: 'list_access', user_id: USER, list_id: l, granted: true })),
      ...lists.flatMap((l) =>
        EARLY[l]
          ? [{ type: 'list', list_id: l, name: `l${l}`, timezone: EARLY[l], currency: 'RON', version: 1 }]
          : [],
      ),
    ]);
    const { wire, model } = stream(RECORDS, seed);
    const parts = KILLS + 1;
    const part = (i: number) =>
      wire.slice(Math.floor((i * wire.length) / parts), Math.floor(((i + 1) * wire.length) / parts));
    const lateAt = Math.floor(KILLS / 2);

    /** The group's committed offsets, as one string (retried while the coordinator moves or loads). */
    const committed = async (): Promise<string> => {
      for (let attempt = 1; ; attempt++) {
        try {
          const offsets = await admin!.fetchOffsets({ groupId: env.KAFKA_GROUP_ID!, topics });
          return offsets
            .flatMap((t) => t.partitions.map((p) => `${t.topic}:${p.partition}:${p.offset}`))
            .join(',');
        } catch (err) {
          if (attempt >= 50) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    const firstCommits: number[] = [];
    const kills: string[] = [];

    /** Start the service; watch for its first commit; SIGKILL it as `how` says (or never). */
    const run = async (how: 'start-up' | 'after-commit' | 'redating' | 'random' | undefined) => {
      const before = await committed();
      const started = Date.now();
      const c = await spawnService(env, dataDir);
      child = c;
      let killedBy = '';
      const kill = (why: string) => {
        if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
        killedBy = why;
        c.proc.kill('SIGKILL');
      };
      createInterface({ input: c.proc.stdout! }).on('line', (line) => {
        if (how === 'redating' && REDATING.test(line)) {
          const delay = Math.floor(rnd() * 300);
          setTimeout(() => kill(`${delay} ms into a re-dating`), delay);
        }
      });
      let firstCommit: number | undefined;
      let serving: number | undefined;
      const watching = (async () => {
        while (c.proc.exitCode === null && c.proc.signalCode === null) {
          if (serving === undefined) {
            const res = await fetch(`${c.base}/health`).catch(() => undefined);
            // Serving once no start-up step is named (docs/operations.md "Start-up").
            const body = res?.status === 200 ? ((await res.json()) as { starting?: string }) : undefined;
            if (body && body.starting === undefined) serving = Date.now() - started;
          }
          if (firstCommit === undefined && (await committed().catch(() => before)) !== before) {
            firstCommit = Date.now() - started;
            firstCommits.push(firstCommit);
            if (how === 'after-commit') {
              const delay = Math.floor(rnd() * 1500);
              setTimeout(() => kill(`${delay} ms after the first commit`), delay);
            }
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      if (how === 'start-up') setTimeout(() => kill('during start-up'), Math.floor(rnd() * 4000));
      if (how === 'random') {
        const delay = 3000 + Math.floor(rnd() * 12_000);
        setTimeout(() => kill(`${delay} ms after the start`), delay);
      }
      // Whatever the trigger, a run ends within its limit (a kill at an instant no trigger chose).
      if (how) setTimeout(() => kill('at the time limit'), 60_000);
      return {
        child: c,
        ended: (async () => {
          await c.exited;
          await watching;
          const ms = (v: number | undefined) => (v === undefined ? 'none' : `${v} ms`);
          return `${killedBy || 'exited'}; serving ${ms(serving)}, first commit ${ms(firstCommit)} after the start`;
        })(),
      };
    };

    const hows = ['after-commit', 'redating', 'random', 'start-up'] as const;
    for (let i = 0; i < KILLS; i++) {
      await produce(kafka, env.KAFKA_EVENTS_TOPIC!, part(i));
      if (i === lateAt)
        await produce(
          kafka,
          env.KAFKA_CATALOG_TOPIC!,
          Object.entries(LATE).map(([l, tz]) => ({
            type: 'list',
            list_id: Number(l),
            name: `l${l}`,
            timezone: tz,
            currency: 'RON',
            version: 2,
          })),
        );
      // Mostly mid-stream; a start-up kill now and then (KILL_HOW=<one of them> for that one alone).
      const forced = hows.find((h) => h === process.env.KILL_HOW);
      const how = forced ?? (rnd() < 0.15 ? 'start-up' : hows[Math.floor(rnd() * 3)]!);
      kills.push(`${how}: ${await (await run(how)).ended}`);
      console.log(`kill property seed ${seed}: run ${i + 1}: ${kills.at(-1)}`);
    }
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, part(KILLS));
    const last = await run(undefined);
    try {
      for (const list of lists) {
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
            expect(last.child.proc.exitCode).toBeNull();
            const res = await fetch(
              `${last.child.base}/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list}&start_date=${FROM}&stop_date=${TO}`,
            );
            expect({ list, days: await res.json() }).toEqual({ list, days: expected });
          },
          { timeout: 180_000, interval: 1000 },
        );
      }
    } finally {
      console.log(`kill property seed ${seed}: ${kills.join(' | ')}`);
      console.log(`kill property seed ${seed}: first commits after a start (ms): ${firstCommits.join(', ')}`);
      last.child.proc.kill('SIGTERM');
      await last.ended;
    }
  }
});
