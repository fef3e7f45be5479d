// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * POST /ingest (docs/records.md "Schema", "Ingest over HTTP") over real HTTP: per-line rejections naming the field, valid records
 * kept (checked through automation.stats), JSON array bodies, the token, unreadable and oversized
 * bodies, and duplicates across calls.
 */
const USER = 9;
const KEY = 'ingest-route-key';
const LIST = 500; // Europe/Bucharest: UTC+3 in June, so 09:00 UTC is noon the same day.
const TOKEN = 'test-ingest-token-0123456789abcdef'; // what startTestService configures

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.ingest(
    tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'Europe/Bucharest' }] }),
  );
  expect(res.body).toEqual({ accepted: 3, rejected: [] });
});

afterAll(() => svc?.stop());

const send = (event_id: string, date: string, subscriber_id = 1, extra: Record<string, unknown> = {}) => ({
  type: 'send',
  event_id,
  list_id: LIST,
  workflow_id: 1,
  subscriber_id,
  timestamp: `${date}T09:00:00Z`,
  ...extra,
});

/** The stats records of one date of the list (all workflows). */
async function day(date: string): Promise<any[]> {
  const res = await svc.call(
    `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=${date}&stop_date=${date}`,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function post(body: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${svc.url}/ingest`, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const auth = { authorization: `Bearer ${TOKEN}` };

describe('NDJSON with valid and invalid lines', () => {
  const DATE = '2025-06-02';
  const future = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString();
  /** [line text, expected reason prefix or null when valid]; lines are numbered from 1. */
  const lines: [string, string | null][] = [
    /* 1 */ [JSON.stringify(send('nd-1', DATE, 1)), null],
    /* 2 */ [JSON.stringify(send('nd-2', DATE, 2, { list_id: 'abc' })), 'list_id: '],
    /* 3 */ [JSON.stringify(send('nd-3', DATE, 3, { type: 'sendd' })), 'type: must be one of '],
    /* 4 */ [JSON.stringify({ ...send('nd-4', DATE), subscriber_id: undefined }), 'subscriber_id: '],
    /* 5 */ [JSON.stringify(send('nd-5', DATE, 5, { timestamp: future(48) })), 'timestamp: '],
    /* 6 */ [
      JSON.stringify(
        send('nd-6', DATE, 6, { type: 'purchase', order_id: 'o-6', value_ron: 1.23456, value_eur: 1 }),
      ),
      'value_ron: ',
    ],
    /* 7 */ ['{"type": "send", "event_id": "nd-7", ', null /* malformed JSON: checked apart */],
    /* 8 */ ['', null /* blank: skipped, not a record */],
    /* 9 */ [
      JSON.stringify({ ...send('nd-9', DATE, 1), type: 'open', timestamp: Date.parse(`${DATE}T09:30:00Z`) }),
      null,
    ],
    /* 10 */ [
      JSON.stringify(
        send('nd-10', DATE, 1, { type: 'purchase', order_id: 'o-10', value_ron: '12.3456', value_eur: 2.5 }),
      ),
      null,
    ],
    /* 11 */ [JSON.stringify({ ...send('nd-11', DATE), type: undefined }), 'type: must be one of '],
    /* 12 */ [JSON.stringify(send('nd-12', DATE, 1, { type: 'event', status: 'maybe' })), 'status: '],
    /* 13 */ ['[1]', 'record must be a JSON object'],
    /* 14 */ [JSON.stringify(send('nd-14', DATE, 14, { timestamp: future(23) })), null],
    /* 15 */ [JSON.stringify(send('nd-15', DATE, 1, { type: 'event', status: 'ok' })), null],
    /* 16 */ [JSON.stringify(send('nd-16', DATE, 16, { list_id: 0 })), 'list_id: '],
    /* 17 */ [JSON.stringify(send('nd-17', DATE, 17, { timestamp: `${DATE}T09:00:00` })), 'timestamp: '],
    /* 18 */ [
      JSON.stringify(
        send('nd-18', DATE, 18, { type: 'purchase', order_id: 'o-18', value_ron: '1', value_eur: '-1' }),
      ),
      'value_eur: ',
    ],
    /* 19 */ [
      JSON.stringify(send('nd-19', DATE, 19, { type: 'purchase', order_id: 'o-19', value_ron: '1' })),
      'value_eur: ',
    ],
    /* 20 */ [JSON.stringify({ type: 'list', list_id: 501, timezone: 'Mars/Olympus' }), 'timezone: '],
    /* 21 */ [JSON.stringify({ type: 'workflow', workflow_id: 1, list_id: LIST, name: 'wf' }), null],
    /* 22 */ [JSON.stringify(send('', DATE, 22)), 'event_id: '],
  ];
  let result: { status: number; body: any };

  beforeAll(async () => {
    result = await svc.ingest(lines.map(([text]) => text).join('\n'));
  });

  it('answers 200 with the count of valid records', () => {
    expect(result.status).toBe(200);
    // Valid: 1, 9, 10, 14, 15, 21.
    expect(result.body.accepted).toBe(6);
  });

  it('reports every invalid line with its 1-based line number and a reason naming the field', () => {
    const rejected: { line: number; reason: string }[] = result.body.rejected;
    const expectedLines = lines.flatMap(([, reason], i) => (reason !== null ? [i + 1] : [])).concat(7);
    expect(rejected.map((r) => r.line).sort((a, b) => a - b)).toEqual(expectedLines.sort((a, b) => a - b));
    for (const r of rejected) {
      expect(typeof r.reason).toBe('string');
      if (r.line === 7) continue;
      const prefix = lines[r.line - 1]![1]!;
      expect(r.reason.startsWith(prefix), `line ${r.line}: ${r.reason}`).toBe(true);
      if (prefix.endsWith(': ')) expect(r.reason.length).toBeGreaterThan(prefix.length);
    }
  });

  it('the unknown and the missing type name the valid types', () => {
    for (const line of [3, 11]) {
      const reason: string = result.body.rejected.find((r: any) => r.line === line).reason;
      for (const t of ['send', 'open', 'click', 'purchase', 'bounce', 'unsubscribe', 'spam', 'action'])
        expect(reason).toContain(t);
    }
  });

  it('a malformed JSON line is rejected as such', () => {
    const r = result.body.rejected.find((x: any) => x.line === 7);
    expect(r.reason).toMatch(/json/i);
  });

  it('the valid records are stored and counted; the invalid ones are not', async () => {
    const records = await day(DATE);
    expect(records).toHaveLength(1);
    // One send (line 1; 4 was a send without a subscriber, 2/16 sends to bad lists), one open (9),
    // one purchase (10; 6, 18 and 19 rejected), one event ok (15; 12 rejected).
    expect(records[0]).toMatchObject({
      date: DATE,
      list_id: String(LIST),
      sends_total: 1,
      sends_unique: 1,
      opens_total: 1,
      opens_unique: 1,
      clicks_total: 0,
      purchase_count: 1,
      // 12.3456 → 12.35 (half away from zero at the third decimal: .3456 → .35), 2.5 → 2.50.
      purchases_value_ron: 12.35,
      purchases_value_eur: 2.5,
      formatted_revenue_ron: '12,35',
      formatted_revenue_eur: '2,50',
      purchases_value_aov_ron: 12.35,
      events_ok: 1,
      events_failed: 0,
      opens_unique_percent: 100,
    });
  });

  it('a record up to 24 h in the future is accepted (line 14), one beyond is not (line 5)', () => {
    const lineNumbers = result.body.rejected.map((r: any) => r.line);
    expect(lineNumbers).toContain(5);
    expect(lineNumbers).not.toContain(14);
    const reason: string = result.body.rejected.find((r: any) => r.line === 5).reason;
    expect(reason).toMatch(/future/);
  });

  it('CRLF line ends keep the line numbers', async () => {
    const body = [JSON.stringify(send('crlf-1', '2025-06-06')), '{"type":"nope"}', ''].join('\r\n');
    const res = await svc.ingest(body);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected).toHaveLength(1);
    expect(res.body.rejected[0].line).toBe(2);
    expect(res.body.rejected[0].reason).toMatch(/^type: /);
  });
});

describe('a JSON array body', () => {
  const DATE = '2025-06-03';

  it('takes the valid elements and reports the invalid ones by position (from 1)', async () => {
    const body = JSON.stringify([
      send('arr-1', DATE, 1),
      send('arr-2', DATE, 2, { workflow_id: -4 }),
      send('arr-3', DATE, 3),
      'not a record',
    ]);
    const res = await post(body, { ...auth, 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(2);
    expect(res.body.rejected.map((r: any) => r.line)).toEqual([2, 4]);
    expect(res.body.rejected[0].reason).toMatch(/^workflow_id: /);
    const records = await day(DATE);
    expect(records.map((r) => [r.date, r.sends_total, r.sends_unique])).toEqual([[DATE, 2, 2]]);
  });

  it('an empty array is nothing to do', async () => {
    const res = await post('[]', { ...auth, 'content-type': 'application/json' });
    expect(res).toEqual({ status: 200, body: { accepted: 0, rejected: [] } });
  });
});

describe('the ingest token', () => {
  const DATE = '2025-06-04';
  const body = JSON.stringify(send('tok-1', DATE, 1));

  it('no token → 401, nothing stored', async () => {
    const res = await svc.ingest(body, null);
    expect(res.status).toBe(401);
    expect(res.body?.accepted).toBeUndefined();
  });
  it('a wrong token → 401, nothing stored', async () => {
    expect((await svc.ingest(body, 'test-ingest-tokeN')).status).toBe(401);
    expect((await svc.ingest(body, `${TOKEN}x`)).status).toBe(401);
    expect((await post(body, { authorization: TOKEN })).status).toBe(401);
    expect((await post(body, { authorization: `Basic ${TOKEN}` })).status).toBe(401);
    expect(await day(DATE)).toEqual([]);
  });
  it('the right token stores it (control)', async () => {
    expect((await svc.ingest(body)).body).toEqual({ accepted: 1, rejected: [] });
    expect((await day(DATE)).map((r) => r.sends_total)).toEqual([1]);
  });
});

describe('bodies that cannot be read', () => {
  it.each([['hello world'], ['not\njson\nat all'], ['[1, 2'], ['[{"type":"send"}']])(
    '%j → 400',
    async (body) => {
      const res = await svc.ingest(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ err: true });
    },
  );
  it('a JSON value that is neither an array nor records → per-line rejection, not a crash', async () => {
    const res = await svc.ingest('{"a": 1}');
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(0);
    expect(res.body.rejected).toHaveLength(1);
    expect(res.body.rejected[0].line).toBe(1);
    expect(res.body.rejected[0].reason).toMatch(/^type: /);
  });
  it('an empty body is nothing to do', async () => {
    expect(await svc.ingest('')).toEqual({ status: 200, body: { accepted: 0, rejected: [] } });
  });
});

describe('size limit: 10 MiB', () => {
  const LIMIT = 10 * 1024 * 1024;

  it('a body over 10 MiB → 413 Request too large', async () => {
    const record = JSON.stringify(send('big-1', '2025-06-07', 1, { pad: 'x'.repeat(LIMIT) }));
    expect(Buffer.byteLength(record)).toBeGreaterThan(LIMIT);
    const res = await svc.ingest(record);
    expect(res).toEqual({ status: 413, body: { err: true, code: 413, message: 'Request too large' } });
    expect(await day('2025-06-07')).toEqual([]);
  });
  it('a body just under 10 MiB is read (unknown fields are ignored)', async () => {
    const record = JSON.stringify(send('big-2', '2025-06-08', 1, { pad: 'x'.repeat(LIMIT - 1000) }));
    expect(Buffer.byteLength(record)).toBeLessThan(LIMIT);
    expect((await svc.ingest(record)).body).toEqual({ accepted: 1, rejected: [] });
    expect((await day('2025-06-08')).map((r) => r.sends_total)).toEqual([1]);
  });
});

describe('duplicates: one event_id counts once', () => {
  const DATE = '2025-06-05';

  it('across two separate ingest calls', async () => {
    expect((await svc.ingest([send('dup-1', DATE, 1), send('dup-2', DATE, 2)])).body.rejected).toEqual([]);
    expect((await svc.ingest([send('dup-1', DATE, 1), send('dup-3', DATE, 3)])).body.rejected).toEqual([]);
    // dup-1, dup-2, dup-3: three sends to three subscribers, not four.
    expect((await day(DATE)).map((r) => [r.sends_total, r.sends_unique])).toEqual([[3, 3]]);
  });
  it('twice within one call', async () => {
    await svc.ingest([send('dup-4', DATE, 4), send('dup-4', DATE, 4)]);
    expect((await day(DATE)).map((r) => [r.sends_total, r.sends_unique])).toEqual([[4, 4]]);
  });
  it('a later record reusing an event_id is the same record, even with other content', async () => {
    await svc.ingest([send('dup-2', DATE, 99)]);
    expect((await day(DATE)).map((r) => [r.sends_total, r.sends_unique])).toEqual([[4, 4]]);
  });
  it('the same event_id in a JSON array and then in NDJSON', async () => {
    const body = JSON.stringify([send('dup-5', DATE, 5)]);
    await post(body, { ...auth, 'content-type': 'application/json' });
    await svc.ingest([send('dup-5', DATE, 5)]);
    expect((await day(DATE)).map((r) => [r.sends_total, r.sends_unique])).toEqual([[5, 5]]);
  });
});

describe('dates and times that do not exist are rejected, never rolled over (docs/records.md "Activity records")', () => {
  const DATE = '2025-06-09';
  const bad = [
    '2025-02-29T10:00:00Z', // 2025 is not a leap year (would roll to 03-01)
    '2025-06-31T10:00:00Z', // June has 30 days (would roll to 07-01)
    '2025-06-09T24:00:00Z', // hour 24 (would roll to the 10th)
    '2025-06-09T10:60:00Z',
    '2025-06-09T10:00:60Z',
    '2025-13-01T10:00:00Z',
    '2025-06-00T10:00:00Z',
    '2025-06-09T10:00:00+24:00',
    '2025-06-09T10:00:00+02:60',
  ];

  it.each(bad)('%s → that line rejected, naming the field', async (ts) => {
    const res = await svc.ingest([send(`bad-ts-${ts}`, DATE, 1, { timestamp: ts })]);
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(0);
    expect(res.body.rejected).toEqual([{ line: 1, reason: expect.stringMatching(/^timestamp: /) }]);
  });

  it('sent_at too; while real edge dates are taken (leap day 2024, end of June, 23:59:59)', async () => {
    const res = await svc.ingest([
      send('bad-sent-at', DATE, 1, { type: 'open', sent_at: '2025-02-29T10:00:00Z' }),
      send('ok-leap', DATE, 2, { timestamp: '2024-02-29T10:00:00Z' }),
      send('ok-june', DATE, 3, { timestamp: '2025-06-30T23:59:59+03:00' }),
      send('ok-late', DATE, 4, { timestamp: `${DATE}T20:59:59.999Z` }),
    ]);
    expect(res.body.accepted).toBe(3);
    expect(res.body.rejected).toEqual([{ line: 1, reason: expect.stringMatching(/^sent_at: /) }]);
    // None of the impossible instants was counted anywhere (the roll-over days stay empty).
    for (const d of ['2025-03-01', '2025-07-01', '2025-06-10']) expect(await day(d)).toEqual([]);
    expect((await day(DATE)).map((r) => r.sends_total)).toEqual([1]);
  });
});

describe('an NDJSON body whose first line is not a record object (docs/records.md "Ingest over HTTP")', () => {
  const DATE = '2025-06-11';

  it('`[]` as the first line is that line’s rejection; the valid lines after it are taken', async () => {
    const body = ['[]', JSON.stringify(send('nd-arr-1', DATE, 1)), JSON.stringify(send('nd-arr-2', DATE, 2))];
    const res = await post(body.join('\n'), { ...auth, 'content-type': 'application/x-ndjson' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accepted: 2,
      rejected: [{ line: 1, reason: 'record must be a JSON object' }],
    });
    expect((await day(DATE)).map((r) => r.sends_total)).toEqual([2]);
  });

  it('other non-object lines too (`[1]`, a number, a string, null), in any position', async () => {
    const body = ['[1]', JSON.stringify(send('nd-arr-3', DATE, 3)), '5', '"x"', 'null'];
    const res = await post(body.join('\n'), { ...auth, 'content-type': 'application/x-ndjson' });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected.map((r: any) => r.line)).toEqual([1, 3, 4, 5]);
    expect((await day(DATE)).map((r) => r.sends_total)).toEqual([3]);
  });

  it('a body is a JSON array only when it is one as a whole (a one-line array of records still is)', async () => {
    const res = await post(`  ${JSON.stringify([send('nd-arr-4', DATE, 4)])}\n`, auth);
    expect(res.body).toEqual({ accepted: 1, rejected: [] });
    expect((await day(DATE)).map((r) => r.sends_total)).toEqual([4]);
  });
});

describe('a template whose props cannot be stored (docs/records.md "Catalog records")', () => {
  const DATE = '2025-06-12';
  /** 20,000 nested arrays (~40 KB): JSON.parse reads it, JSON.stringify overflows the stack. */
  const DEEP_PROPS = '{"a":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}';

  it('is that line’s rejection naming the depth; the other records of the body are stored', async () => {
    const deepLine = `{"type":"template","template_id":"deep","account_id":"acc-deep","content":"x","props":${DEEP_PROPS}}`;
    const body = [
      JSON.stringify({
        type: 'smtp_account',
        account_id: 'acc-deep',
        list_id: LIST,
        active: true,
        is_default: true,
      }),
      deepLine,
      JSON.stringify({
        type: 'template',
        template_id: 'fine',
        account_id: 'acc-deep',
        content: 'Hi {{n}}',
        props: { s: '{{n}}' },
      }),
      JSON.stringify(send('deep-props-1', DATE, 1)),
    ];
    const res = await post(body.join('\n'), { ...auth, 'content-type': 'application/x-ndjson' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.accepted).toBe(3);
    expect(res.body.rejected).toHaveLength(1);
    expect(res.body.rejected[0].line).toBe(2);
    expect(res.body.rejected[0].reason).toMatch(/^props: nested more than 32 deep/);
    expect((await day(DATE)).map((r) => r.sends_total)).toEqual([1]);
    const render = await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/transactional.templateRender.json?list_id=${LIST}&template_id=fine&params=${encodeURIComponent('{"n":7}')}`,
    );
    expect(render.status, JSON.stringify(render.body)).toBe(200);
    expect(render.body).toMatchObject({ content: 'Hi 7', props: { s: '7' } });
  });

  it('props over 512 KiB of JSON are refused too; 32 levels are taken', async () => {
    let ok: unknown = 'x';
    for (let i = 0; i < 31; i++) ok = { k: ok };
    const big = { s: 'y'.repeat(512 * 1024) };
    const body = [
      { type: 'template', template_id: 'deep32', account_id: 'acc-deep', content: 'x', props: ok },
      { type: 'template', template_id: 'big', account_id: 'acc-deep', content: 'x', props: big },
    ];
    const res = await post(body.map((r) => JSON.stringify(r)).join('\n'), {
      ...auth,
      'content-type': 'application/x-ndjson',
    });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected).toEqual([
      { line: 2, reason: expect.stringMatching(/^props: \d+ bytes of JSON, over the 524288 byte limit$/) },
    ]);
  });
});

