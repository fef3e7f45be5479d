// Modes: embedded only — asserts engine statements counted on the embedded engine (none for unknown user ids)
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Catalog } from '../../shared/catalog/catalog.js';
import { catalogSchema } from '../../shared/records/index.js';
import { rawExchange, rawRequest, type RawResponse } from '../support/raw-http.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Issue 19 at the HTTP edge: Host-less requests, the credentials checked before any body byte,
 * per-user_id rate limits, unknown user ids without engine queries, failure timing, /readyz reasons.
 */
const RATE = 5; // per second, burst 10
const USER = 21;
const KEY = 'hardening-key-21';
const LIST = 2100;
const OTHER = 22; // another caller, to show it is not slowed
const OTHER_KEY = 'hardening-key-22';
const OTHER_LIST = 2200;

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_PER_KEY: String(RATE) });
  const res = await svc.ingest([
    ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }),
    ...tenant({ userId: OTHER, apiKey: OTHER_KEY, lists: [{ list_id: OTHER_LIST }] }),
  ]);
  expect(res.body.rejected).toEqual([]);
});

afterAll(() => svc?.stop());

const stats = (user: number | string, key: string) => `/api/1.2/rest/${user}/${key}/automation.stats.json`;

function expectError(res: RawResponse, status: number, code: number, message?: string | RegExp) {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.json ?? {}).sort(), res.text).toEqual(['code', 'err', 'message']);
  expect(res.json.err).toBe(true);
  expect(res.json.code).toBe(code);
  if (message !== undefined) expect(res.json.message).toMatch(message);
}

/** Sends a head announcing a body that never comes; resolves with what the server answered (and when). */
function headOnly(
  target: string,
  headers: string[],
): Promise<{ res: RawResponse; closedAfterMs: number; raw: string }> {
  const { hostname, port } = new URL(svc.url!);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error('no answer within 20 s')));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) => {
      if (chunks.length === 0) reject(err);
    });
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const head = raw.slice(0, split).split('\r\n');
      const hdrs: Record<string, string> = {};
      for (const l of head.slice(1))
        hdrs[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const text = raw.slice(split + 4);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({
        res: { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1]), headers: hdrs, text, json },
        closedAfterMs: Date.now() - started,
        raw,
      });
    });
    socket.write(
      `POST ${target} HTTP/1.1\r\nHost: localhost\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`,
    );
  });
}

/** A GET request's bytes, kept alive (so that several can be pipelined on one connection). */
const get = (target: string) => `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`;

/**
 * Writes `requests` at once on one connection bound to `localAddress` (another peer address on
 * loopback), the last one closing it, and reads every answer. Pipelined, the server takes each request's
 * rate-limit token as it parses it, all within one tick: what a test then sees depends on the order of
 * the requests, not on how loaded the machine is.
 */
function pipelined(localAddress: string, requests: string[]): Promise<RawResponse[]> {
  const { hostname, port } = new URL(svc.url!);
  const last = requests.length - 1;
  const bytes = requests
    .map((r, i) => (i === last ? r.replace('\r\n', '\r\nConnection: close\r\n') : r))
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    const chunks: Buffer[] = [];
    socket.setTimeout(30_000, () => socket.destroy(new Error('no answer within 30 s')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const answers: RawResponse[] = [];
      let at = 0;
      while (at < all.length) {
        const split = all.indexOf('\r\n\r\n', at);
        if (split < 0) break;
        const [statusLine, ...lines] = all.subarray(at, split).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines)
          headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        const length = Number(headers['content-length'] ?? 0);
        const text = all.subarray(split + 4, split + 4 + length).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        answers.push({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]), headers, text, json });
        at = split + 4 + length;
      }
      if (answers.length !== requests.length)
        return reject(new Error(`${answers.length} answers to ${requests.length} requests`));
      resolve(answers);
    });
    socket.write(bytes);
  });
}

