// Modes: embedded only — the platform clients' wire encodings at the HTTP edge, independent of the store
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256, startTestService, type TestService } from '../support/service.js';

/**
 * The platform's own clients, byte for byte as they were captured on the wire (docs/api.md "Parameters", "Errors", "Clients' encodings"):
 * the current PHP client (positional params as a JSON object under a form content type), the 2019 PHP
 * client (positional multipart fields), plugins (`http_build_query` nested fields, false → "0") and
 * n8n's credential test (`GET list.all.json`). Every answer is compared with the same request made by
 * name, and the by-name answers are checked against counts made by hand, so no comparison is of two
 * empty answers.
 *
 * Data: list 101 (Bucharest, RON, "Shop"): sends at 10:00 UTC
 *   2025-10-19 wf1001 sub 9 (before the period)    2025-10-20 wf1001 subs 1,2 (trigger 55), wf1002 sub 3
 *   2025-11-05 wf1001 sub 4                         2025-11-06 wf1001 sub 8 (after the period)
 * list 102 (New York, EUR, "Outlet"), list 103 of another user, list 104 revoked, 105 granted but no record.
 */
const USER = 7;
const KEY = 'php-client-key-1';
const OTHER_USER = 8;
const OTHER_KEY = 'other-user-key-2';
const INACTIVE_USER = 9;
const INACTIVE_KEY = 'inactive-user-key';
const NO_LISTS_USER = 10;
const NO_LISTS_KEY = 'no-lists-user-key';

const base = (op: string, user: number | string = USER, key = KEY) => `/api/1.2/rest/${user}/${key}/${op}`;
const STATS = base('automation.stats.json');
const RENDER = base('transactional.templateRender.json');
const LISTS = base('list.all.json');

const send = (day: string, workflow: number, sub: number, trigger?: number) => ({
  type: 'send',
  event_id: `cl-${day}-${workflow}-${sub}`,
  list_id: 101,
  workflow_id: workflow,
  subscriber_id: sub,
  timestamp: `${day}T10:00:00Z`,
  ...(trigger ? { trigger_id: trigger } : {}),
});

/** The PHP client's curl headers (it sends no charset). */
const FORM = 'application/x-www-form-urlencoded';

interface Answer {
  status: number;
  contentType: string | undefined;
  body: any;
}

/** Sends exactly these bytes with exactly these headers (plus Host and Content-Length). */
function raw(method: string, urlPath: string, body?: string | Buffer, headers: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
    const all: Record<string, string | number> = { ...headers };
    if (bytes) all['content-length'] = bytes.length;
    const req = request(svc.url + urlPath, { method, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode!,
          contentType: res.headers['content-type'],
          body: text ? JSON.parse(text) : undefined,
        });
      });
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

const byName = (urlPath: string, params: Record<string, unknown>) =>
  raw('POST', urlPath, JSON.stringify(params), { 'content-type': 'application/json' });

