// Modes: embedded and server
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RawActivity } from '../support/expected-stats.js';
import { activityStream, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import {
  INGEST_TOKEN,
  spawnService,
  stopService,
  untilServing,
  type ChildService,
} from '../support/kafka-child.js';
import { tenant } from '../support/service.js';

const ADMIN = 'erase-kill-admin-token-0123-abcdef0123456789';
const USER = 9;
const KEY = 'erase-kill-key';
const LIST = { list_id: 10, timezone: 'Europe/Bucharest' };
// Embedded mode (KAFKA_BROKERS cleared): one process owns DATA_DIR.
const ENV = { ADMIN_TOKEN: ADMIN, KAFKA_BROKERS: '' };

/**
 * The service killed (SIGKILL) at some point of an erasure: after the restart the list answers either
 * as before the erasure (it had not been recorded) or as after it (recorded: the start finishes it),
 * never anything in between; erasing again then always gives the erased answers.
 */
describe('erase across a killed service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-erase-kill-'));
  const dataDir = join(dir, 'data');
  let service: ChildService | undefined;
  afterAll(async () => {
    await stopService(service);
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (path: string, body: string, token: string) =>
    fetch(`${service!.base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      body,
    });
  const answer = async () => {
    const url = `${service!.base}/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=10${STREAM_PERIOD}`;
    // The first call after a restart on the same port may go out on a kept-alive socket of the killed
    // process ("other side closed"): that one is sent again, on a new connection.
    const res = await fetch(url).catch(() => fetch(url));
    return res.json();
  };
  const expected = (records: RawActivity[]) => streamStats(records, LIST);

  it('is all or nothing, and finished at the next start', async () => {
    service = await spawnService(ENV, dataDir);
    await untilServing(service);
    const port = Number(new URL(service.base).port);
    const { wire, model: all } = activityStream(40_000, 71);
    const lines = [
      ...tenant({ userId: USER, apiKey: KEY, lists: [LIST] }),
      ...wire.filter((w) => w.list_id === 10),
    ];
    expect((await post('/ingest', lines.map((l) => JSON.stringify(l)).join('\n'), INGEST_TOKEN)).status).toBe(
      200,
    );
    let model = all.filter((r) => r.list_id === 10);
    const subscribers = [...new Set(model.map((r) => r.subscriber_id))];

    for (const [i, delay] of [0, 20, 60, 150, 400].entries()) {
      const subscriber = subscribers[i]!;
      const erased = model.filter((r) => r.subscriber_id !== subscriber);
      const before = expected(model);
      const after = expected(erased);
      const victim = service;
      const request = post(
        '/admin/erase',
        JSON.stringify({ pairs: [{ list_id: 10, subscriber_id: subscriber }] }),
        ADMIN,
      )
        .then((r) => r.status)
        .catch(() => 'killed');
      await new Promise((r) => setTimeout(r, delay));
      victim.proc.kill('SIGKILL');
      await victim.exited;
      const status = await request;

      service = await spawnService(ENV, dataDir, port);
      await untilServing(service);
      const now = await answer();
      if (status === 200) expect(now).toEqual(after);
      else expect([before, after]).toContainEqual(now);
      // Erasing again (as an operator whose command failed would) always ends erased.
      const again = () =>
        post('/admin/erase', JSON.stringify({ pairs: [{ list_id: 10, subscriber_id: subscriber }] }), ADMIN);
      // Sent again once if it went out on a socket of the killed process, as answer() is.
      expect((await again().catch(again)).status).toBe(200);
      expect(await answer()).toEqual(after);
      model = erased;
    }
  }, 900_000);
});
