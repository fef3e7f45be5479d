import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, tenant, type TestService } from '../support/service.js';

const USER = 21;
const KEY = 'render-key';
const OTHER_USER = 22;
const OTHER_KEY = 'other-key';

const template = (id: string, account: string, content: string, extra: Record<string, unknown> = {}) => ({
  type: 'template',
  template_id: id,
  account_id: account,
  content,
  ...extra,
});

describe('transactional.templateRender', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const res = await svc.ingest([
      ...tenant({
        userId: USER,
        apiKey: KEY,
        lists: [{ list_id: 1 }, { list_id: 2 }, { list_id: 3 }, { list_id: 4 }],
      }),
      ...tenant({ userId: OTHER_USER, apiKey: OTHER_KEY, lists: [{ list_id: 9 }] }),
      // list 1: a default account among two; list 2: a single non-default account; list 3: two, none
      // default; list 4: an inactive default account; list 9: another user's tenant.
      { type: 'smtp_account', account_id: 'a1', list_id: 1, active: true, is_default: true },
      { type: 'smtp_account', account_id: 'a1b', list_id: 1, active: true },
      { type: 'smtp_account', account_id: 'a2', list_id: 2, active: true },
      { type: 'smtp_account', account_id: 'a3x', list_id: 3, active: true },
      { type: 'smtp_account', account_id: 'a3y', list_id: 3, active: true },
      { type: 'smtp_account', account_id: 'a4', list_id: 4, active: false, is_default: true },
      { type: 'smtp_account', account_id: 'a9', list_id: 9, active: true, is_default: true },
      template('hello', 'a1', '<p>Hi {{name}} {{{raw}}}</p>', {
        props: { subject: 'Hi {{name}} & co', n: 3, nested: { s: '{{name}}!' } },
      }),
      template('hello', 'a1b', 'second account {{name}}'),
      template('plain', 'a2', 'Hi {{name}} {{x}}', { content_type: 'text' }),
      template('v', 'a1', 'version one', { version: 1 }),
      template('v', 'a1', 'version three', { version: 3 }),
      template('v', 'a1', 'version two', { version: 2 }),
      template('gone', 'a1', 'bye', { deleted: true }),
      template('broken', 'a1', '<p>{{#if x}}\nnever closed</p>'),
      template('secret', 'a9', 'other tenant'),
      template(
        'proto',
        'a1',
        '{{constructor.constructor}}|{{__proto__}}|{{lookup (lookup this "constructor") "prototype"}}|{{this.__defineGetter__}}|{{polluted}}',
      ),
    ]);
    expect(res.body.rejected).toEqual([]);
  });
  afterAll(() => svc?.stop());

  const render = (query: string, user = USER, key = KEY) =>
    svc.call(`/api/1.2/rest/${user}/${key}/transactional.templateRender.json?${query}`);
  const renderJson = (body: unknown) =>
    svc.call(`/api/1.2/rest/${USER}/${KEY}/transactional.templateRender.json`, {
      method: 'POST',
      body: JSON.stringify(body),
      contentType: 'application/json',
    });

  it('renders html with escaping, raw triple-stash, and props rendered without escaping', async () => {
    const res = await renderJson({
      list_id: 1,
      template_id: 'hello',
      params: { name: '<b>Ana</b>', raw: '<i>ok</i>' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content: '<p>Hi &lt;b&gt;Ana&lt;/b&gt; <i>ok</i></p>',
      engine: 'handlebars',
      type: 'html',
      props: { subject: 'Hi <b>Ana</b> & co', n: 3, nested: { s: '<b>Ana</b>!' } },
    });
  });

  it('renders text templates without escaping; props null when none; params as a JSON string or form field', async () => {
    const viaString = await renderJson({
      list_id: 2,
      template_id: 'plain',
      params: '{"name":"<Ana>","x":"&"}',
    });
    expect(viaString.body).toEqual({
      content: 'Hi <Ana> &',
      engine: 'handlebars',
      type: 'text',
      props: null,
    });
    const viaForm = await svc.call(`/api/1.2/rest/${USER}/${KEY}/transactional.templateRender.json`, {
      method: 'POST',
      body: `list_id=2&template_id=plain&params=${encodeURIComponent('{"name":"Bo"}')}&account_id=false`,
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(viaForm.body.content).toBe('Hi Bo ');
  });

  it('selects the account: explicit, the default, or the only one', async () => {
    expect(
      (await render('list_id=1&template_id=hello&account_id=a1b&params={"name":"X"}')).body.content,
    ).toBe('second account X');
    expect((await render('list_id=1&template_id=hello')).body.content).toBe('<p>Hi  </p>');
    expect((await render('list_id=2&template_id=plain')).status).toBe(200);
  });

  it('answers every error with its code and HTTP status', async () => {
    const cases: [string, number, number, string][] = [
      ['template_id=hello', 400, 407, 'Missing required param list_id'],
      ['list_id=1', 400, 407, 'Missing required param template_id'],
      [
        'list_id=1&template_id=hello&template_engine=mustache',
        400,
        406,
        'Invalid param template_engine: supported engines: handlebars',
      ],
      [
        'list_id=1&template_id=bad/id',
        400,
        406,
        'Invalid param template_id: must be 1-128 characters of [A-Za-z0-9_.:-]',
      ],
      ['list_id=1&template_id=hello&params=[1]', 400, 406, 'Invalid param params: must be an object'],
      ['list_id=9&template_id=secret', 403, 101, 'Not allowed for list_id = 9'],
      ['list_id=3&template_id=hello', 404, 17003, 'Could not find the SMTP account'],
      ['list_id=1&template_id=hello&account_id=a2', 404, 17003, 'Could not find the SMTP account'],
      ['list_id=1&template_id=secret&account_id=a9', 404, 17003, 'Could not find the SMTP account'],
      ['list_id=4&template_id=hello', 409, 17004, 'The SMTP account is inactive'],
      [
        'list_id=1&template_id=missing',
        404,
        17006,
        'The template could not be fetched: template missing not found',
      ],
      [
        'list_id=1&template_id=gone',
        404,
        17006,
        'The template could not be fetched: template gone not found',
      ],
      [
        'list_id=2&template_id=hello',
        404,
        17006,
        'The template could not be fetched: template hello not found',
      ],
    ];
    for (const [query, status, code, message] of cases) {
      const res = await render(query);
      expect({ query, status: res.status, body: res.body }).toEqual({
        query,
        status,
        body: { err: true, code, message },
      });
    }
    const broken = await render('list_id=1&template_id=broken');
    expect(broken.status).toBe(422);
    expect(broken.body.code).toBe(17007);
    expect(broken.body.message).toMatch(/^The template could not be rendered: .*line \d+/);
  });

  it('answers 17006 with 503 when the template store fails', async () => {
    svc.db.faultInjector = async () => {
      throw new Error('ClickHouse down');
    };
    try {
      // 'plain' under account a1 was never looked up, so the catalog cache cannot answer it.
      const res = await render('list_id=1&template_id=plain');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        err: true,
        code: 17006,
        message: 'The template could not be fetched: the template store is unavailable, try again',
      });
    } finally {
      svc.db.faultInjector = undefined;
    }
  });

  it('serves the latest version, and a newer version as soon as it is stored', async () => {
    expect((await render('list_id=1&template_id=v')).body.content).toBe('version three');
    await svc.ingest([template('v', 'a1', 'version four', { version: 4 })]);
    expect((await render('list_id=1&template_id=v')).body.content).toBe('version four');
    await svc.ingest([template('v', 'a1', 'deleted now', { version: 5, deleted: true })]);
    expect((await render('list_id=1&template_id=v')).status).toBe(404);
  });

  it('renders prototype-access payloads as nothing, and __proto__ params pollute nothing', async () => {
    const payload = JSON.parse(
      '{"list_id":1,"template_id":"proto","params":{"__proto__":{"polluted":"yes"},"constructor":{"name":"x"}}}',
    );
    const res = await renderJson(payload);
    expect(res.status).toBe(200);
    expect(res.body.content).toBe('||||');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const later = await renderJson({ list_id: 1, template_id: 'proto', params: {} });
    expect(later.body.content).toBe('||||');
  });

  it('never reaches another tenant: a foreign user, list or account gets nothing', async () => {
    expect((await render('list_id=9&template_id=secret', USER, KEY)).body.code).toBe(101);
    expect((await render('list_id=1&template_id=hello', OTHER_USER, OTHER_KEY)).body.code).toBe(101);
    expect((await render('list_id=9&template_id=secret', OTHER_USER, OTHER_KEY)).body.content).toBe(
      'other tenant',
    );
  });
});
