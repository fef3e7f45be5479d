// Modes: embedded only — the HTTP edge (encodings, logs, errors), independent of the store
import type { Server } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../query-api/app.js';
import { addDays } from '../../shared/dates.js';
import { capturingLogger, rawExchange, rawRequest, type RawResponse } from '../support/raw-http.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * The HTTP edge (docs/api.md "Errors", "Authentication"; docs/operations.md "Logs"): body encodings, what request logs may hold, the check order
 * around 101, answers to requests Node's parser refuses, methods, 404 messages and request ids.
 */
const USER = 11;
const KEY = 'edge-secret-key-5a1f0c';
const OUTSIDER = 12;
const OUTSIDER_KEY = 'outsider-key-77e2';
const TOKEN = 'test-ingest-token-0123456789abcdef'; // what startTestService configures
const EAST = 100; // Pacific/Kiritimati, UTC+14
const WEST = 200; // Pacific/Pago_Pago, UTC-11
const BUCHAREST = 300;
const UNKNOWN = 999;
const OTHER = 400; // the outsider's own list

const { log, lines } = capturingLogger();
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({}, { log });
  const res = await svc.ingest([
    ...tenant({
      userId: USER,
      apiKey: KEY,
      lists: [
        { list_id: EAST, timezone: 'Pacific/Kiritimati' },
        { list_id: WEST, timezone: 'Pacific/Pago_Pago' },
        { list_id: BUCHAREST, timezone: 'Europe/Bucharest' },
      ],
    }),
    ...tenant({ userId: OUTSIDER, apiKey: OUTSIDER_KEY, lists: [{ list_id: OTHER }] }),
    ...[1, 2, 3].map((s) => ({
      type: 'send',
      event_id: `edge-send-${s}`,
      list_id: BUCHAREST,
      workflow_id: 1,
      subscriber_id: s,
      timestamp: '2025-03-10T10:00:00Z',
    })),
  ]);
  expect(res.body.rejected).toEqual([]);
});

afterAll(() => svc?.stop());

const op = (user: number | string = USER, key = KEY, name = 'automation.stats.json') =>
  `/api/1.2/rest/${user}/${key}/${name}`;
const PERIOD = { list_id: BUCHAREST, start_date: '2025-03-10', stop_date: '2025-03-10' };

/** The exact error object with its status. */
function expectError(res: RawResponse, status: number, code: number, message?: string | RegExp) {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.json ?? {}).sort(), res.text).toEqual(['code', 'err', 'message']);
  expect(res.json.err).toBe(true);
  expect(res.json.code).toBe(code);
  if (typeof message === 'string') expect(res.json.message).toBe(message);
  else if (message) expect(res.json.message).toMatch(message);
}

const post = (target: string, body: Buffer | string, headers: [string, string][] = []) =>
  rawRequest(svc.url!, { method: 'POST', target, body, headers });

describe('the existence and time-zone oracle (docs/api.md "Errors" order)', () => {
  const tomorrowUtc = addDays(new Date().toISOString().slice(0, 10), 1);

  it('start_date = tomorrow (UTC) answers 101 to a caller without access, whatever the list and its zone', async () => {
    for (const [user, key] of [
      [OUTSIDER, OUTSIDER_KEY],
      [USER, 'wrong-key'],
      [987654, 'no-such-user'],
    ] as const) {
      for (const list of [EAST, WEST, BUCHAREST, UNKNOWN]) {
        const res = await rawRequest(svc.url!, {
          target: `${op(user, key)}?list_id=${list}&start_date=${tomorrowUtc}`,
        });
        expectError(res, 403, 101, `Not allowed for list_id = ${list}`);
      }
    }
  });

  it('a period that is invalid only relative to the list\'s "today" is still a 406 for its reader', async () => {
    // Pago Pago (UTC-11) is never already on tomorrow's UTC date.
    const res = await rawRequest(svc.url!, { target: `${op()}?list_id=${WEST}&start_date=${tomorrowUtc}` });
    expectError(res, 400, 406, 'Invalid param stop_date: is before start_date');
  });

  it('period syntax that does not depend on the zone stays a 406 before 101', async () => {
    const res = await rawRequest(svc.url!, {
      target: `${op(OUTSIDER, OUTSIDER_KEY)}?list_id=${EAST}&start_date=2025-03-10&stop_date=2025-03-01`,
    });
    expectError(res, 400, 406, 'Invalid param stop_date: is before start_date');
    const long = await rawRequest(svc.url!, {
      target: `${op(OUTSIDER, OUTSIDER_KEY)}?list_id=${UNKNOWN}&start_date=2020-01-01&stop_date=2025-01-01`,
    });
    expectError(long, 400, 406, /^Invalid param start_date: period longer than/);
  });
});

