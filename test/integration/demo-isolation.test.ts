// Modes: embedded only — needs the demo tenant, which is seeded only embedded (docs/records.md "The demo tenant")
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO } from '../../ingest/demo-seed.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * docs/records.md "The demo tenant": the demo never sees or mixes with an operator's data. It is removed whole
 * (its catalog records and its generated activity) before the first record that is not the demo's is applied,
 * so an operator's list 1 starts empty and the published demo key reads nothing of it.
 */
const OPERATOR = { user_id: 7, key: 'operator-key-0123456789abcdef0123' };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

async function demoService(): Promise<TestService> {
  const s = await startTestService({ SEED_DEMO: 'true' });
  expect(s.seeded).toBe(true);
  // The demo is there and readable with its key, as the README's first run shows.
  const before = await s.call(`/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/list.all.json`);
  expect(before.status).toBe(200);
  return s;
}

const sends = async (s: TestService, user: number, key: string, list: number) => {
  const r = await s.call(`/api/1.2/rest/${user}/${key}/automation.stats.json?list_id=${list}&days=90`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as { sends_total: number }[]).reduce((n, d) => n + d.sends_total, 0);
};

describe('the demo tenant and an operator on the same ids', () => {
  it("an operator's list 1 (catalog first): the demo key reads nothing, the demo's activity is not counted", async () => {
    svc = await demoService();
    expect(await sends(svc, DEMO.userId, DEMO.apiKey, 1)).toBeGreaterThan(0);
    const r = await svc.ingest([
      { type: 'list', list_id: 1, name: 'My real list', timezone: 'UTC' },
      { type: 'user', user_id: OPERATOR.user_id, api_key_sha256: sha(OPERATOR.key) },
      { type: 'list_access', user_id: OPERATOR.user_id, list_id: 1, granted: true },
    ]);
    expect(r.status).toBe(200);
    // The published key is gone with the demo: no list, not even the operator's, is readable with it.
    const demo = await svc.call(`/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/list.all.json`);
    expect(demo.status).toBe(403);
    const mine = await svc.call(`/api/1.2/rest/${OPERATOR.user_id}/${OPERATOR.key}/list.all.json`);
    expect(mine.status).toBe(200);
    expect(JSON.stringify(mine.body)).toContain('My real list');
    expect(JSON.stringify(mine.body)).not.toContain('Demo');
    expect(await sends(svc, OPERATOR.user_id, OPERATOR.key, 1)).toBe(0);
    await svc.ingest([
      {
        type: 'send',
        event_id: 'real-1',
        list_id: 1,
        workflow_id: 1,
        subscriber_id: 1,
        trigger_id: 10,
        timestamp: Date.now() - 3_600_000,
      },
    ]);
    expect(await sends(svc, OPERATOR.user_id, OPERATOR.key, 1)).toBe(1);
  });

  it("an operator's activity on list 1 first: it is counted alone, the demo is gone", async () => {
    svc = await demoService();
    await svc.ingest([
      {
        type: 'send',
        event_id: 'real-2',
        list_id: 1,
        workflow_id: 1,
        subscriber_id: 1,
        trigger_id: 10,
        timestamp: Date.now() - 3_600_000,
      },
    ]);
    await svc.ingest([
      { type: 'list', list_id: 1, name: 'My real list', timezone: 'UTC' },
      { type: 'user', user_id: OPERATOR.user_id, api_key_sha256: sha(OPERATOR.key) },
      { type: 'list_access', user_id: OPERATOR.user_id, list_id: 1, granted: true },
    ]);
    expect(await sends(svc, OPERATOR.user_id, OPERATOR.key, 1)).toBe(1);
    expect((await svc.call(`/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/list.all.json`)).status).toBe(403);
  });
});
