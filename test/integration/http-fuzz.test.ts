// Modes: embedded only — the HTTP edge under fuzzed input, independent of the store
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger, rawRequest } from '../support/raw-http.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Fuzzing the real service's HTTP surface (docs/api.md "Errors", "Authentication"): methods, hostile path shapes, query
 * values, content types, encodings (proper, corrupt, truncated), headers and body sizes, over raw
 * sockets so that paths arrive byte for byte. Every answer: never a 5xx, always the exact error object
 * with the documented status for its code, an X-Request-Id; no captured log line ever holds the api
 * key or the ingest token. Seeded: a failure reproduces. FUZZ_RUNS overrides the number of cases.
 */
const USER = 21;
const KEY = 'fuzzkey-5b3d9e0a7c41';
const TOKEN = 'fuzz-ingest-token-c08e2f6a19-abcdef0123456789';
const LIST = 100;
/** Distinctive tails: a %-encoded or case-changed variant of a secret still carries them. */
const KEY_TAIL = '5b3d9e0a7c41';
const TOKEN_TAIL = 'c08e2f6a19';
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

/** The HTTP status each error code travels with (docs/api.md "Errors", the edge's own codes included). */
const STATUS_OF_CODE: Record<number, number[]> = {
  407: [400],
  406: [400],
  101: [403],
  17003: [404],
  17004: [409],
  17006: [404],
  17007: [422],
  404: [404],
  413: [413],
  415: [415],
  405: [405],
  400: [400],
  401: [401],
  408: [408],
  431: [431],
};

const { log, lines } = capturingLogger('debug');
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ INGEST_TOKEN: TOKEN }, { log });
  const res = await svc.ingest(
    [
      ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'America/New_York' }] }),
      { type: 'smtp_account', account_id: 'acc-1', list_id: LIST, active: true, is_default: true },
      { type: 'template', template_id: 'tpl-1', account_id: 'acc-1', content: 'Hi {{name}}', props: null },
      ...[1, 2].map((s) => ({
        type: 'send',
        event_id: `fuzz-send-${s}`,
        list_id: LIST,
        workflow_id: 1,
        subscriber_id: s,
        timestamp: '2025-03-10T15:00:00Z',
      })),
    ],
    TOKEN,
  );
  expect(res.body.rejected).toEqual([]);
});

afterAll(() => svc?.stop());

const hostile = fc.oneof(
  fc.constantFrom(
    '1',
    String(LIST),
    '0',
    '-1',
    'false',
    '',
    'null',
    '1e3',
    '2025-03-10',
    '2025-03-10 10:00:00',
    '2026-11-02T10:15:00+0200',
    '9999-99-99',
    '2025-13',
    '[1,2]',
    '{"a":1}',
    '%00',
    '%ZZ',
    '__proto__',
    'constructor',
    '{{#each this}}{{/each}}',
    KEY,
    TOKEN,
    '\u{1F600}',
    '9007199254740993',
  ),
  fc.string({ maxLength: 12 }),
  fc.integer().map(String),
);
const paramName = fc.constantFrom(
  'list_id',
  'workflow_ids',
  'workflow_ids[]',
  'trigger_id',
  'start_date',
  'stop_date',
  'days',
  'month',
  'account_id',
  'template_id',
  'template_engine',
  'params',
  'params[name]',
  '__0__',
  '__proto__',
  'x',
);
const query = fc
  .array(fc.tuple(paramName, hostile), { maxLength: 6 })
  .map((pairs) => pairs.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join('&'));

const segment = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom('automation.stats.json', 'transactional.templateRender.json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'list.all.json',
      'automation.stats',
      'automation.stats.xml',
      'nope.json',
      '..',
      '.',
      '',
      '%2e%2e',
      KEY,
      'ü',
      '\u{1F600}.json',
      '%ZZ',
      'a%2Fb',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map(encodeURIComponent) },
);
/** Mostly the API's own shape (so the operations are reached), often a hostile variant of it. */
const weighted = <T>(usual: T, usualWeight: number, others: T[]) =>
  fc.oneof(
    { weight: usualWeight, arbitrary: fc.constant(usual) },
    { weight: 3, arbitrary: fc.constantFrom(...others) },
  );
const path = fc
  .record({
    prefix: weighted('/api/1.2/rest', 40, [
      '/API/1.2/REST',
      '/api//1.2/rest',
      '/%61pi/1.2/rest',
      '/api%2F1.2/rest',
      '/api/1.2/./rest',
      '/api/1.2/rest/..',
      '/api/1.2/xmlrpc',
      '/api/1.2',
      '',
      '/ingest',
      '/health',
    ]),
    user: weighted(String(USER), 16, ['22', '0', 'x', '', '%32%31', '21.0', '99999999999999999999']),
    key: weighted(KEY, 10, [
      KEY.toUpperCase(),
      `%66${KEY.slice(1)}`,
      'wrong-key',
      'wrong-key',
      '',
      `${KEY}%ZZ`,
    ]),
    op: segment,
    extra: fc.oneof(
      { weight: 20, arbitrary: fc.constant([]) },
      { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 2 }) },
    ),
    query: fc.option(
      fc.tuple(fc.boolean(), query).map(([withList, q]) => (withList ? `list_id=${LIST}&${q}` : q)),
      { nil: undefined, freq: 4 },
    ),
    huge: fc.integer({ min: 0, max: 60 }),
  })
  .map(({ prefix, user, key, op, extra, query: q, huge }) => {
    let p =
      prefix === '/ingest' || prefix === '/health' ? prefix : [prefix, user, key, op, ...extra].join('/');
    if (q !== undefined) p += `?${q}`;
    // Now and then a path far over Node's head limit (16 KiB) or just under it.
    if (huge === 0) p += (p.includes('?') ? '&' : '?') + `x=${'a'.repeat(20_000)}`;
    if (huge === 1) p += (p.includes('?') ? '&' : '?') + `x=${'b'.repeat(12_000)}`;
    return p;
  });