/** A multipart body as PHP's curl writes it for CURLOPT_POSTFIELDS = array: one part per field. */
function phpMultipart(fields: [string, string][]): { body: Buffer; contentType: string } {
  const boundary = '------------------------a2f9c4e1b7d05c38';
  const parts = fields.map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return {
    body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'utf8'),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function expectOk(res: Answer): any {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** [date, sends_total] per day of a stats answer. */
const perDay = (body: any[]) => body.map((r) => [r.date, r.sends_total]);

let svc: TestService;

/** The render every client shape below asks for, by name. */
const renderByName = async () =>
  expectOk(
    await byName(RENDER, {
      list_id: 101,
      template_id: 'order',
      params: { customer: { name: 'Ana' }, items: ['a', 'b'] },
    }),
  );

beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.ingest([
    { type: 'user', user_id: USER, api_key_sha256: sha256(KEY) },
    { type: 'user', user_id: OTHER_USER, api_key_sha256: sha256(OTHER_KEY) },
    { type: 'user', user_id: INACTIVE_USER, api_key_sha256: sha256(INACTIVE_KEY), active: false },
    { type: 'user', user_id: NO_LISTS_USER, api_key_sha256: sha256(NO_LISTS_KEY) },
    { type: 'list_access', user_id: INACTIVE_USER, list_id: 101, granted: true },
    { type: 'list', list_id: 101, name: 'Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
    { type: 'list', list_id: 102, name: 'Outlet', timezone: 'America/New_York', currency: 'EUR' },
    { type: 'list', list_id: 103, name: 'Not yours' },
    { type: 'list', list_id: 104, name: 'Revoked' },
    { type: 'list_access', user_id: USER, list_id: 101, granted: true },
    { type: 'list_access', user_id: USER, list_id: 102, granted: true },
    { type: 'list_access', user_id: USER, list_id: 104, granted: true, version: 1 },
    { type: 'list_access', user_id: USER, list_id: 104, granted: false, version: 2 },
    { type: 'list_access', user_id: USER, list_id: 105, granted: true },
    { type: 'list_access', user_id: OTHER_USER, list_id: 103, granted: true },
    { type: 'workflow', workflow_id: 1001, list_id: 101, name: 'welcome' },
    { type: 'workflow', workflow_id: 1002, list_id: 101, name: 'cart' },
    { type: 'smtp_account', account_id: 'acc-1', list_id: 101, active: true, is_default: true },
    {
      type: 'template',
      template_id: 'order',
      account_id: 'acc-1',
      content: 'Hi {{customer.name}}:{{#each items}} [{{this}}]{{/each}}',
      content_type: 'text',
      props: { subject: 'Order for {{customer.name}}' },
    },
    send('2025-10-19', 1001, 9),
    send('2025-10-20', 1001, 1, 55),
    send('2025-10-20', 1001, 2, 55),
    send('2025-10-20', 1002, 3),
    send('2025-11-05', 1001, 4),
    send('2025-11-06', 1001, 8),
  ]);
  expect(res.status).toBe(200);
  expect(res.body.rejected).toEqual([]);
});

afterAll(() => svc?.stop());

describe('the current PHP client: positional params as a JSON object under a form content type', () => {
  it('automation.stats, the captured body, equals the same request by name', async () => {
    const wire = '{"__0__":101,"__1__":[1001],"__2__":false,"__3__":"2025-10-20","__4__":"2025-11-05"}';
    const res = expectOk(await raw('POST', STATS, wire, { 'content-type': FORM }));
    const named = expectOk(
      await byName(STATS, {
        list_id: 101,
        workflow_ids: [1001],
        start_date: '2025-10-20',
        stop_date: '2025-11-05',
      }),
    );
    expect(perDay(named)).toEqual([
      ['2025-10-20', 2],
      ['2025-11-05', 1],
    ]);
    expect(res).toEqual(named);
  });
  it('DateTime arguments as PHP JSON-encodes them count by the date as written', async () => {
    const wire =
      '{"__0__":101,"__1__":[1001],"__2__":false,' +
      '"__3__":{"date":"2025-10-20 23:30:00.000000","timezone_type":3,"timezone":"UTC"},' +
      '"__4__":{"date":"2025-11-05 00:15:00.000000","timezone_type":1,"timezone":"+02:00"}}';
    const res = expectOk(await raw('POST', STATS, wire, { 'content-type': FORM }));
    expect(perDay(res)).toEqual([
      ['2025-10-20', 2],
      ['2025-11-05', 1],
    ]);
  });
  it('transactional.templateRender with the params object in "__4__"', async () => {
    const wire =
      '{"__0__":101,"__1__":false,"__2__":"order","__3__":"handlebars",' +
      '"__4__":{"customer":{"name":"Ana"},"items":["a","b"]}}';
    const res = expectOk(await raw('POST', RENDER, wire, { 'content-type': FORM }));
    const named = expectOk(
      await byName(RENDER, {
        list_id: 101,
        template_id: 'order',
        params: { customer: { name: 'Ana' }, items: ['a', 'b'] },
      }),
    );
    expect(named).toEqual({
      content: 'Hi Ana: [a] [b]',
      engine: 'handlebars',
      type: 'text',
      props: { subject: 'Order for Ana' },
    });
    expect(res).toEqual(named);
  });
  it('list.all with no arguments: the body is `[]`', async () => {
    const res = expectOk(await raw('POST', LISTS, '[]', { 'content-type': FORM }));
    expect(res).toEqual(expectOk(await raw('GET', LISTS)));
    expect(res).toEqual([
      { list_id: '101', list_name: 'Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
      { list_id: '102', list_name: 'Outlet', timezone: 'America/New_York', currency: 'EUR' },
    ]);
  });
  it('errors come back as the error object: 407 with no arguments, 101 for another list, 406 for a bad date', async () => {
    expect(await raw('POST', STATS, '[]', { 'content-type': FORM })).toMatchObject({
      status: 400,
      body: { err: true, code: 407, message: 'Missing required param list_id' },
    });
    expect(await raw('POST', STATS, '{"__0__":103}', { 'content-type': FORM })).toMatchObject({
      status: 403,
      body: { err: true, code: 101, message: 'Not allowed for list_id = 103' },
    });
    const bad = await raw('POST', STATS, '{"__0__":101,"__3__":"2025-02-30"}', { 'content-type': FORM });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ err: true, code: 406 });
    expect(bad.body.message).toMatch(/^Invalid param start_date: /);
  });
  it('a name wins over its position', async () => {
    const wire =
      '{"__0__":103,"list_id":101,"__3__":"2025-11-05","start_date":"2025-10-20","__4__":"2025-11-05"}';
    const res = expectOk(await raw('POST', STATS, wire, { 'content-type': FORM }));
    expect(perDay(res)).toEqual([
      ['2025-10-20', 3],
      ['2025-11-05', 1],
    ]);
  });
});