describe('body encodings (docs/api.md "Errors": identity, gzip, deflate, br)', () => {
  const json = Buffer.from(JSON.stringify(PERIOD));
  const encoded: [string, Buffer][] = [
    ['identity', json],
    ['gzip', gzipSync(json)],
    ['GZIP', gzipSync(json)],
    ['deflate', deflateSync(json)],
    ['br', brotliCompressSync(json)],
  ];

  it.each(encoded)('a %s body is read', async (encoding, body) => {
    const res = await post(op(), body, [
      ['Content-Type', 'application/json'],
      ['Content-Encoding', encoding],
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.json.map((r: any) => [r.date, r.sends_total])).toEqual([['2025-03-10', 3]]);
  });

  it.each(['x-gzip', 'zstd', '*', 'gzip, gzip', 'compress', 'identity, br'])(
    'Content-Encoding %s → 415',
    async (encoding) => {
      const res = await post(op(), gzipSync(json), [
        ['Content-Type', 'application/json'],
        ['Content-Encoding', encoding],
      ]);
      expectError(res, 415, 415, `Unsupported content encoding ${encoding}`);
    },
  );

  it.each(['gzip', 'deflate', 'br'])('a corrupt %s body → 406 Invalid param body', async (encoding) => {
    const valid =
      encoding === 'gzip'
        ? gzipSync(json)
        : encoding === 'deflate'
          ? deflateSync(json)
          : brotliCompressSync(json);
    for (const body of [
      Buffer.from('not compressed at all'),
      valid.subarray(0, valid.length - 4),
      Buffer.alloc(0),
    ]) {
      const res = await post(op(), body, [
        ['Content-Type', 'application/json'],
        ['Content-Encoding', encoding],
      ]);
      if (body.length === 0 && res.status === 200) continue; // an empty body may be read as no params
      expectError(res, 400, 406, /^Invalid param body: /);
    }
  });

  it('XML-RPC: a gzip call is read; unsupported → fault 415, corrupt → fault 406, too large → 413 (HTTP 200)', async () => {
    const call = Buffer.from(
      '<?xml version="1.0"?><methodCall><methodName>list.all</methodName><params></params></methodCall>',
    );
    const xml = async (body: Buffer, encoding: string) => {
      const res = await post(`/api/1.2/xmlrpc/${USER}/${KEY}`, body, [
        ['Content-Type', 'text/xml'],
        ['Content-Encoding', encoding],
      ]);
      expect(res.status, res.text).toBe(200);
      expect(res.text).not.toContain(KEY);
      const code = /<name>faultCode<\/name>\s*<value>\s*<int>(\d+)<\/int>/.exec(res.text)?.[1];
      return { code: code === undefined ? undefined : Number(code), text: res.text };
    };
    expect((await xml(gzipSync(call), 'gzip')).code).toBeUndefined();
    expect(await xml(gzipSync(call), 'zstd')).toMatchObject({ code: 415 });
    expect((await xml(gzipSync(call), 'zstd')).text).toContain('Unsupported content encoding zstd');
    expect(await xml(Buffer.from('not gzip'), 'gzip')).toMatchObject({ code: 406 });
    expect(await xml(gzipSync(Buffer.alloc(3 * 1024 * 1024, 0x20)), 'gzip')).toMatchObject({ code: 413 });
  });

  it('a compressed body larger than the limit once decoded → 413', async () => {
    const bomb = gzipSync(Buffer.alloc(3 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await post(op(), bomb, [
      ['Content-Type', 'application/json'],
      ['Content-Encoding', 'gzip'],
    ]);
    expectError(res, 413, 413, 'Request too large');
  });

  it('POST /ingest: gzip works, unsupported → 415, corrupt → 400', async () => {
    const record = JSON.stringify({ type: 'list', list_id: 777, name: 'via gzip' });
    const auth: [string, string] = ['Authorization', `Bearer ${TOKEN}`];
    const ok = await post('/ingest', gzipSync(record), [auth, ['Content-Encoding', 'gzip']]);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toEqual({ accepted: 1, rejected: [] });
    expectError(
      await post('/ingest', record, [auth, ['Content-Encoding', 'zstd']]),
      415,
      415,
      'Unsupported content encoding zstd',
    );
    expectError(
      await post('/ingest', 'garbage', [auth, ['Content-Encoding', 'gzip']]),
      400,
      400,
      /^Unreadable body: /,
    );
    // The token is checked before the body is read or decoded.
    expectError(
      await post('/ingest', 'garbage', [['Content-Encoding', 'gzip']]),
      401,
      401,
      'Missing or wrong ingest token',
    );
    const other = await rawRequest(svc.url!, { method: 'GET', target: '/ingest' });
    expectError(other, 405, 405);
    expect(other.headers.allow).toBe('POST');
  });
});

describe('405 for other methods (Allow: GET, POST)', () => {
  it.each(['PUT', 'PATCH', 'DELETE', 'OPTIONS'])('%s on an operation → 405', async (method) => {
    const res = await rawRequest(svc.url!, {
      method,
      target: `${op()}?list_id=${BUCHAREST}`,
      body: method === 'OPTIONS' ? undefined : '{}',
      headers: [['Content-Type', 'application/json']],
    });
    expectError(res, 405, 405);
    expect(res.headers.allow).toBe('GET, POST');
    expect(res.text).not.toContain(KEY);
  });
  it('the XML-RPC endpoint takes POST only: 405 with Allow: POST, never the key', async () => {
    for (const method of ['GET', 'PUT']) {
      const res = await rawRequest(svc.url!, { method, target: `/api/1.2/xmlrpc/${USER}/${KEY}` });
      expectError(res, 405, 405);
      expect(res.headers.allow).toBe('POST');
      expect(res.text).not.toContain(KEY);
    }
  });
  it('an unknown operation is a 404 whatever the method (the operation is checked first)', async () => {
    const res = await rawRequest(svc.url!, {
      method: 'PUT',
      target: `/api/1.2/rest/${USER}/${KEY}/no.such.op.json`,
      body: '{}',
      headers: [['Content-Type', 'application/json']],
    });
    expectError(res, 404, 404, 'Unknown API method no.such.op.json');
    expect(res.headers.allow).toBeUndefined();
  });
  it('GET and POST still work', async () => {
    expect((await rawRequest(svc.url!, { target: `${op()}?list_id=${BUCHAREST}` })).status).toBe(200);
    expect((await post(op(), JSON.stringify(PERIOD), [['Content-Type', 'application/json']])).status).toBe(
      200,
    );
  });
});

describe('404 messages never repeat a path segment other than the operation', () => {
  it.each([
    [`/api/1.2/rest/${USER}/${KEY}`],
    [`/api/1.2/rest/${USER}/${KEY}/`],
    [`/api/1.2/rest/${USER}/${KEY}/automation.stats.json/extra`],
    [`/api//1.2/rest/${USER}/${KEY}/automation.stats.json`],
    [`/api/1.2/rest/x/${USER}/${KEY}/automation.stats.json`],
    [`/api/1.2/rest/${USER}/${KEY}%ZZ/automation.stats.json`],
    [`/nothing/${KEY}`],
  ])('%s', async (target) => {
    const res = await rawRequest(svc.url!, { target });
    expectError(res, 404, 404, /^Unknown API method/);
    expect(res.text).not.toContain(KEY);
    expect(res.text).not.toContain(String(USER));
  });
  it('the API shape names its operation segment', async () => {
    const res = await rawRequest(svc.url!, { target: op(USER, KEY, 'automation.nope.json') });
    expectError(res, 404, 404, 'Unknown API method automation.nope.json');
  });
});

describe("Node's HTTP parser refusals answer the error object (clientError)", () => {
  it('a malformed request line → 400 error object', async () => {
    const res = await rawExchange(
      svc.url!,
      Buffer.from(`GET /api/1.2/rest/${USER}/${KEY}/x HTTP/9.x\r\n\r\n`),
    );
    expectError(res, 400, 400, 'Bad request');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });
  it('garbage → 400 error object', async () => {
    expectError(await rawExchange(svc.url!, Buffer.from('\x00\x01\x02 nonsense\r\n\r\n')), 400, 400);
  });
  it('a header with a forbidden character → 400 error object', async () => {
    const res = await rawExchange(
      svc.url!,
      Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n`),
    );
    expectError(res, 400, 400);
  });
  it('a malformed chunked body → an error object, never a bare or garbled answer', async () => {
    const res = await rawExchange(
      svc.url!,
      Buffer.from(
        `POST ${op()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ),
    );
    expect([400, 406]).toContain(res.json?.code);
    expect(res.status).toBe(400);
    expect(Object.keys(res.json).sort()).toEqual(['code', 'err', 'message']);
  });
  it('an oversized head → 431 error object', async () => {
    const res = await rawRequest(svc.url!, {
      target: op(),
      headers: [['X-Filler', 'a'.repeat(40 * 1024)]],
    });
    expectError(res, 431, 431, 'Request header fields too large');
  });
});

describe('request ids (X-Request-Id in and out)', () => {
  it('a sane incoming id is kept and logged; each request line carries it', async () => {
    const id = 'client-id-0123456789abcdef';
    const res = await rawRequest(svc.url!, {
      target: `${op()}?list_id=${BUCHAREST}`,
      headers: [['X-Request-Id', id]],
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe(id);
    await waitForLog((l) => l.req_id === id && l.msg === 'request');
  });
  it.each([['x'.repeat(500)], ['has spaces and "quotes"'], ['']])(
    'an unsafe id %j is replaced',
    async (id) => {
      const res = await rawRequest(svc.url!, {
        target: `${op()}?list_id=${BUCHAREST}`,
        headers: [['X-Request-Id', id]],
      });
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    },
  );
  it('every answer has one, errors and 404s included', async () => {
    for (const target of ['/nowhere', op(USER, KEY, 'nope.json'), `${op()}`]) {
      const res = await rawRequest(svc.url!, { target });
      expect(res.headers['x-request-id'], target).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
  it('a 500 names the request id, which is in the error log line', async () => {
    const { log: appLog, lines: appLines } = capturingLogger();
    const app = createApp({
      log: appLog,
      operations: {
        'boom.now': async () => {
          await new Promise((r) => setTimeout(r, 5));
          appLog.warn('inside the operation');
          throw Object.assign(new Error('unexpected failure'), { body: `leaked ${KEY}` });
        },
      },
      ingest: undefined,
    });
    const server = await new Promise<Server>((ok) => {
      const s = app.listen(0, '127.0.0.1', () => ok(s));
    });
    try {
      const { port } = server.address() as { port: number };
      const res = await rawRequest(`http://127.0.0.1:${port}`, {
        target: `/api/1.2/rest/${USER}/${KEY}/boom.now.json?key=${KEY}`,
        headers: [['Authorization', `Bearer ${TOKEN}`]],
      });
      const id = res.headers['x-request-id']!;
      expectError(res, 500, 500, `Internal error (request ${id})`);
      await new Promise((r) => setTimeout(r, 50));
      const errorLine = appLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unexpected error');
      expect(errorLine?.req_id).toBe(id);
      expect(errorLine?.err?.message).toBe('unexpected failure');
      const inside = appLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'inside the operation');
      expect(inside?.req_id).toBe(id);
      for (const line of appLines) {
        expect(line).not.toContain(KEY);
        expect(line).not.toContain(TOKEN);
      }
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });
});

async function waitForLog(match: (l: any) => boolean): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const found = lines.map((l) => JSON.parse(l)).find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('log line not found');
}

describe('no log line holds an api key or the ingest token, whatever the path shape (docs/api.md "Authentication")', () => {
  const shapes = [
    `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${BUCHAREST}`,
    `/api//1.2/rest/${USER}/${KEY}/automation.stats.json`,
    `/api/1.2//rest/${USER}/${KEY}/automation.stats.json`,
    `/api/1.2/rest//${USER}/${KEY}/automation.stats.json`,
    `/%61pi/1.2/rest/${USER}/${KEY}/automation.stats.json`,
    `/api%2F1.2/rest/${USER}/${KEY}/automation.stats.json`,
    `/api/1.2%2Frest%2F${USER}%2F${KEY}/automation.stats.json`,
    `/api/1.2/rest/x/${USER}/${KEY}/automation.stats.json`,
    `/api/1.2/./rest/${USER}/${KEY}/automation.stats.json`,
    `/api/1.2/rest/../rest/${USER}/${KEY}/automation.stats.json`,
    `/api/1.2/rest/${USER}/${KEY}/../automation.stats.json`,
    `/api/1.2/rest/${USER}/${KEY}/./automation.stats.json`,
    `/API/1.2/REST/${USER}/${KEY}/automation.stats.json`,
    `/api/1.2/rest/${USER}/${KEY}`,
    `/api/1.2/rest/${USER}/${KEY}/`,
    `/api/1.2/rest/${USER}/${KEY}%ZZ/automation.stats.json`,
    `/api/1.2/rest/${USER}/${encodeURIComponent(KEY)}/automation.stats.json`,
    `/api/1.2/rest/${USER}/x/automation.stats.json?api_key=${KEY}&list_id=1`,
    `/api/1.2/rest/${USER}/x/${KEY}`,
    `/${KEY}`,
    `/ingest?token=${TOKEN}`,
  ];

  it('request lines hold the route, operation, method, status, duration and id, nothing from the path', async () => {
    const before = lines.length;
    for (const target of shapes) {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await rawRequest(svc.url!, {
          method,
          target,
          body: method === 'POST' ? `{"list_id":${BUCHAREST}}` : undefined,
          headers: [
            ['Content-Type', 'application/json'],
            ['Authorization', `Bearer ${TOKEN}`],
            ['Referer', `http://x/${KEY}`],
          ],
        });
        expect(res.status, `${method} ${target}: ${res.text}`).toBeLessThan(500);
      }
    }
    // a POST /ingest with the token, and a request Node refuses while it carries the key
    await post('/ingest', '[]', [['Authorization', `Bearer ${TOKEN}`]]);
    await rawExchange(
      svc.url!,
      Buffer.from(`GET /api/1.2/rest/${USER}/${KEY}/x.json HTTP/1.1\r\nBad Header\r\n\r\n`),
    );
    await rawRequest(svc.url!, { target: op(), headers: [['X-Filler', KEY.repeat(2000)]] });
    await new Promise((r) => setTimeout(r, 100));
    const mine = lines.slice(before);
    expect(mine.filter((l) => JSON.parse(l).msg === 'request').length).toBeGreaterThanOrEqual(
      shapes.length * 3,
    );
    for (const line of mine) {
      expect(line).not.toContain(KEY);
      expect(line).not.toContain(encodeURIComponent(KEY));
      expect(line).not.toContain(TOKEN);
      const entry = JSON.parse(line);
      if (entry.msg !== 'request') continue;
      expect(entry).not.toHaveProperty('path');
      expect(entry).not.toHaveProperty('url');
      expect(entry.req_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof entry.status).toBe('number');
    }
    // The matched route is named by its pattern, the operation only when it is one.
    const matched = mine
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request' && l.operation === 'automation.stats');
    expect(matched?.route).toBe('/api/1.2/rest/:userId/:apiKey/:operation');
  });
});