describe('HTTP/1.1 without Host', () => {
  it('is answered 400 with the error object and the connection closed, on every path', async () => {
    for (const target of ['/healthz', stats(USER, KEY), '/nope']) {
      const res = await rawExchange(svc.url!, Buffer.from(`GET ${target} HTTP/1.1\r\n\r\n`));
      expectError(res, 400, 400, /^Bad request: /);
      expect(res.json.message).toContain('Host');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.connection).toBe('close');
    }
  });
  it('HTTP/1.0 needs no Host', async () => {
    const res = await rawExchange(svc.url!, Buffer.from('GET /healthz HTTP/1.0\r\n\r\n'));
    expect(res.status).toBe(200);
  });
});

describe('credentials before the body', () => {
  it('a wrong key with a missing list_id is 101, no longer 407', async () => {
    const res = await rawRequest(svc.url!, { target: `${stats(USER, 'wrong-key')}?days=7` });
    expectError(res, 403, 101, 'Not allowed for this user_id and api_key');
    const withList = await rawRequest(svc.url!, {
      target: `${stats(USER, 'wrong-key')}?list_id=${LIST}&days=999999`,
    });
    expectError(withList, 403, 101, `Not allowed for list_id = ${LIST}`);
  });
  it('a wrong key is answered before any body byte is sent, and the connection is closed', async () => {
    const { res, closedAfterMs } = await headOnly(stats(USER, 'wrong-key'), [
      'Content-Type: application/json',
      'Content-Encoding: gzip',
      'Content-Length: 1000000',
    ]);
    expectError(res, 403, 101);
    expect(closedAfterMs).toBeLessThan(10_000);
  });
  it('XML-RPC: a wrong key is fault 101 (HTTP 200) before any body byte is sent', async () => {
    const { res } = await headOnly(`/api/1.2/xmlrpc/999999/wrong-key`, [
      'Content-Type: text/xml',
      'Content-Length: 500000',
    ]);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<name>faultCode</name><value><int>101</int></value>');
  });
  it('the right key still reads its body', async () => {
    const res = await rawRequest(svc.url!, {
      method: 'POST',
      target: stats(USER, KEY),
      headers: [['Content-Type', 'application/json']],
      body: JSON.stringify({ list_id: LIST, days: 3 }),
    });
    expect(res.status, res.text).toBe(200);
  });
});

