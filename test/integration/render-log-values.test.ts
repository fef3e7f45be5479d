// Modes: embedded only — render errors and logs, independent of the store
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '../support/raw-http.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Issue 19 D: a helper's error names the param value to the client (it is the caller's own value, and
 * what they need to fix), but the log never carries param values (docs/operations.md "Logs"), also at
 * debug level.
 */
const USER = 81;
const KEY = 'log-values-key';
const LIST = 91;
const CARD = 'card 4111-1111-1111-1111';
const PATH = `/api/1.2/rest/${USER}/${KEY}/transactional.templateRender.json`;

describe('template param values stay out of the log', () => {
  const { log, lines } = capturingLogger('debug');
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService({}, { log });
    const res = await svc.ingest([
      ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }),
      { type: 'smtp_account', account_id: 'acc-log', list_id: LIST, active: true, is_default: true },
      {
        type: 'template',
        template_id: 'money',
        account_id: 'acc-log',
        content: 'Total {{formatMoney total}}',
      },
      { type: 'template', template_id: 'cur', account_id: 'acc-log', content: '{{formatMoney 1 cur}}' },
      { type: 'template', template_id: 'date', account_id: 'acc-log', content: '{{formatDate d fmt}}' },
      {
        type: 'template',
        template_id: 'subject',
        account_id: 'acc-log',
        content: 'ok',
        props: { subject: 'Paid {{formatNumber total}}' },
      },
    ]);
    expect(res.body.rejected).toEqual([]);
  });
  afterAll(() => svc?.stop());

  const render = (template_id: string, params: Record<string, unknown>) =>
    svc.call(PATH, {
      method: 'POST',
      body: JSON.stringify({ list_id: LIST, template_id, params }),
      contentType: 'application/json',
    });

  it('the client is told the helper, the problem and its value; the log only the helper and the problem', async () => {
    const money = await render('money', { total: CARD });
    expect(money.status).toBe(422);
    expect(money.body.message).toBe(
      `The template could not be rendered: formatMoney: "${CARD}" is not a number`,
    );
    const subject = await render('subject', { total: CARD });
    expect(subject.body.message).toBe(
      `The template could not be rendered: props.subject: formatNumber: "${CARD}" is not a number`,
    );
    const cur = await render('cur', { cur: CARD });
    expect(cur.status).toBe(422);
    expect(cur.body.message).toMatch(/^The template could not be rendered: formatMoney: /);
    const date = await render('date', { d: '2026-01-01', fmt: `'${CARD}' YYYY` });
    expect(date.status).toBe(422);
    expect(date.body.message).toMatch(/^The template could not be rendered: formatDate: use yyyy/);
    // A long value is quoted only in part.
    const long = await render('money', { total: `${CARD} ${'x'.repeat(1000)}` });
    expect(long.body.message.length).toBeLessThan(200);

    await new Promise((r) => setTimeout(r, 50));
    const failed = lines.filter((l) => l.includes('template render failed'));
    expect(failed.length).toBe(5);
    expect(failed[0]).toContain('"reason":"formatMoney: a string is not a number"');
    expect(failed[1]).toContain('"reason":"props.subject: formatNumber: a string is not a number"');
    for (const line of lines) {
      // Less the request id (a random UUID) and the time: their digits hold "4111" now and then (a CI run
      // failed on it once).
      const fields = JSON.parse(line) as Record<string, unknown>;
      delete fields.req_id;
      delete fields.time;
      const said = JSON.stringify(fields);
      expect(said).not.toContain('4111');
      expect(said).not.toContain('card ');
    }
  });
});
