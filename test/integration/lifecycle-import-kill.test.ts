// Modes: embedded and server
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import { activityStream, STREAM_LISTS, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import { spawnService, stopService, untilServing, type ChildService } from '../support/kafka-child.js';
import { tenant } from '../support/service.js';

const ADMIN = 'kill-admin-token-0123456789-abcdef0123456789';
const USER = 8;
const KEY = 'kill-key';
const LISTS = STREAM_LISTS;

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
    const first = await adminCli(['import', '--chunk-records', '3000', file], env, {
      onSpawn: () => {
        const poll = setInterval(() => {
          if (existsSync(checkpoint)) {
            clearInterval(poll);
            victim.proc.kill('SIGKILL');
          }
        }, 5);
      },
    });
    await victim.exited;
    expect(first.code).toBe(1);
    expect(first.err).toMatch(/the import did not finish: .*`import --resume .*stream\.ndjson` goes on/);
    expect(existsSync(checkpoint)).toBe(true);

    service = await spawnService({ ADMIN_TOKEN: ADMIN, KAFKA_BROKERS: '' }, dataDir, Number(port));
    await untilServing(service);
    const resumed = await adminCli(['import', '--resume', '--chunk-records', '3000', file], env);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(/resuming after line \d+/);
    for (const list of LISTS) {
      const res = await fetch(
        `${service.base}/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list.list_id}${STREAM_PERIOD}`,
      );
      expect(await res.json()).toEqual(streamStats(model, list));
    }
  }, 600_000);
});