describe('rate limits per user_id', () => {
  const RL = 23;
  const RL_KEY = 'rate-key-23';
  beforeAll(async () => {
    await svc.ingest(tenant({ userId: RL, apiKey: RL_KEY, lists: [{ list_id: 2300 }] }));
  });

  it('a burst of twice the rate, then 429 with Retry-After; other callers are not slowed', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => rawRequest(svc.url!, { target: `${stats(RL, RL_KEY)}?list_id=2300` })),
    );
    const limited = answers.filter((r) => r.status === 429);
    expect(answers.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(2 * RATE);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) {
      expect(r.json).toEqual({ err: true, message: 'Too many requests', code: 429 });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const other = await rawRequest(svc.url!, { target: `${stats(OTHER, OTHER_KEY)}?list_id=${OTHER_LIST}` });
    expect(other.status, other.text).toBe(200);
  });

  it('wrong keys and unknown users count against the failed-attempt bucket of the user_id they name and the address', async () => {
    const GUESSED = 24;
    await svc.ingest(tenant({ userId: GUESSED, apiKey: 'rate-key-24', lists: [{ list_id: 2400 }] }));
    // Pipelined on one connection, so that the takes come one right after the other: the burst of guesses
    // is spent, and the right key sent right after a refused guess from the same address is refused too,
    // so guessing does not go faster by switching keys and a 429 tells nothing about a key. A round in
    // which a token refilled just before the right key (a busy machine) proves nothing and is sent again.
    let decided = false;
    for (let round = 0; round < 3 && !decided; round++) {
      const guesses = Array.from({ length: 2 * RATE + 2 }, (_, i) =>
        get(`${stats(GUESSED, `guess-${round}-${i}`)}?list_id=2400`),
      );
      const answers = await pipelined('127.0.0.1', [
        ...guesses,
        get(`${stats(GUESSED, 'rate-key-24')}?list_id=2400`),
      ]);
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s !== 403 && s !== 429)).toEqual([]);
      expect(statuses).toContain(429);
      if (statuses.at(-2) !== 429) continue;
      expect(statuses.at(-1)).toBe(429);
      expect(answers.at(-1)!.text).toBe('{"err":true,"message":"Too many requests","code":429}');
      expect(Number(answers.at(-1)!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      decided = true;
    }
    expect(decided, 'in every round a token refilled before the last guess').toBe(true);

    const unknown = await pipelined(
      '127.0.0.1',
      Array.from({ length: 4 * RATE }, () => get(`${stats(987650, 'k')}?list_id=1`)),
    );
    expect(unknown.filter((r) => r.status === 429).length).toBeGreaterThan(0);
  });

  it('one bucket per user, whatever the spelling of its id: 028, 0028, %3028 are user 28', async () => {
    const U = 28;
    await svc.ingest(tenant({ userId: U, apiKey: 'rate-key-28', lists: [{ list_id: 2800 }] }));
    // 12 spellings, each its own bucket before: 12 x the burst. 3 x the burst over all of them, pipelined
    // (all taken at once): the burst is served, the rest refused. The XML-RPC calls (the id %-encoded:
    // /%30…28/ is decoded to a spelling like the others) come first: a refused POST closes the connection.
    const spellings = Array.from({ length: 12 }, (_, i) => `${'0'.repeat(i)}${U}`);
    const call =
      '<?xml version="1.0"?><methodCall><methodName>list.all</methodName><params></params></methodCall>';
    const xmlrpc = spellings
      .slice(0, 4)
      .map(
        (spelling) =>
          `POST /api/1.2/xmlrpc/%30${spelling}/rate-key-28 HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\n` +
          `Content-Length: ${call.length}\r\n\r\n${call}`,
      );
    const rest = Array.from({ length: 6 * RATE - xmlrpc.length }, (_, i) =>
      get(`${stats(spellings[i % spellings.length]!, 'rate-key-28')}?list_id=2800`),
    );
    const requests = [...xmlrpc, ...rest];
    const answers = await pipelined('127.0.0.1', requests);
    const limited = answers.filter((r) => r.status === 429 || r.text.includes('<int>429</int>'));
    const served = answers.filter((r) => r.status === 200 && !r.text.includes('faultCode'));
    // Every spelling is the user: what is not limited is answered; the burst, no more.
    expect(served.length + limited.length, answers.map((r) => r.text.slice(0, 80)).join('\n')).toBe(6 * RATE);
    // The burst, and what refills while the pipeline is handled (a token or two; more on a busy machine),
    // against all 30 before.
    expect(served.length).toBeGreaterThanOrEqual(2 * RATE);
    expect(served.length).toBeLessThanOrEqual(4 * RATE);
    expect(answers.slice(0, xmlrpc.length).map((r) => r.text)).toEqual(
      Array(xmlrpc.length).fill(expect.stringContaining('<methodResponse><params><param>')),
    );
  });

  it('wrong keys from one address do not spend the budget of the right key at another', async () => {
    const U = 29;
    await svc.ingest(tenant({ userId: U, apiKey: 'rate-key-29', lists: [{ list_id: 2900 }] }));
    const target = (key: string) => get(`${stats(U, key)}?list_id=2900`);
    // An outsider at 127.0.0.2 who knows the user id: far more wrong keys than the rate allows, at once;
    // then the right key from its address, refused as well while it is over its limit.
    const guesses = await pipelined('127.0.0.2', [
      ...Array.from({ length: 8 * RATE }, (_, i) => target(`guess-${i}`)),
      target('rate-key-29'),
    ]);
    const refused = guesses.filter((a) => a.status === 403).length;
    expect(refused).toBeGreaterThanOrEqual(2 * RATE);
    expect(refused).toBeLessThanOrEqual(4 * RATE); // the burst, and what refills meanwhile
    expect(guesses.filter((a) => a.status !== 403 && a.status !== 429)).toEqual([]);
    // Right after refused guesses, the right key from the guesser's address is refused as well.
    if (guesses.at(-2)!.status === 429) expect(guesses.at(-1)!.status).toBe(429);
    // The user's own caller at another address still has its whole budget (before: 429 for all of it).
    const own = await pipelined(
      '127.0.0.1',
      Array.from({ length: 2 * RATE }, () => target('rate-key-29')),
    );
    expect(own.map((a) => a.status)).toEqual(Array(2 * RATE).fill(200));
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: rotating it gives a guesser no further budget', async () => {
    const U = 31;
    await svc.ingest(tenant({ userId: U, apiKey: 'rate-key-31', lists: [{ list_id: 3100 }] }));
    const guesses = await pipelined(
      '127.0.0.4',
      Array.from({ length: 4 * RATE }, (_, i) =>
        get(`${stats(U, `guess-${i}`)}?list_id=3100`).replace(
          '\r\n\r\n',
          `\r\nX-Forwarded-For: 10.0.0.${i}\r\n\r\n`,
        ),
      ),
    );
    expect(guesses.map((a) => a.status)).toContain(429);
    expect(guesses.filter((a) => a.status !== 403 && a.status !== 429)).toEqual([]);
  });

  it('XML-RPC: fault 429 with HTTP 200 and Retry-After', async () => {
    const U = 25;
    await svc.ingest(tenant({ userId: U, apiKey: 'rate-key-25', lists: [{ list_id: 2500 }] }));
    const call =
      '<?xml version="1.0"?><methodCall><methodName>list.all</methodName><params></params></methodCall>';
    const answers = await Promise.all(
      Array.from({ length: 4 * RATE }, () =>
        rawRequest(svc.url!, {
          method: 'POST',
          target: `/api/1.2/xmlrpc/${U}/rate-key-25`,
          headers: [['Content-Type', 'text/xml']],
          body: call,
        }),
      ),
    );
    const limited = answers.filter((r) => r.text.includes('<int>429</int>'));
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) {
      expect(r.status).toBe(200);
      expect(r.text).toContain('Too many requests');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });

  it('POST /ingest and the ops endpoints are not limited', async () => {
    const answers = await Promise.all(Array.from({ length: 4 * RATE }, () => svc.ingest([])));
    expect(answers.map((a) => a.status).filter((s) => s === 429)).toEqual([]);
    const ops = await Promise.all(Array.from({ length: 4 * RATE }, () => fetch(`${svc.url}/healthz`)));
    expect(ops.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
  });
});

