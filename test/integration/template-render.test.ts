// Modes: embedded only — needs the demo tenant, which is seeded only embedded
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, DEMO_ORDER_PARAMS, demoRecords } from '../../ingest/demo-seed.js';
import { ApiError } from '../../shared/errors.js';
import { TemplateRenderer } from '../../query-api/render/engine.js';
import { transactionalTemplateRender } from '../../query-api/render/handler.js';
import { sha256, startTestService, type TestService } from '../support/service.js';

/**
 * transactional.templateRender over HTTP against the real service (docs/api.md "Parameters", "Errors", "transactional.templateRender").
 *
 * Lists of user A (31): 11 a default account among three (one inactive); 12 a single non-default
 * account; 13 two accounts, none default; 14 an inactive default account; 15 no accounts; 16 en-US /
 * New York / USD; 17 the default account is not the first by id. List 18 exists but A has no grant.
 * User B (32) owns list 19. User C (33) is inactive; user D (34) had its grant to 11 revoked.
 * The demo tenant's catalog (user 1001, lists 1 and 2) is loaded too, for the README example.
 */
const A = { user: 31, key: 'render-key-a' };
const B = { user: 32, key: 'render-key-b' };
const C = { user: 33, key: 'render-key-c' };
const D = { user: 34, key: 'render-key-d' };

const PATH = (who: { user: number | string; key: string }) =>
  `/api/1.2/rest/${who.user}/${who.key}/transactional.templateRender.json`;

const template = (id: string, account: string, content: string, extra: Record<string, unknown> = {}) => ({
  type: 'template',
  template_id: id,
  account_id: account,
  content,
  ...extra,
});
const account = (id: string, listId: number, extra: Record<string, unknown> = {}) => ({
  type: 'smtp_account',
  account_id: id,
  list_id: listId,
  active: true,
  ...extra,
});
const grant = (userId: number, listId: number, granted = true) => ({
  type: 'list_access',
  user_id: userId,
  list_id: listId,
  granted,
});
const user = (who: { user: number; key: string }, active = true) => ({
  type: 'user',
  user_id: who.user,
  api_key_sha256: sha256(who.key),
  active,
});

/** The arbitrary-code-execution chain published against Handlebars < 4.6 (prototype access). */
const RCE = (code: string) =>
  '{{#with "s" as |string|}}{{#with "e"}}{{#with split as |conslist|}}{{this.pop}}' +
  '{{this.push (lookup string.sub "constructor")}}{{this.pop}}{{#with string.split as |codelist|}}' +
  `{{this.pop}}{{this.push "${code}"}}{{this.pop}}{{#each conslist}}` +
  '{{#with (string.sub.apply 0 codelist)}}{{this}}{{/with}}{{/each}}{{/with}}{{/with}}{{/with}}{{/with}}';

const PAYLOADS = [
  '{{constructor}}',
  '{{constructor.constructor}}',
  '{{constructor.constructor.name}}',
  '{{__proto__}}',
  '{{__proto__.polluted}}',
  '{{polluted}}',
  '{{this.__defineGetter__}}',
  '{{#with this as |t|}}{{t.__lookupGetter__}}{{t.constructor.name}}{{/with}}',
  '{{lookup this "constructor"}}',
  '{{lookup (lookup this "constructor") "prototype"}}',
  '{{lookup (lookup this "__proto__") "polluted"}}',
  '{{#with (lookup this "constructor") as |c|}}{{c.name}}{{/with}}',
  '{{#with "s" as |string|}}{{#with string.constructor as |c|}}{{c.name}}{{/with}}{{/with}}',
  RCE("return process.mainModule.require('child_process').execSync('id');"),
  RCE('globalThis.hbsPwned = true; return 1;'),
];
const PROTO_PAYLOADS = PAYLOADS.join('|');
/** Each payload renders as nothing: only the separators are left. */
const EMPTY_PAYLOAD_OUTPUT = '|'.repeat(PAYLOADS.length - 1);
/** Intl separates the amount and the currency code with a no-break space. */
const NBSP = '\u00a0';

