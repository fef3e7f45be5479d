// Modes: embedded only — the documented schemas do not depend on the mode; not in SERVER_SUITES
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORDS_SCHEMA_FILE, recordsSchemaText } from '../../scripts/schemas.js';
import { recordSchema } from '../../shared/records/index.js';
import { REST_OPERATIONS, STATS_PARAMETERS } from '../support/api-operations.js';
import { sha256, startTestService, tenant, type TestService } from '../support/service.js';

/**
 * /openapi.json is a valid OpenAPI 3.1 document, and the real answers of every operation (successes and
 * each API error) match the response schema it documents for their path, method and status.
 * list.all is documented from docs/api.md but not served by this build yet, so it is not called here.
 */
const USER = 71;
const KEY = 'openapi-key-71';
const LIST = 81;
const base = (op: string) => `/api/1.2/rest/{user_id}/{api_key}/${op}.json`;

type Doc = {
  openapi: string;
  tags: { name: string }[];
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, unknown> };
};

describe('OpenAPI document', () => {
  let svc: TestService;
  let doc: Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });

  /** The documented response schema for a path, method and status, resolved against the document. */
  function responseSchema(path: string, method: 'get' | 'post', status: number) {
    const response = doc.paths[path]?.[method]?.responses?.[String(status)];
    if (!response) throw new Error(`${method.toUpperCase()} ${path} documents no ${status} answer`);
    const schema = response.content['application/json'].schema;
    return ajv.compile({ ...schema, components: doc.components });
  }

  /** Call an operation by GET and by POST (params as a JSON body) and check both answers. */
  async function expectDocumented(op: string, params: Record<string, unknown>, status: number, who = KEY) {
    const path = `/api/1.2/rest/${USER}/${who}/${op}.json`;
    const query = new URLSearchParams(
      Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
    const answers = [
      ['get', await svc.call(`${path}?${query}`)],
      [
        'post',
        await svc.call(path, {
          method: 'POST',
          body: JSON.stringify(params),
          contentType: 'application/json',
        }),
      ],
    ] as const;
    for (const [method, answer] of answers) {
      expect(answer.status, `${method} ${op} ${JSON.stringify(params)}`).toBe(status);
      const validate = responseSchema(base(op), method, status);
      expect(validate(answer.body), `${method} ${op}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    return answers[0][1].body;
  }

  beforeAll(async () => {
    svc = await startTestService();
    // Noon (UTC) yesterday: every record below falls on one date in the list's zone (Bucharest), which is
    // inside the last 3 days at any time of day (with Date.now() the day's records split at midnight there).
    const now = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 43_200_000;
    const records = [
      ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }, { list_id: LIST + 1 }] }),
      { type: 'user', user_id: USER + 1, api_key_sha256: sha256('other') },
      { type: 'smtp_account', account_id: 'oa-acc', list_id: LIST, active: true, is_default: true },
      { type: 'smtp_account', account_id: 'oa-off', list_id: LIST + 1, active: false, is_default: true },
      {
        type: 'template',
        template_id: 'oa-html',
        account_id: 'oa-acc',
        content: '<p>Hi {{name}}</p>',
        props: { subject: 'Order for {{name}}', tags: ['a', 1] },
      },
      { type: 'template', template_id: 'oa-text', account_id: 'oa-acc', content: 'Hi', content_type: 'text' },
      { type: 'template', template_id: 'oa-bad', account_id: 'oa-acc', content: '{{#if}}' },
      ...[1, 2, 3].flatMap((s) => [
        {
          type: 'send',
          event_id: `oa-s${s}`,
          list_id: LIST,
          workflow_id: 5,
          subscriber_id: s,
          timestamp: now - 7_200_000,
        },
        {
          type: 'open',
          event_id: `oa-o${s}`,
          list_id: LIST,
          workflow_id: 5,
          subscriber_id: s,
          timestamp: now - 3_600_000,
        },
      ]),
      {
        type: 'purchase',
        event_id: 'oa-p1',
        list_id: LIST,
        workflow_id: 5,
        subscriber_id: 1,
        timestamp: now - 1_800_000,
        order_id: 'o-1',
        value_ron: '1234.5',
        value_eur: 248.1,
      },
      {
        type: 'action',
        event_id: 'oa-a1',
        list_id: LIST,
        workflow_id: 5,
        subscriber_id: 2,
        timestamp: now - 1_000,
        status: 'failed',
        reason: 'x',
      },
    ];
    expect((await svc.ingest(records)).body).toEqual({ accepted: records.length, rejected: [] });
    doc = (await svc.call('/openapi.json')).body;
  });
  afterAll(() => svc?.stop());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every operation under the REST path, by GET and POST, and POST /ingest', () => {
    for (const op of REST_OPERATIONS) {
      const item = doc.paths[base(op)]!;
      // The credentials first in each operation's own list (a path-level list would come after it, last).
      expect(item.parameters, op).toBeUndefined();
      expect(Object.keys(item).sort()).toEqual(['get', 'post']);
      for (const method of ['get', 'post'] as const)
        expect(
          item[method].parameters.slice(0, 2).map((p: { name: string; in: string }) => `${p.in}:${p.name}`),
          `${method} ${op}`,
        ).toEqual(['path:user_id', 'path:api_key']);
    }
    const stats = doc.paths[base('automation.stats')]!.get;
    expect(stats.parameters.map((p: { name: string }) => p.name)).toEqual([
      'user_id',
      'api_key',
      ...STATS_PARAMETERS,
    ]);
    const render = doc.paths[base('transactional.templateRender')]!.post;
    expect(Object.keys(render.responses).sort()).toEqual(
      ['200', '400', '403', '404', '409', '413', '415', '422', '500', '503'].sort(),
    );
    expect(doc.paths['/ingest']!.post.requestBody.content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Record' },
    });
  });

  it('groups the operations: each once by GET under "API 1.2", the POST (body) variants under a tag after it', () => {
    const tags = doc.tags.map((t) => t.name);
    expect(tags.slice(0, 2)).toEqual(['API 1.2', 'API 1.2 with a body (POST)']);
    const tagged = (tag: string) =>
      Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([, op]) => op?.tags?.includes(tag))
          .map(([method]) => `${method} ${path}`),
      );
    expect(tagged('API 1.2').sort()).toEqual(REST_OPERATIONS.map((op) => `get ${base(op)}`).sort());
    expect(tagged('API 1.2 with a body (POST)').sort()).toEqual(
      REST_OPERATIONS.map((op) => `post ${base(op)}`).sort(),
    );
    for (const op of REST_OPERATIONS)
      for (const method of ['get', 'post'] as const)
        expect(doc.paths[base(op)]![method].tags, `${method} ${op}`).toHaveLength(1);
  });

  it('swagger-ui has nothing to warn about: no jsonSchemaDialect other than its default', () => {
    // swagger-ui 5 shows a red "Warning" box for any jsonSchemaDialect but OpenAPI 3.1's own default
    // (its selectJsonSchemaDialectDefault), which applies anyway when the field is absent.
    expect([undefined, 'https://spec.openapis.org/oas/3.1/dialect/base']).toContain(
      (doc as { jsonSchemaDialect?: string }).jsonSchemaDialect,
    );
  });

  it('every parameter has a description and an example that its schema accepts', () => {
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of ['get', 'post'] as const) {
        const op = item[method];
        if (!op) continue;
        const params = [...(item.parameters ?? []), ...(op.parameters ?? [])] as {
          name: string;
          description?: string;
          example?: unknown;
          schema: object;
        }[];
        for (const p of params) {
          const where = `${method.toUpperCase()} ${path} ${p.name}`;
          expect(p.description?.trim().length ?? 0, `${where}: description`).toBeGreaterThan(10);
          // days and month have none: /docs's "Try it out" would send them with the dates, which win
          // over them (docs/api.md "Period"); their descriptions give an example instead.
          if (p.name === 'days' || p.name === 'month') {
            expect(p.example, `${where}: no example`).toBeUndefined();
            expect(p.description, where).toMatch(/e\.g\. /);
          } else {
            expect(p.example, `${where}: example`).toBeDefined();
            const validate = ajv.compile({ ...p.schema, components: doc.components });
            expect(validate(p.example), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
          }
          // A readable type: one JSON type, not a union swagger-ui prints as "(integer | string) | …".
          expect(JSON.stringify(p.schema), where).not.toMatch(/"(anyOf|oneOf)"/);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('requests and answers carry examples that their schemas accept', () => {
    for (const op of REST_OPERATIONS) {
      const item = doc.paths[base(op)]!;
      const body = item.post.requestBody.content['application/json'];
      expect(body.example, `${op} request example`).toBeDefined();
      const params = ajv.compile({ ...body.schema, components: doc.components });
      expect(params(body.example), `${op} request: ${ajv.errorsText(params.errors)}`).toBe(true);
      for (const method of ['get', 'post'] as const) {
        for (const [status, response] of Object.entries(item[method].responses) as [string, any][]) {
          const content = response.content['application/json'];
          expect(content.example, `${method} ${op} ${status} example`).toBeDefined();
          const validate = ajv.compile({ ...content.schema, components: doc.components });
          expect(validate(content.example), `${op} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        }
      }
    }
    const ingest = doc.paths['/ingest']!.post;
    expect(ingest.requestBody.content['application/x-ndjson'].example).toMatch(/"type":"send"/);
    expect(ingest.responses['200'].content['application/json'].example).toMatchObject({ accepted: 2 });
  });

  it('GET /ingest/catalog (the admin CLI read) is documented, behind the ingest token', () => {
    const op = doc.paths['/ingest/catalog']!.get;
    expect(op.security).toEqual([{ ingestToken: [] }]);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(['user', 'list']);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401']);
  });

  it('automation.stats answers match the documented schemas (200, 400/407, 400/406, 403/101)', async () => {
    const days = await expectDocumented('automation.stats', { list_id: LIST, days: 3 }, 200);
    expect(days.length).toBeGreaterThan(0);
    expect(days.at(-1)).toMatchObject({
      sends_total: 3,
      purchase_count: 1,
      formatted_revenue_ron: '1.234,50',
    });
    expect(await expectDocumented('automation.stats', { list_id: LIST + 1 }, 200)).toEqual([]);
    expect((await expectDocumented('automation.stats', { days: 3 }, 400)).code).toBe(407);
    expect((await expectDocumented('automation.stats', { list_id: LIST, days: 'x' }, 400)).code).toBe(406);
    expect((await expectDocumented('automation.stats', { list_id: LIST }, 403, 'wrong')).code).toBe(101);
  });

  it('transactional.templateRender answers match the documented schemas (200 and every error)', async () => {
    const html = await expectDocumented(
      'transactional.templateRender',
      { list_id: LIST, template_id: 'oa-html', params: { name: 'Ana' } },
      200,
    );
    expect(html).toEqual({
      content: '<p>Hi Ana</p>',
      engine: 'handlebars',
      type: 'html',
      props: { subject: 'Order for Ana', tags: ['a', 1] },
    });
    const text = await expectDocumented(
      'transactional.templateRender',
      { list_id: LIST, template_id: 'oa-text' },
      200,
    );
    expect(text).toMatchObject({ type: 'text', props: null });
    const codes = [
      [{ list_id: LIST }, 400, 407],
      [{ list_id: LIST, template_id: 'oa-html', template_engine: 'twig' }, 400, 406],
      [{ list_id: LIST + 2, template_id: 'oa-html' }, 403, 101],
      [{ list_id: LIST, template_id: 'oa-html', account_id: 'nope' }, 404, 17003],
      [{ list_id: LIST + 1, template_id: 'oa-html' }, 409, 17004],
      [{ list_id: LIST, template_id: 'missing' }, 404, 17006],
      [{ list_id: LIST, template_id: 'oa-bad' }, 422, 17007],
    ] as const;
    for (const [params, status, code] of codes)
      expect((await expectDocumented('transactional.templateRender', params, status)).code).toBe(code);
  });

  it('list.all answers match the documented schemas (200, 403/101)', async () => {
    const lists = await expectDocumented('list.all', {}, 200);
    expect(lists.map((l: { list_id: string }) => l.list_id)).toContain(String(LIST));
    expect((await expectDocumented('list.all', {}, 403, 'wrong')).code).toBe(101);
  });

  it('automation.workflows and transactional.templates answers match the documented schemas', async () => {
    expect(Array.isArray(await expectDocumented('automation.workflows', { list_id: LIST }, 200))).toBe(true);
    const accounts = await expectDocumented('transactional.templates', { list_id: LIST }, 200);
    expect(
      accounts.flatMap((a: { templates: { template_id: string }[] }) =>
        a.templates.map((t) => t.template_id),
      ),
    ).toContain('oa-html');
    for (const op of ['automation.workflows', 'transactional.templates']) {
      expect((await expectDocumented(op, {}, 400)).code).toBe(407);
      expect((await expectDocumented(op, { list_id: LIST }, 403, 'wrong')).code).toBe(101);
    }
  });

  it('POST /ingest answers match the documented schemas', async () => {
    const answer = await svc.ingest([{ type: 'send' }, '[]' as never]);
    const ok = responseSchema('/ingest', 'post', 200);
    expect(ok(answer.body), ajv.errorsText(ok.errors)).toBe(true);
    expect(answer.body.rejected).toHaveLength(2);
    const denied = await svc.ingest([], 'wrong-token');
    expect(denied.status).toBe(401);
    const error = responseSchema('/ingest', 'post', 401);
    expect(error(denied.body), ajv.errorsText(error.errors)).toBe(true);
  });

  it('the record schema is published, committed up to date, and agrees with the validator', async () => {
    const served = (await svc.call('/schemas/records.json')).body;
    expect(readFileSync(RECORDS_SCHEMA_FILE, 'utf8')).toBe(recordsSchemaText()); // else run `npm run schemas`
    expect(served).toEqual(JSON.parse(recordsSchemaText()));
    const validate = ajv.compile(served);
    const samples: [unknown, boolean][] = [
      [
        {
          type: 'send',
          event_id: 'e',
          list_id: 1,
          workflow_id: 2,
          subscriber_id: 3,
          timestamp: '2026-11-02T10:15:00Z',
        },
        true,
      ],
      [
        {
          type: 'open',
          event_id: 'e',
          list_id: '1',
          workflow_id: 2,
          subscriber_id: 3,
          timestamp: 1_700_000_000_000,
          sent_at: 1_700_000_000_000,
        },
        true,
      ],
      [
        {
          type: 'purchase',
          event_id: 'e',
          list_id: 1,
          workflow_id: 2,
          subscriber_id: 3,
          timestamp: 1,
          order_id: 'o',
          value_ron: '1.5',
          value_eur: 0.3,
        },
        true,
      ],
      [
        {
          type: 'event',
          event_id: 'e',
          list_id: 1,
          workflow_id: 2,
          subscriber_id: 3,
          timestamp: 1,
          status: 'ok',
          extra: 'ignored',
        },
        true,
      ],
      [{ type: 'list', list_id: 1, name: 'L', timezone: 'Europe/Bucharest' }, true],
      [{ type: 'user', user_id: 1, api_key_sha256: 'a'.repeat(64) }, true],
      [{ type: 'template', template_id: 't', account_id: 'a', content: 'x', props: null }, true],
      [{ type: 'send', list_id: 1, workflow_id: 2, subscriber_id: 3, timestamp: 1 }, false],
      [
        {
          type: 'purchase',
          event_id: 'e',
          list_id: 1,
          workflow_id: 2,
          subscriber_id: 3,
          timestamp: 1,
          order_id: 'o',
          value_ron: '1',
        },
        false,
      ],
      [
        {
          type: 'event',
          event_id: 'e',
          list_id: 1,
          workflow_id: 2,
          subscriber_id: 3,
          timestamp: 1,
          status: 'maybe',
        },
        false,
      ],
      [{ type: 'user', user_id: 1, api_key_sha256: 'xyz' }, false],
      [{ type: 'nope', list_id: 1 }, false],
    ];
    for (const [record, valid] of samples) {
      expect(validate(record), JSON.stringify(record)).toBe(valid);
      expect(recordSchema.safeParse(record).success, JSON.stringify(record)).toBe(valid);
    }
  });
});