describe('the 2019 PHP client: positional multipart/form-data fields', () => {
  it('automation.stats: scalars as text, false as "false", arrays JSON-encoded, DateTime as ISO 8601', async () => {
    const { body, contentType } = phpMultipart([
      ['__0__', '101'],
      ['__1__', '[1001]'],
      ['__2__', 'false'],
      ['__3__', '2025-10-20T00:00:00+0000'],
      ['__4__', '2025-11-05T00:00:00+0000'],
    ]);
    const res = expectOk(await raw('POST', STATS, body, { 'content-type': contentType }));
    const named = expectOk(
      await byName(STATS, {
        list_id: 101,
        workflow_ids: [1001],
        start_date: '2025-10-20',
        stop_date: '2025-11-05',
      }),
    );
    expect(perDay(named).length).toBe(2);
    expect(res).toEqual(named);
  });
  it('transactional.templateRender with the params object JSON-encoded', async () => {
    const { body, contentType } = phpMultipart([
      ['__0__', '101'],
      ['__1__', 'false'],
      ['__2__', 'order'],
      ['__3__', 'handlebars'],
      ['__4__', '{"customer":{"name":"Ana"},"items":["a","b"]}'],
    ]);
    const res = expectOk(await raw('POST', RENDER, body, { 'content-type': contentType }));
    expect(res.content).toBe('Hi Ana: [a] [b]');
    expect(res).toEqual(await renderByName());
  });
  it('list.all with no fields equals the same request by name', async () => {
    const { body, contentType } = phpMultipart([]);
    const res = expectOk(await raw('POST', LISTS, body, { 'content-type': contentType }));
    expect(res).toEqual(expectOk(await raw('GET', LISTS)));
  });
  it('a broken multipart body → 406 naming the body', async () => {
    const res = await raw('POST', STATS, '--xyz\r\nContent-Disposition: form-data; name="__0__"\r\n\r\n101', {
      'content-type': 'multipart/form-data; boundary=xyz',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(406);
    expect(res.body.message).toMatch(/^Invalid param body: /);
  });
});

describe('plugins: http_build_query bodies', () => {
  it('nested params fields reach the template (list items and object members)', async () => {
    const wire =
      'list_id=101&template_id=order&params%5Bitems%5D%5B0%5D=a&params%5Bitems%5D%5B1%5D=b' +
      '&params%5Bcustomer%5D%5Bname%5D=Ana';
    const res = expectOk(await raw('POST', RENDER, wire, { 'content-type': FORM }));
    expect(res.content).toBe('Hi Ana: [a] [b]');
    expect(res.props).toEqual({ subject: 'Order for Ana' });
    expect(res).toEqual(await renderByName());
  });
  it('false written as "0" means not given for trigger_id, days and month', async () => {
    const wire =
      'list_id=101&workflow_ids%5B0%5D=1001&trigger_id=0&start_date=2025-10-20&stop_date=2025-11-05&days=0&month=0';
    const res = expectOk(await raw('POST', STATS, wire, { 'content-type': FORM }));
    const named = expectOk(
      await byName(STATS, {
        list_id: 101,
        workflow_ids: [1001],
        start_date: '2025-10-20',
        stop_date: '2025-11-05',
      }),
    );
    expect(perDay(named).length).toBe(2);
    expect(res).toEqual(named);
    // And a real trigger_id still filters (2 of the 3 sends of 2025-10-20 carry trigger 55).
    const trig = expectOk(
      await raw('POST', STATS, wire.replace('trigger_id=0', 'trigger_id=55'), { 'content-type': FORM }),
    );
    expect(perDay(trig)).toEqual([['2025-10-20', 2]]);
  });
});

describe("n8n's credential test: GET list.all.json", () => {
  it('answers the lists the caller may read, in the shape of docs/api.md "list.all"', async () => {
    const res = await raw('GET', LISTS);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.body).toEqual([
      { list_id: '101', list_name: 'Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
      { list_id: '102', list_name: 'Outlet', timezone: 'America/New_York', currency: 'EUR' },
    ]);
    expect(expectOk(await raw('GET', base('list.all.json', OTHER_USER, OTHER_KEY)))).toEqual([
      { list_id: '103', list_name: 'Not yours', timezone: 'Europe/Bucharest', currency: 'RON' },
    ]);
  });
  it('a user without a readable list gets []', async () => {
    expect(expectOk(await raw('GET', base('list.all.json', NO_LISTS_USER, NO_LISTS_KEY)))).toEqual([]);
  });
  it('an unknown user, a wrong key, an inactive user and a malformed user id all get the same 101', async () => {
    const expected = {
      status: 403,
      body: { err: true, code: 101, message: 'Not allowed for this user_id and api_key' },
    };
    for (const p of [
      base('list.all.json', 999, KEY),
      base('list.all.json', USER, 'wrong'),
      base('list.all.json', 'x', KEY),
      base('list.all.json', INACTIVE_USER, INACTIVE_KEY),
    ]) {
      const res = await raw('GET', p);
      expect({ status: res.status, body: res.body }, p).toEqual(expected);
    }
  });
});
