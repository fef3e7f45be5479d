import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectedStats } from '../support/expected-stats.js';
import { activityStream, STREAM_PERIOD } from '../support/kafka.js';
import { spawnService, stopService, untilServing, type ChildService } from '../support/kafka-child.js';
import { tenant } from '../support/service.js';

const root = resolve(import.meta.dirname, '../..');
const ADMIN = 'kill-admin-token-0123456789-abcdef0123456789';
const USER = 8;
const KEY = 'kill-key';
const LISTS = [
  { list_id: 10, timezone: 'Europe/Bucharest' },
  { list_id: 11, timezone: 'America/New_York' },
];

function admin(args: string[], env: Record<string, string>, onSpawn?: () => void) {
  return new Promise<{ code: number | null; out: string; err: string }>((ok) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'admin/cli.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    onSpawn?.();
    child.on('exit', (code) => ok({ code, out, err }));
  });
}

// Embedded mode (KAFKA_BROKERS cleared): accepted means stored and visible when the chunk is acknowledged.
/** The service killed (SIGKILL) in the middle of an import: --resume after its restart, 0 lost, 0 double. */
describe('import across a killed service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-import-kill-'));
  const dataDir = join(dir, 'data');
  let service: ChildService | undefined;
  afterAll(async () => {
    await stopService(service);
    rmSync(dir, { recursive: true, force: true });
  });

  it('goes on from its checkpoint after the service restarts', async () => {
    service = await spawnService({ ADMIN_TOKEN: ADMIN, KAFKA_BROKERS: '' }, dataDir);
    await untilServing(service);
    const port = new URL(service.base).port;
    const { wire, model } = activityStream(60_000, 61);
    const file = join(dir, 'stream.ndjson');
    writeFileSync(
      file,
      [...tenant({ userId: USER, apiKey: KEY, lists: LISTS }), ...wire]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const env = { MAILSTATS_URL: service.base, ADMIN_TOKEN: ADMIN };
    const checkpoint = `${file}.import-checkpoint`;
    const victim = service;
    const first = await admin(['import', '--chunk-records', '3000', file], env, () => {
      const poll = setInterval(() => {
        if (existsSync(checkpoint)) {
          clearInterval(poll);
          victim.proc.kill('SIGKILL');
        }
      }, 5);
    });
    await victim.exited;
    expect(first.code).toBe(1);
    expect(first.err).toMatch(/the import did not finish: .*`import --resume .*stream\.ndjson` goes on/);
    expect(existsSync(checkpoint)).toBe(true);

    service = await spawnService({ ADMIN_TOKEN: ADMIN, KAFKA_BROKERS: '' }, dataDir, Number(port));
    await untilServing(service);
    const resumed = await admin(['import', '--resume', '--chunk-records', '3000', file], env);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(/resuming after line \d+/);
    for (const list of LISTS) {
      const res = await fetch(
        `${service.base}/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list.list_id}${STREAM_PERIOD}`,
      );
      const q = {
        listId: list.list_id,
        tz: list.timezone,
        currency: 'RON',
        from: '2026-11-01',
        to: '2026-11-20',
      };
      expect(await res.json()).toEqual(expectedStats(model, q));
    }
  }, 600_000);
});