describe('unknown user ids cost no engine query', () => {
  it('a flood of distinct unknown user ids answers 101 without a query each', async () => {
    // Warm: the known users are loaded once.
    await rawRequest(svc.url!, { target: `${stats(5_000_000, 'x')}?list_id=1` });
    let queries = 0;
    const query = svc.db.query.bind(svc.db);
    svc.db.query = ((...args: Parameters<typeof query>) => {
      queries++;
      return query(...args);
    }) as typeof svc.db.query;
    try {
      for (let i = 0; i < 60; i++) {
        const res = await rawRequest(svc.url!, {
          target: `${stats(6_000_000 + i, 'no-key')}?list_id=${LIST}`,
        });
        expectError(res, 403, 101);
      }
    } finally {
      svc.db.query = query;
    }
    expect(queries).toBeLessThanOrEqual(5); // catalog polls only, never one per request
  });

  it('a user created by this process is known at once; one created elsewhere within the poll', async () => {
    const NEW = 26;
    await svc.ingest(tenant({ userId: NEW, apiKey: 'new-key-26', lists: [{ list_id: 2600 }] }));
    const res = await rawRequest(svc.url!, { target: `${stats(NEW, 'new-key-26')}?list_id=2600` });
    expect(res.status, res.text).toBe(200);

    // Another process writing the same store: a second catalog on the same engine.
    const elsewhere = new Catalog(svc.db, 'UTC', svc.log);
    await elsewhere.write(
      tenant({ userId: 27, apiKey: 'new-key-27', lists: [{ list_id: 2700 }] }).map((r) =>
        catalogSchema.parse(r),
      ),
    );
    await vi.waitFor(
      async () => {
        const r = await rawRequest(svc.url!, { target: `${stats(27, 'new-key-27')}?list_id=2700` });
        expect(r.status, r.text).toBe(200);
      },
      { timeout: 5_000, interval: 100 },
    );
  });
});