const bodyValue = fc.oneof(
  hostile,
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer({ min: -2, max: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('name', '__proto__', 'constructor', 'a'), hostile, { maxKeys: 2 }),
);
const body = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  {
    weight: 5,
    arbitrary: fc.dictionary(paramName, bodyValue, { maxKeys: 6 }).map((o) => Buffer.from(JSON.stringify(o))),
  },
  { weight: 2, arbitrary: query.map((q) => Buffer.from(q)) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((j) => Buffer.from(j)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        '{"list_id": ',
        '[]',
        '{"type":"list","list_id":5,"name":"x"}\n[]\nnot json',
        JSON.stringify({ list_id: LIST, params: { name: KEY } }),
      )
      .map((s) => Buffer.from(s)),
  },
  // Just under and over the API's 1 MiB limit (ingest's 10 MiB: ingest-route.test.ts).
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(1024 * 1024 - 64, 1024 * 1024 + 1)
      .map((n) => Buffer.from(`{"list_id":${LIST},"pad":"${'x'.repeat(n - 30)}"}`)),
  },
);

/** `arb` in `percent`% of cases, else undefined. */
const sometimes = <T>(arb: fc.Arbitrary<T>, percent: number) =>
  fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });

const request = fc.record({
  method: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('GET', 'POST') },
    {
      weight: 2,
      arbitrary: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'TRACE'),
    },
  ),
  target: path,
  contentType: sometimes(
    fc.constantFrom(
      'application/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'text/plain',
      'application/json; charset=utf-16',
      'application/json; charset=nonsense',
      'application/x-ndjson',
      '',
      '*/*',
    ),
    60,
  ),
  encoding: sometimes(
    fc.constantFrom('identity', 'gzip', 'deflate', 'br', 'GZIP', 'x-gzip', 'zstd', '*', 'gzip, gzip', ''),
    30,
  ),
  encodingMode: fc.constantFrom('proper', 'proper', 'corrupt', 'truncated'),
  authorization: sometimes(
    fc.constantFrom(`Bearer ${TOKEN}`, 'Bearer wrong', TOKEN, `Bearer ${KEY}`, 'Basic Zm9vOmJhcg=='),
    30,
  ),
  requestId: sometimes(fc.constantFrom('fuzz-req-1', 'x'.repeat(300), 'bad id', '\u00e9t\u00e9'), 20),
  body,
});

function encode(body: Buffer, encoding: string | undefined, mode: string): Buffer {
  const e = encoding?.toLowerCase();
  if (mode === 'corrupt' || (e !== 'gzip' && e !== 'deflate' && e !== 'br')) return body;
  const packed =
    e === 'gzip' ? gzipSync(body) : e === 'deflate' ? deflateSync(body) : brotliCompressSync(body);
  return mode === 'truncated' ? packed.subarray(0, Math.max(0, packed.length - 3)) : packed;
}

describe('fuzzed requests against the real service', () => {
  it(`${RUNS} requests: never a 5xx, always the error object with its status, no secret in the log`, async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: [string, string][] = [];
        if (r.contentType !== undefined) headers.push(['Content-Type', r.contentType]);
        if (r.encoding !== undefined) headers.push(['Content-Encoding', r.encoding]);
        if (r.authorization !== undefined) headers.push(['Authorization', r.authorization]);
        if (r.requestId !== undefined) headers.push(['X-Request-Id', r.requestId]);
        const sent = r.body === undefined ? undefined : encode(r.body, r.encoding, r.encodingMode);
        const res = await rawRequest(svc.url!, { method: r.method, target: r.target, headers, body: sent });
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        const what = `${r.method} ${r.target.slice(0, 200)} → ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, what).toBeLessThan(500);
        expect(res.headers['x-request-id'], what).toBeTruthy();
        expect(res.text, what).not.toContain(TOKEN_TAIL);
        if (r.method === 'HEAD') return;
        expect(res.json, what).not.toBeUndefined();
        if (res.status === 200) return;
        expect(Object.keys(res.json).sort(), what).toEqual(['code', 'err', 'message']);
        expect(res.json.err, what).toBe(true);
        expect(typeof res.json.message, what).toBe('string');
        expect(STATUS_OF_CODE[res.json.code], what).toContain(res.status);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The run reached the operations, not only the edge's refusals.
    expect(seen.get(200) ?? 0).toBeGreaterThan(RUNS / 100);
    expect(seen.get(403) ?? 0).toBeGreaterThan(0);
    expect(seen.get(404) ?? 0).toBeLessThan(RUNS / 2);

    await new Promise((r) => setTimeout(r, 200));
    expect(lines.filter((l) => JSON.parse(l).msg === 'request').length).toBeGreaterThan(RUNS / 2);
    for (const line of lines) {
      expect(line).not.toContain(KEY_TAIL);
      expect(line).not.toContain(TOKEN_TAIL);
    }
  }, 300_000);
});