describe('a stored write whose change row cannot be written', () => {
  it('server: 503 with Retry-After (resending is safe), and the row is written by a retry without another write; embedded: no row', async () => {
    const DATE = '2025-06-21';
    const changeRows = async () =>
      svc.db.mode === 'embedded'
        ? 0
        : (
            await svc.db.query<{ n: number }>(
              'SELECT count() AS n FROM list_changes WHERE has(lists, {list:UInt64})',
              { list: LIST },
              { output_format_json_quote_64bit_integers: 0 },
            )
          )[0]!.n;
    const before = await changeRows();
    let failing = true;
    let attempts = 0;
    svc.db.faultInjector = async (what) => {
      if (!/^INSERT INTO list_changes/.test(what)) return;
      attempts++;
      // Any ClickHouse error on that one-row insert (not a refused connection, which was a 503 already).
      if (failing) throw new Error('Code: 252. DB::Exception: Too many parts (simulated). (TOO_MANY_PARTS)');
    };
    try {
      const res = await post(JSON.stringify(send('change-row-1', DATE)), auth);
      if (svc.db.mode === 'embedded') {
        // Embedded, no other process reads the store: there is no change row to write.
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(attempts).toBe(0);
        return;
      }
      // Before: 500 Internal error, though the records were stored.
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body).toMatchObject({ err: true, code: 503 });
      expect(res.body.message).toMatch(/send it again/);
      expect(await changeRows()).toBe(before);
      const tried = attempts;
      failing = false;
      // No further write: the pending row is written by the writer's own retry (before: only by the next write).
      await vi.waitFor(async () => expect(await changeRows()).toBeGreaterThan(before), {
        timeout: 15_000,
        interval: 200,
      });
      expect(attempts).toBeGreaterThan(tried);
      // Sending the same records again is safe: they are not counted twice.
      const again = await post(JSON.stringify(send('change-row-1', DATE)), auth);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect((await day(DATE)).map((r) => r.sends_total)).toEqual([1]);
    } finally {
      svc.db.faultInjector = undefined;
    }
  });
});