describe('failure timing does not tell which users were used recently', () => {
  it('a wrong key takes as long for a cached user as for a never-seen one', async () => {
    const N = 40;
    const base = 30_000;
    // 2N users with a list each; the first N are used (cached), the others never.
    await svc.ingest(
      Array.from({ length: 2 * N }, (_, i) =>
        tenant({ userId: base + i, apiKey: `t-${i}`, lists: [{ list_id: base + i }] }),
      ).flat(),
    );
    for (let i = 0; i < N; i++) {
      const warm = await rawRequest(svc.url!, { target: `${stats(base + i, `t-${i}`)}?list_id=${base + i}` });
      expect(warm.status, warm.text).toBe(200);
    }
    const time = async (user: number) => {
      const t = process.hrtime.bigint();
      const res = await rawRequest(svc.url!, { target: `${stats(user, 'wrong')}?list_id=${user}` });
      expectError(res, 403, 101);
      return Number(process.hrtime.bigint() - t) / 1e6;
    };

    // What would make an oracle: an engine statement on one path and not the other. Counted exactly.
    const statements = { cached: 0, unseen: 0 };
    let path: keyof typeof statements = 'cached';
    const { query, read } = svc.db;
    svc.db.query = ((...args: Parameters<typeof query>) => {
      statements[path]++;
      return query.apply(svc.db, args);
    }) as typeof query;
    svc.db.read = ((...args: Parameters<typeof read>) => {
      statements[path]++;
      return read.apply(svc.db, args);
    }) as typeof read;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rounds: string[] = [];
    let alike = false;
    try {
      // The timing itself, in up to three rounds of interleaved pairs: a burst of load from the suites
      // running beside this one can skew one round (a CI run once saw 1.5 against 4.6 ms; seven runs
      // here since, quiet, saw 1.4-2.2 against 1.5-2.1), while a real difference (an engine lookup
      // costs more than the whole cached path) shows in every round.
      for (let round = 0; round < 3; round++) {
        const cached: number[] = [];
        const unseen: number[] = [];
        for (let i = 0; i < N; i++) {
          path = 'cached';
          cached.push(await time(base + i));
          path = 'unseen';
          unseen.push(await time(base + N + i));
        }
        rounds.push(`cached ${median(cached)} ms, unseen ${median(unseen)} ms`);
        alike = median(unseen) < median(cached) * 1.5 + 1;
        if (alike) break;
      }
    } finally {
      svc.db.query = query;
      svc.db.read = read;
    }
    // The catalog poll's own reads may fall on either path; a lookup per request would be 40 or more.
    expect(statements.unseen, JSON.stringify(statements)).toBeLessThanOrEqual(statements.cached + 3);
    // Before the fix a never-seen user cost three engine lookups (~3-5x the cached path).
    expect(alike, rounds.join('; ')).toBe(true);
  });
});

describe('/readyz reasons', () => {
  it('name the failing dependency briefly, never its error text (hosts, credentials)', async () => {
    svc.db.faultInjector = async () => {
      throw new Error('connect ECONNREFUSED 10.9.8.7:8123 (user secret-user, password hunter2)');
    };
    try {
      const res = await fetch(`${svc.url}/readyz`);
      const text = await res.text();
      expect(res.status).toBe(503);
      expect(text).not.toMatch(/10\.9\.8\.7|secret-user|hunter2|ECONNREFUSED/);
      expect(JSON.parse(text).checks.clickhouse).toBe('not answering');
    } finally {
      svc.db.faultInjector = undefined;
    }
  });
});
