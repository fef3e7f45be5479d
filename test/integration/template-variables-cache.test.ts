// Modes: embedded only — where templateVariables parses, independent of the store
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { templateVariablesCache } from '../../query-api/render/variables.js';
import { MAX_MUSTACHES } from '../../shared/template-limits.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * transactional.templateVariables parses on the event loop: a template at the size limits took 65–215 ms
 * a call, so a few callers asking at once held every other request back. Each stored version is parsed
 * once: later and concurrent calls for it are answered from what that parse found.
 */
const USER = 81;
const KEY = 'variables-key-81';
const LIST = 8100;
const ACCOUNT = 'acc-81';

let svc: TestService;

/** A template of 3n mustaches (near the limit for n = a third of it), reading 2n distinct fields. */
const big = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `<p>{{#if order.f${i}}}{{${tag}.v${i}}}{{/if}}</p>`).join('\n');

beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.ingest([
    ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }),
    { type: 'smtp_account', account_id: ACCOUNT, list_id: LIST, active: true, is_default: true },
    {
      type: 'template',
      template_id: 'big',
      account_id: ACCOUNT,
      content: big(Math.floor(MAX_MUSTACHES / 3) - 10, 'a'),
      version: 1,
    },
    { type: 'template', template_id: 'broken', account_id: ACCOUNT, content: '{{#if x}}never closed' },
  ]);
  expect(res.body.rejected).toEqual([]);
}, 180_000);
afterAll(() => svc?.stop());

const variables = (templateId: string) =>
  svc.call(
    `/api/1.2/rest/${USER}/${KEY}/transactional.templateVariables.json?list_id=${LIST}&template_id=${templateId}`,
  );

describe('transactional.templateVariables parses each template version once', () => {
  it('concurrent and later calls for one version share one parse; a new version is parsed again', async () => {
    const before = { ...templateVariablesCache };
    const answers = await Promise.all(Array.from({ length: 6 }, () => variables('big')));
    for (const a of answers) expect(a.status, JSON.stringify(a.body).slice(0, 200)).toBe(200);
    const first = answers[0]!.body.variables as string[];
    expect(first.slice(0, 3)).toEqual(['order.f0', 'a.v0', 'order.f1']);
    for (const a of answers) expect(a.body.variables).toEqual(first);
    // Before: six parses of the same template on the event loop.
    expect(templateVariablesCache.parses - before.parses).toBe(1);
    expect(templateVariablesCache.hits - before.hits).toBe(5);

    // A new version of the template is a new parse, and its own answer.
    const res = await svc.ingest([
      { type: 'template', template_id: 'big', account_id: ACCOUNT, content: big(20, 'b'), version: 2 },
    ]);
    expect(res.body.rejected).toEqual([]);
    const next = await variables('big');
    expect(next.status).toBe(200);
    expect(next.body.variables.slice(0, 2)).toEqual(['order.f0', 'b.v0']);
    expect(templateVariablesCache.parses - before.parses).toBe(2);
  });

  it('a template that does not parse: 17007 every time, from one parse', async () => {
    const before = templateVariablesCache.parses;
    const answers = await Promise.all([variables('broken'), variables('broken'), variables('broken')]);
    for (const a of answers) {
      expect(a.status).toBe(422);
      expect(a.body.code).toBe(17007);
    }
    expect(new Set(answers.map((a) => a.body.message)).size).toBe(1);
    expect(templateVariablesCache.parses - before).toBe(1);
  });
});