interface Answer {
  status: number;
  body: any;
}

describe('transactional.templateRender over HTTP', () => {
  let svc: TestService;

  /** GET with a JSON body (as the seed's example does): fetch() refuses that, so plain node:http. */
  const getWithBody = (path: string, body: string, contentType = 'application/json'): Promise<Answer> =>
    new Promise((ok, fail) => {
      const req = request(
        svc.url + path,
        {
          method: 'GET',
          headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            ok({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }),
          );
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  const get = (query: string, who: { user: number | string; key: string } = A) =>
    svc.call(`${PATH(who)}?${query}`);
  const postJson = (body: unknown, who: { user: number | string; key: string } = A, query = '') =>
    svc.call(PATH(who) + query, {
      method: 'POST',
      body: JSON.stringify(body),
      contentType: 'application/json',
    });
  const postForm = (body: string, who: { user: number | string; key: string } = A) =>
    svc.call(PATH(who), { method: 'POST', body, contentType: 'application/x-www-form-urlencoded' });
  const errorOf = (res: Answer) => ({ status: res.status, body: res.body });
  const err = (status: number, code: number, message: string) => ({
    status,
    body: { err: true, code, message },
  });

  beforeAll(async () => {
    svc = await startTestService();
    const demoCatalog = demoRecords()
      .map((item) => ('value' in item ? (item.value as { type: string }) : { type: 'none' }))
      .filter((r) => ['list', 'user', 'list_access', 'smtp_account', 'template'].includes(r.type));
    const res = await svc.ingest([
      ...demoCatalog,
      user(A),
      user(B),
      user(C, false),
      user(D),
      ...[11, 12, 13, 14, 15, 17].map((id) => ({ type: 'list', list_id: id, name: `list ${id}` })),
      {
        type: 'list',
        list_id: 16,
        name: 'us',
        locale: 'en-US',
        timezone: 'America/New_York',
        currency: 'USD',
      },
      { type: 'list', list_id: 18, name: 'not granted' },
      { type: 'list', list_id: 19, name: 'tenant B' },
      ...[11, 12, 13, 14, 15, 16, 17].map((id) => grant(A.user, id)),
      grant(B.user, 19),
      grant(C.user, 11),
      grant(D.user, 11),
      grant(D.user, 11, false),
      account('a11', 11, { is_default: true }),
      account('a11b', 11),
      account('a11off', 11, { active: false }),
      account('a12', 12),
      account('a13x', 13),
      account('a13y', 13),
      account('a14', 14, { active: false, is_default: true }),
      account('a16', 16, { is_default: true }),
      account('a17-first', 17),
      account('a17-zdefault', 17, { is_default: true }),
      account('a19', 19, { is_default: true }),
      template('hello', 'a11', '<p>Hi {{name}} {{{raw}}}</p>', {
        props: {
          subject: 'Hi {{name}} & co',
          n: 3,
          flag: true,
          none: null,
          nested: { s: '{{name}}!' },
          list: ['{{raw}}', 1],
        },
      }),
      template('hello', 'a11b', 'second account {{name}}'),
      template('hello', 'a11off', 'inactive account'),
      template('plain', 'a12', 'Hi {{name}} {{{raw}}} {{x}}', { content_type: 'text' }),
      template('who', 'a13x', 'x'),
      template('who', 'a17-first', 'first'),
      template('who', 'a17-zdefault', 'the default'),
      template(
        'locale',
        'a11',
        '{{formatMoney 1234.5}}|{{formatDate "2026-11-02T03:30:00Z" "yyyy-MM-dd HH:mm"}}|{{formatNumber amount}}',
      ),
      template(
        'locale',
        'a16',
        '{{formatMoney 1234.5}}|{{formatDate "2026-11-02T03:30:00Z" "yyyy-MM-dd HH:mm"}}|{{formatNumber amount}}',
      ),
      template('v', 'a11', 'version one', { version: 1 }),
      template('v', 'a11', 'version three', { version: 3 }),
      template('v', 'a11', 'version two', { version: 2 }),
      template('gone', 'a11', 'bye', { deleted: true }),
      template('broken', 'a11', '<p>{{#if x}}\nnever closed</p>'),
      template('mismatched', 'a11', '<p>\n  {{#each items}}{{/if}}</p>'),
      template('broken-props', 'a11', 'fine', { props: { subject: 'Hi {{#if}}' } }),
      template('money', 'a11', '{{formatMoney amount}}'),
      template('partial', 'a11', '{{> evil}}'),
      template('json', 'a11', '{{json o}}'),
      template(
        'keys',
        'a11',
        '{{#each this}}{{@key}}={{this}};{{/each}}|{{#each a}}{{@key}};{{/each}}|{{polluted}}',
      ),
      template('proto', 'a11', PROTO_PAYLOADS),
      template('proto-text', 'a11', PROTO_PAYLOADS, { content_type: 'text', props: { s: PROTO_PAYLOADS } }),
      template('getter', 'a11', '{{__defineGetter__ "polluted" this}}'),
      template('secret', 'a19', 'tenant B secret'),
      template('plain-b', 'a19', 'B plain'),
    ]);
    expect(res.body.rejected).toEqual([]);
  });
  afterAll(() => svc?.stop());

  describe('errors, in the order of docs/api.md "Errors"', () => {
    it('407 for a missing list_id or template_id (false and "" count as missing)', async () => {
      expect(errorOf(await get('template_id=hello'))).toEqual(
        err(400, 407, 'Missing required param list_id'),
      );
      expect(errorOf(await get('list_id=11'))).toEqual(err(400, 407, 'Missing required param template_id'));
      expect(errorOf(await get('list_id=11&template_id='))).toEqual(
        err(400, 407, 'Missing required param template_id'),
      );
      expect(errorOf(await postJson({ list_id: 11, template_id: false }))).toEqual(
        err(400, 407, 'Missing required param template_id'),
      );
      // Presence is checked for every required param before validity.
      expect(errorOf(await get('list_id=abc'))).toEqual(err(400, 407, 'Missing required param template_id'));
    });

    it('406 for malformed ids, an unknown engine and bad params, before list access is checked', async () => {
      const ID_RULE = 'must be 1-128 characters of [A-Za-z0-9_.:-]';
      const cases: [string, string][] = [
        ['list_id=abc&template_id=hello', 'Invalid param list_id: must be a positive integer'],
        ['list_id=0&template_id=hello', 'Invalid param list_id: must be a positive integer'],
        ['list_id=11&template_id=bad/id', `Invalid param template_id: ${ID_RULE}`],
        [`list_id=11&template_id=${'t'.repeat(129)}`, `Invalid param template_id: ${ID_RULE}`],
        ['list_id=11&template_id=hello&account_id=bad%20id', `Invalid param account_id: ${ID_RULE}`],
        [
          'list_id=11&template_id=hello&template_engine=mustache',
          'Invalid param template_engine: supported engines: handlebars',
        ],
        [
          'list_id=11&template_id=hello&template_engine=Handlebars%202',
          'Invalid param template_engine: supported engines: handlebars',
        ],
        ['list_id=11&template_id=hello&params=[1]', 'Invalid param params: must be an object'],
        ['list_id=11&template_id=hello&params=42', 'Invalid param params: must be an object'],
        ['list_id=11&template_id=hello&params="s"', 'Invalid param params: must be an object'],
        ['list_id=11&template_id=hello&params={nope', 'Invalid param params: not a valid JSON object'],
      ];
      for (const [query, message] of cases) {
        expect({ query, ...errorOf(await get(query, A)) }).toEqual({ query, ...err(400, 406, message) });
        // With a wrong key: 101 (docs/api.md "Errors": credentials come first, before the body is read).
        expect(errorOf(await get(query, { user: A.user, key: 'wrong' })).body.code).toBe(101);
      }
      expect(errorOf(await postJson({ list_id: 11, template_id: 'hello', params: ['a'] }))).toEqual(
        err(400, 406, 'Invalid param params: must be an object'),
      );
      expect(errorOf(await postJson({ list_id: 11, template_id: { id: 'hello' } }))).toEqual(
        err(400, 406, `Invalid param template_id: ${ID_RULE}`),
      );
    });

    it('406 for params nested too deep or too large', async () => {
      let deep: Record<string, unknown> = { x: 1 };
      for (let i = 0; i < 25; i++) deep = { d: deep };
      expect(errorOf(await postJson({ list_id: 11, template_id: 'hello', params: deep }))).toEqual(
        err(400, 406, 'Invalid param params: params are nested deeper than 20 levels'),
      );
      const big = { s: 'x'.repeat(300 * 1024) };
      const res = await postJson({ list_id: 11, template_id: 'hello', params: big });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(406);
      expect(res.body.message).toMatch(
        /^Invalid param params: params are \d+ bytes of JSON, over the 262144 byte limit$/,
      );
      // Over the API's 1 MiB body limit: 413.
      const huge = await postJson({
        list_id: 11,
        template_id: 'hello',
        params: { s: 'x'.repeat(1.1 * 2 ** 20) },
      });
      expect(errorOf(huge)).toEqual(err(413, 413, 'Request too large'));
    });

    it('101 with one answer for every credential or access failure', async () => {
      const cases: [string, { user: number | string; key: string }][] = [
        ['list_id=11&template_id=hello', { user: A.user, key: 'wrong-key' }], // wrong key
        ['list_id=11&template_id=hello', { user: 99, key: A.key }], // unknown user
        ['list_id=11&template_id=hello', { user: 'abc', key: A.key }], // not a user id
        ['list_id=11&template_id=hello', { user: B.user, key: A.key }], // another user's key
        ['list_id=11&template_id=hello', C], // inactive user
        ['list_id=11&template_id=hello', D], // grant revoked
        ['list_id=11&template_id=hello', B], // no grant for the list
        ['list_id=18&template_id=hello', A], // list exists, no grant
        ['list_id=999&template_id=hello', A], // unknown list
      ];
      for (const [query, who] of cases) {
        const listId = /list_id=(\d+)/.exec(query)![1];
        expect({ who, ...errorOf(await get(query, who)) }).toEqual({
          who,
          ...err(403, 101, `Not allowed for list_id = ${listId}`),
        });
      }
    });

    it('17003 when the list has no usable account or account_id is not of this list', async () => {
      const cases = [
        'list_id=13&template_id=who', // two accounts, none default
        'list_id=15&template_id=who', // no accounts
        'list_id=11&template_id=hello&account_id=a12', // an account of another list of the same user
        'list_id=11&template_id=secret&account_id=a19', // an account of another tenant
        'list_id=11&template_id=hello&account_id=nope', // no such account
      ];
      for (const query of cases) {
        expect({ query, ...errorOf(await get(query)) }).toEqual({
          query,
          ...err(404, 17003, 'Could not find the SMTP account'),
        });
      }
    });

    it('17004 when the resolved account is inactive', async () => {
      expect(errorOf(await get('list_id=14&template_id=hello'))).toEqual(
        err(409, 17004, 'The SMTP account is inactive'),
      );
      expect(errorOf(await get('list_id=11&template_id=hello&account_id=a11off'))).toEqual(
        err(409, 17004, 'The SMTP account is inactive'),
      );
    });

    it('17006/404 for a missing or deleted template, and one of another account of the same list', async () => {
      const notFound = (id: string) =>
        err(404, 17006, `The template could not be fetched: template ${id} not found`);
      expect(errorOf(await get('list_id=11&template_id=missing'))).toEqual(notFound('missing'));
      expect(errorOf(await get('list_id=11&template_id=gone'))).toEqual(notFound('gone'));
      // "plain" exists under a12 (list 12), not under list 11's default account.
      expect(errorOf(await get('list_id=11&template_id=plain'))).toEqual(notFound('plain'));
      // "who" exists under a13x but list 11 resolves to a11.
      expect(errorOf(await get('list_id=11&template_id=who&account_id=a11b'))).toEqual(notFound('who'));
    });

    it('17006/503 when the template store fails, without internals, and the failure is not cached', async () => {
      // Let any catalog poll triggered by earlier ingests settle, then warm auth and accounts of list 12.
      await new Promise((r) => setTimeout(r, 600));
      expect((await get('list_id=12&template_id=plain')).status).toBe(200);
      svc.db.faultInjector = async () => {
        throw new Error('boom: ClickHouse exploded at host 10.0.0.7');
      };
      let res: Answer;
      try {
        res = await get('list_id=12&template_id=never-looked-up');
      } finally {
        svc.db.faultInjector = undefined;
      }
      expect(errorOf(res)).toEqual(
        err(503, 17006, 'The template could not be fetched: the template store is unavailable, try again'),
      );
      expect(JSON.stringify(res.body)).not.toMatch(/boom|10\.0\.0\.7/);
      // The store is back: the same lookup runs again (the failure was not kept) and finds nothing.
      expect(errorOf(await get('list_id=12&template_id=never-looked-up'))).toEqual(
        err(404, 17006, 'The template could not be fetched: template never-looked-up not found'),
      );
    });

    it('17006/503 when the template store does not answer in time', async () => {
      // The service waits 5 s; the handler is called directly here with a 100 ms limit.
      const deps = {
        catalog: svc.catalog,
        renderer: new TemplateRenderer(),
        log: svc.log,
        templateFetchTimeoutMs: 100,
      };
      const caller = { userId: String(A.user), apiKey: A.key };
      await new Promise((r) => setTimeout(r, 600));
      expect((await get('list_id=12&template_id=plain')).status).toBe(200);
      svc.db.faultInjector = () => new Promise((r) => setTimeout(r, 1_000));
      let error: unknown;
      try {
        await transactionalTemplateRender(deps, caller, { list_id: 12, template_id: 'slow-never-looked-up' });
      } catch (e) {
        error = e;
      } finally {
        svc.db.faultInjector = undefined;
      }
      expect(error).toBeInstanceOf(ApiError);
      expect({ ...(error as ApiError).toJSON(), status: (error as ApiError).status }).toEqual({
        err: true,
        code: 17006,
        message: 'The template could not be fetched: the template store did not answer in time, try again',
        status: 503,
      });
    });

    it('17007/422 with line and column for templates that do not compile, and for render failures', async () => {
      const rendered = (reason: string) => err(422, 17007, `The template could not be rendered: ${reason}`);
      expect(errorOf(await get('list_id=11&template_id=broken'))).toEqual(
        rendered('Parse error (line 2, column 17): unexpected end of template (is a {{#block}} not closed?)'),
      );
      expect(errorOf(await get('list_id=11&template_id=mismatched'))).toEqual(
        rendered("each doesn't match if (line 2, column 6)"),
      );
      expect(errorOf(await get('list_id=11&template_id=broken-props'))).toEqual(
        rendered(
          'props.subject: Parse error (line 1, column 11): unexpected end of template (is a {{#block}} not closed?)',
        ),
      );
      expect(
        errorOf(await postJson({ list_id: 11, template_id: 'money', params: { amount: 'abc' } })),
      ).toEqual(rendered('formatMoney: "abc" is not a number'));
      expect(errorOf(await get('list_id=11&template_id=partial'))).toEqual(
        rendered('The partial evil could not be found'),
      );
      // The same template renders once its params are right: nothing bad was cached.
      expect(
        (await postJson({ list_id: 11, template_id: 'money', params: { amount: '12.5' } })).body.content,
      ).toBe(`12,50${NBSP}RON`);
    });
  });

  describe('account selection', () => {
    it('uses the default account, even when it is not the first one', async () => {
      expect((await get('list_id=17&template_id=who')).body.content).toBe('the default');
      expect((await get('list_id=11&template_id=hello')).body.content).toBe('<p>Hi  </p>');
    });

    it('uses the only account when none is marked default', async () => {
      const res = await get('list_id=12&template_id=plain');
      expect(res.status).toBe(200);
      expect(res.body.content).toBe('Hi   ');
    });

    it('uses account_id when given; false, "false" and "" mean not given', async () => {
      expect((await get('list_id=17&template_id=who&account_id=a17-first')).body.content).toBe('first');
      expect((await get('list_id=13&template_id=who&account_id=a13x')).body.content).toBe('x');
      expect((await postJson({ list_id: 11, template_id: 'hello', account_id: 'a11b' })).body.content).toBe(
        'second account ',
      );
      for (const none of ['account_id=false', 'account_id=']) {
        expect((await get(`list_id=17&template_id=who&${none}`)).body.content).toBe('the default');
      }
      expect((await postJson({ list_id: 17, template_id: 'who', account_id: false })).body.content).toBe(
        'the default',
      );
    });
  });

  describe('versions and deletion', () => {
    it('serves the latest version; a newer one as soon as it is stored; an older one arriving late does not win', async () => {
      expect((await get('list_id=11&template_id=v')).body.content).toBe('version three');
      await svc.ingest([template('v', 'a11', 'version {{n}}', { version: 4 })]);
      expect((await get('list_id=11&template_id=v&params={"n":"four"}')).body.content).toBe('version four');
      await svc.ingest([template('v', 'a11', 'late version two', { version: 2 })]);
      expect((await get('list_id=11&template_id=v&params={"n":4}')).body.content).toBe('version 4');
    });

    it('a deleted version hides the template; a newer version brings it back', async () => {
      await svc.ingest([template('v', 'a11', 'x', { version: 5, deleted: true })]);
      expect(errorOf(await get('list_id=11&template_id=v'))).toEqual(
        err(404, 17006, 'The template could not be fetched: template v not found'),
      );
      await svc.ingest([template('v', 'a11', 'version six', { version: 6 })]);
      expect((await get('list_id=11&template_id=v')).body.content).toBe('version six');
    });

    it('without versions, the record that arrived last wins', async () => {
      await svc.ingest([template('arrival', 'a11', 'first')]);
      expect((await get('list_id=11&template_id=arrival')).body.content).toBe('first');
      await svc.ingest([template('arrival', 'a11', 'second')]);
      expect((await get('list_id=11&template_id=arrival')).body.content).toBe('second');
    });
  });

  describe('escaping', () => {
    const nasty = `<b>"Ana" & 'co'</b>`;

    it('html: {{x}} is escaped, {{{x}}} raw; props are rendered unescaped, non-strings as stored', async () => {
      const res = await postJson({
        list_id: 11,
        template_id: 'hello',
        params: { name: nasty, raw: '<i>ok</i>' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        content: '<p>Hi &lt;b&gt;&quot;Ana&quot; &amp; &#x27;co&#x27;&lt;/b&gt; <i>ok</i></p>',
        engine: 'handlebars',
        type: 'html',
        props: {
          subject: `Hi ${nasty} & co`,
          n: 3,
          flag: true,
          none: null,
          nested: { s: `${nasty}!` },
          list: ['<i>ok</i>', 1],
        },
      });
    });

    it('text: nothing is escaped; props null when the template has none', async () => {
      const res = await postJson({
        list_id: 12,
        template_id: 'plain',
        params: { name: nasty, raw: '<i>', x: '&' },
      });
      expect(res.body).toEqual({
        content: `Hi ${nasty} <i> &`,
        engine: 'handlebars',
        type: 'text',
        props: null,
      });
    });

    it('json helper output is escaped in html', async () => {
      const res = await postJson({ list_id: 11, template_id: 'json', params: { o: { a: '<x>' } } });
      expect(res.body.content).toBe('{&quot;a&quot;:&quot;&lt;x&gt;&quot;}');
    });
  });

  describe('params in every form clients send them', () => {
    const expected = '<p>Hi Ana <i>r</i></p>';
    const values = { name: 'Ana', raw: '<i>r</i>' };
    const encoded = JSON.stringify(values);

    it('GET with a JSON body: params as an object and as a JSON-encoded string', async () => {
      for (const params of [values, encoded]) {
        const res = await getWithBody(PATH(A), JSON.stringify({ list_id: 11, template_id: 'hello', params }));
        expect(res.status).toBe(200);
        expect(res.body.content).toBe(expected);
      }
    });

    it('POST JSON: params as an object and as a JSON-encoded string; ids as JSON numbers', async () => {
      for (const params of [values, encoded]) {
        expect((await postJson({ list_id: 11, template_id: 'hello', params })).body.content).toBe(expected);
      }
      expect((await postJson({ list_id: '11', template_id: 'hello', params: values })).body.content).toBe(
        expected,
      );
    });

    it('form body: params as a JSON-encoded field, and as PHP-style params[name] fields', async () => {
      const form = `list_id=11&template_id=hello&template_engine=handlebars&params=${encodeURIComponent(encoded)}`;
      const res = await postForm(form);
      expect(res.status).toBe(200);
      expect(res.body.content).toBe(expected);
      const php = await postForm(
        'list_id=11&template_id=hello&params[name]=Ana&params[raw]=%3Ci%3Er%3C%2Fi%3E',
      );
      expect(php.body.content).toBe(expected);
    });

    it('query string: params JSON-encoded; the body wins over the query string', async () => {
      expect(
        (await get(`list_id=11&template_id=hello&params=${encodeURIComponent(encoded)}`)).body.content,
      ).toBe(expected);
      const res = await postJson(
        { template_id: 'hello', params: values },
        A,
        `?list_id=11&template_id=missing&params=${encodeURIComponent('{"name":"Query"}')}`,
      );
      expect(res.body.content).toBe(expected);
    });

    it('false, "false", "", null, "null" and [] (PHP\'s empty array) mean no params', async () => {
      for (const params of [false, 'false', '', null, 'null', [], '[]']) {
        const res = await postJson({ list_id: 11, template_id: 'hello', params });
        expect({ params, status: res.status, content: res.body.content }).toEqual({
          params,
          status: 200,
          content: '<p>Hi  </p>',
        });
      }
    });

    it('formats with the list locale, time zone and currency', async () => {
      expect((await get('list_id=11&template_id=locale&params={"amount":1234.5}')).body.content).toBe(
        `1.234,50${NBSP}RON|2026-11-02 05:30|1.234,50`,
      );
      expect((await get('list_id=16&template_id=locale&params={"amount":1234.5}')).body.content).toBe(
        '$1,234.50|2026-11-01 22:30|1,234.50',
      );
    });
  });

  describe('security', () => {
    const pollution =
      '{"__proto__":{"polluted":"yes"},"constructor":{"name":"x"},"prototype":1,"a":{"__proto__":{"b":1},"k":2},"name":"Ana"}';

    it('prototype-access payloads render nothing, in html, text and props', async () => {
      for (const id of ['proto', 'proto-text']) {
        const res = await svc.call(PATH(A), {
          method: 'POST',
          body: `{"list_id":11,"template_id":"${id}","params":${pollution}}`,
          contentType: 'application/json',
        });
        expect(res.status).toBe(200);
        expect(res.body.content).toBe(EMPTY_PAYLOAD_OUTPUT);
        expect(res.body.content).not.toContain('uid=');
        if (id === 'proto-text') expect(res.body.props).toEqual({ s: EMPTY_PAYLOAD_OUTPUT });
      }
      expect((globalThis as Record<string, unknown>).hbsPwned).toBeUndefined();
    });

    it('__proto__, constructor and prototype keys in params are dropped and pollute nothing', async () => {
      const res = await svc.call(PATH(A), {
        method: 'POST',
        body: `{"list_id":11,"template_id":"keys","params":${pollution}}`,
        contentType: 'application/json',
      });
      expect(res.status).toBe(200);
      expect(res.body.content).toBe('a=[object Object];name=Ana;|k;|');
      // The same through a JSON-encoded string and through PHP-style form fields.
      const viaString = await postJson({ list_id: 11, template_id: 'keys', params: pollution });
      expect(viaString.body.content).toBe('a=[object Object];name=Ana;|k;|');
      const viaForm = await postForm(
        'list_id=11&template_id=keys&params[__proto__]=yes&params[constructor]=x&params[name]=Ana&__proto__[polluted]=yes',
      );
      expect(viaForm.status).toBe(200);
      expect(viaForm.body.content).toBe('name=Ana;||');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('a __defineGetter__ call is a missing helper (17007), not a call into the prototype', async () => {
      expect(errorOf(await get('list_id=11&template_id=getter'))).toEqual(
        err(422, 17007, 'The template could not be rendered: Missing helper: "__defineGetter__"'),
      );
      expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('later renders are unchanged by the payloads', async () => {
      expect((await postJson({ list_id: 11, template_id: 'keys', params: {} })).body.content).toBe('||');
      expect((await postJson({ list_id: 11, template_id: 'proto', params: {} })).body.content).toBe(
        EMPTY_PAYLOAD_OUTPUT,
      );
      const res = await postJson({ list_id: 11, template_id: 'hello', params: { name: 'Bo', raw: '<b>' } });
      expect(res.body.content).toBe('<p>Hi Bo <b></p>');
      expect(res.body.props.subject).toBe('Hi Bo & co');
    });
  });

  describe('tenant isolation', () => {
    it("a user never reaches another tenant's template, whatever list or account it names", async () => {
      // B's own template, as a control: it exists and renders for B.
      expect((await get('list_id=19&template_id=secret', B)).body.content).toBe('tenant B secret');
      // A names B's list: 101, with or without B's account.
      expect((await get('list_id=19&template_id=secret')).body.code).toBe(101);
      expect((await get('list_id=19&template_id=secret&account_id=a19')).body.code).toBe(101);
      // A names its own list with B's account: the account is not of this list.
      expect(errorOf(await get('list_id=11&template_id=secret&account_id=a19'))).toEqual(
        err(404, 17003, 'Could not find the SMTP account'),
      );
      // A's own list without an account: the template is looked up under A's account only.
      expect((await get('list_id=11&template_id=secret')).body.code).toBe(17006);
      // B names A's list: 101.
      expect((await get('list_id=11&template_id=hello', B)).body.code).toBe(101);
    });

    it("a list's template is not reachable through another list of the same user", async () => {
      // list 12's account a12 owns "plain"; naming it with list 11 does not resolve.
      expect(errorOf(await get('list_id=11&template_id=plain&account_id=a12'))).toEqual(
        err(404, 17003, 'Could not find the SMTP account'),
      );
      // The same holds for the demo tenant: list 2's account with list 1.
      const demo = { user: DEMO.userId, key: DEMO.apiKey };
      expect(errorOf(await get('list_id=1&template_id=welcome-text&account_id=acc-news', demo))).toEqual(
        err(404, 17003, 'Could not find the SMTP account'),
      );
      expect(
        (await get('list_id=2&template_id=welcome-text&params={"name":"Ana","list":"News"}', demo)).body,
      ).toEqual({ content: 'Hello Ana, welcome to News!', engine: 'handlebars', type: 'text', props: null });
    });
  });

  it('renders the demo order confirmation (the README example)', async () => {
    const demo = { user: DEMO.userId, key: DEMO.apiKey };
    const res = await postJson(
      { list_id: 1, template_id: 'order-confirmation', params: DEMO_ORDER_PARAMS },
      demo,
    );
    expect(res.status).toBe(200);
    expect(res.body.type).toBe('html');
    expect(res.body.props).toEqual({
      subject: 'Ana, your order #10057 is confirmed',
      from_name: 'Demo Shop',
    });
    const html: string = res.body.content;
    expect(html).toContain('Thank you for your order, Ana!');
    expect(html).toContain('placed on 02.11.2026, 12:15.');
    expect(html).toContain(`<td align="right">179,80${NBSP}RON</td>`);
    expect(html).toContain('Discount (WELCOME10)');
    expect(html).toContain(`<strong>295,92${NBSP}RON</strong>`);
    expect(html).toContain('030031 București');
    expect(html).not.toContain('{{');
  });
});
