// Modes: embedded and server
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  openSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import type { RawActivity } from '../support/expected-stats.js';
import { activityStream, STREAM_LISTS, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

const ADMIN = 'import-admin-token-0123456789-abcdef0123456789';
const USER = 5;
const KEY = 'import-key';
const LISTS = STREAM_LISTS;

describe('import', () => {
  let svc: TestService;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-import-'));
  const model: RawActivity[] = [];

  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN: ADMIN });
    env = { MAILSTATS_URL: svc.url!, ADMIN_TOKEN: ADMIN };
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // A GET is safe to repeat: once more when a kept-alive socket was reset under it (as in Restartable.get).
  const stats = async (listId: number, extra = '') => {
    const path = `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${listId}${STREAM_PERIOD}${extra}`;
    return (await svc.call(path).catch(() => svc.call(path))).body;
  };
  async function expectCounted() {
    for (const list of LISTS)
      for (const shape of ['', '&workflow_ids=2', '&workflow_ids=1,3']) {
        expect(await stats(list.list_id, shape)).toEqual(streamStats(model, list, shape));
      }
  }

  it('killed (SIGKILL) mid-way, --resume goes on; the same file again counts nothing twice', async () => {
    const { wire, model: m } = activityStream(60_000, 31);
    const file = join(dir, 'stream.ndjson');
    const catalog = tenant({ userId: USER, apiKey: KEY, lists: LISTS });
    writeFileSync(file, [...catalog, ...wire].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const checkpoint = `${file}.import-checkpoint`;
    let sawCheckpoint = false;
    const killed = await adminCli(['import', '--chunk-records', '4000', file], env, {
      onSpawn: (kill) => {
        const poll = setInterval(() => {
          if (existsSync(checkpoint)) {
            sawCheckpoint = true;
            clearInterval(poll);
            kill();
          }
        }, 5);
      },
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(sawCheckpoint).toBe(true);
    const cp = JSON.parse(readFileSync(checkpoint, 'utf8')) as { offset: number; line: number };
    expect(cp.line).toBeGreaterThan(0);
    expect(cp.line).toBeLessThan(catalog.length + wire.length);

    const resumed = await adminCli(['import', '--resume', '--chunk-records', '4000', file], env);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(new RegExp(`resuming after line ${cp.line}`));
    expect(
      Number(/accepted (\d+), rejected 0, [\d.]+ s, \d+ records\/s/.exec(resumed.out)?.[1]),
    ).toBeGreaterThanOrEqual(60_005);
    expect(existsSync(checkpoint)).toBe(false);
    model.push(...m);
    await expectCounted();
    // An independent count of the file: its sends, by a plain scan of the lines.
    const sends = wire.filter((w) => w.type === 'send' && w.list_id === 10).length;
    const answer = (await stats(10)) as { sends_total: number }[];
    expect(answer.reduce((n, d) => n + d.sends_total, 0)).toBe(sends);

    const again = await adminCli(['import', file], env);
    expect(again.code, again.err).toBe(0);
    await expectCounted();
  }, 600_000);

  it('reads a JSON array, CSV and gzip; rejected records go to FILE.rejected.ndjson with exit 1', async () => {
    const { wire, model: m } = activityStream(300, 32);
    const json = join(dir, 'a.json');
    writeFileSync(json, JSON.stringify(wire.slice(0, 100), null, 1));
    const gz = join(dir, 'b.ndjson.gz');
    writeFileSync(
      gz,
      gzipSync(
        wire
          .slice(100, 200)
          .map((r) => JSON.stringify(r))
          .join('\n'),
      ),
    );
    const fields = [
      'type',
      'event_id',
      'list_id',
      'workflow_id',
      'subscriber_id',
      'timestamp',
      'order_id',
      'value_ron',
      'value_eur',
      'status',
    ];
    const csvRows = wire
      .slice(200)
      .map((r) => fields.map((f) => (r[f] === undefined ? '' : String(r[f]))).join(','));
    const csv = join(dir, 'c.csv.gz');
    writeFileSync(csv, gzipSync([fields.join(','), ...csvRows].join('\r\n') + '\r\n'));
    const ok = await adminCli(['import', json, gz, csv], env);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(/a\.json: accepted 100, rejected 0/);
    expect(ok.out).toMatch(/b\.ndjson\.gz: accepted 100, rejected 0/);
    expect(ok.out).toMatch(/c\.csv\.gz: accepted 100, rejected 0/);
    model.push(...m);
    await expectCounted();

    const bad = join(dir, 'bad.csv');
    writeFileSync(
      bad,
      'type,event_id,list_id,workflow_id,subscriber_id,timestamp\n' +
        'send,x1,10,1,1,2026-11-10T10:00:00Z\n' +
        'send,x2,10,1,1,2026-11-10T10:00:00Z,extra\n' +
        'send,x3,10,1,0,2026-11-10T10:00:00Z\n' +
        '"send","x4",10,1,"2",1794304800000\n',
    );
    const r = await adminCli(['import', bad], env);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/accepted 2, rejected 2 \(see .*bad\.csv\.rejected\.ndjson\)/);
    const rejected = readFileSync(`${bad}.rejected.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rejected).toEqual([
      {
        line: 3,
        reason: 'the row has 7 cells, the header has 6',
        original: 'send,x2,10,1,1,2026-11-10T10:00:00Z,extra',
      },
      {
        line: 4,
        reason: expect.stringMatching(/^subscriber_id: /),
        original: 'send,x3,10,1,0,2026-11-10T10:00:00Z',
      },
    ]);
    model.push(
      {
        type: 'send',
        event_id: 'x1',
        list_id: 10,
        workflow_id: 1,
        subscriber_id: 1,
        at: Date.parse('2026-11-10T10:00:00Z'),
      },
      { type: 'send', event_id: 'x4', list_id: 10, workflow_id: 1, subscriber_id: 2, at: 1794304800000 },
    );
    await expectCounted();
  }, 300_000);

  it('reads NDJSON from stdin', async () => {
    const rec = {
      type: 'send',
      event_id: 'stdin-1',
      list_id: 11,
      workflow_id: 2,
      subscriber_id: 9,
      timestamp: '2026-11-12T12:00:00Z',
    };
    const r = await adminCli(['import', '-'], env, { stdin: JSON.stringify(rec) + '\n' });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/stdin: accepted 1, rejected 0/);
    model.push({ ...rec, at: Date.parse(rec.timestamp) });
    await expectCounted();
  }, 120_000);

  it('bad input: a clear message naming the problem, exit non-zero, nothing counted', async () => {
    const write = (name: string, data: string | Buffer) => {
      const p = join(dir, name);
      writeFileSync(p, data);
      return p;
    };
    const good = JSON.stringify({
      type: 'send',
      event_id: 'never',
      list_id: 10,
      workflow_id: 1,
      subscriber_id: 1,
      timestamp: '2026-11-10T00:00:00Z',
    });
    const cases: [string[], RegExp][] = [
      [[write('x.txt', good)], /x\.txt: unknown file extension "\.txt"/],
      [[write('t.ndjson.gz', gzipSync(good).subarray(0, 20))], /t\.ndjson\.gz: the gzip stream is truncated/],
      [[write('n.ndjson.gz', 'not gzip at all')], /n\.ndjson\.gz: not a readable gzip file/],
      [
        [write('h.csv', 'type,event_id,colour\nsend,a,red\n')],
        /h\.csv: the CSV header names an unknown field "colour"/,
      ],
      [[write('o.json', `[${good}, ${good}`)], /o\.json: the JSON array never closes/],
      [[write('e.ndjson', '')], /e\.ndjson: the file is empty/],
      [[join(dir, 'missing.ndjson')], /missing\.ndjson: no such file/],
    ];
    for (const [args, message] of cases) {
      const r = await adminCli(['import', ...args], env);
      expect(r.code, `${args.join(' ')}: ${r.err}`).not.toBe(0);
      expect(r.err).toMatch(message);
    }
    // A line longer than the bound (16 MiB): that line's rejection, read in bounded memory; the rest is imported.
    const long = join(dir, 'long.ndjson');
    const fd = openSync(long, 'w');
    writeSync(fd, '{"type":"send","event_id":"');
    const block = Buffer.alloc(1 << 20, 'a');
    for (let i = 0; i < 17; i++) writeSync(fd, block);
    writeSync(fd, `"}\n${good.replace('never', 'after-long')}\n`);
    closeSync(fd);
    const r = await adminCli(['import', long], env);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/accepted 1, rejected 1/);
    const [rej] = readFileSync(`${long}.rejected.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rej).toMatchObject({ line: 1, reason: 'the line is longer than 16 MiB' });
    model.push({
      type: 'send',
      event_id: 'after-long',
      list_id: 10,
      workflow_id: 1,
      subscriber_id: 1,
      at: Date.parse('2026-11-10T00:00:00Z'),
    });
    await expectCounted();
  }, 300_000);

  it('needs the admin token: a wrong or missing one, or the ingest token, is refused; an unreachable service is named', async () => {
    const file = join(dir, 'one.ndjson');
    writeFileSync(
      file,
      JSON.stringify({
        type: 'send',
        event_id: 'tok',
        list_id: 10,
        workflow_id: 1,
        subscriber_id: 1,
        timestamp: '2026-11-10T00:00:00Z',
      }),
    );
    const wrong = await adminCli(['import', file], { ...env, ADMIN_TOKEN: 'wrong-token' });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/refused the admin token/);
    const ingest = await adminCli(['import', file], {
      ...env,
      ADMIN_TOKEN: 'test-ingest-token-0123456789abcdef',
    });
    expect(ingest.err).toMatch(/refused the admin token/);
    const missing = await adminCli(['import', file], { MAILSTATS_URL: svc.url!, DATA_DIR: dir });
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/no admin token: set ADMIN_TOKEN/);
    const away = await adminCli(['import', file], {
      ADMIN_TOKEN: ADMIN,
      MAILSTATS_URL: 'http://127.0.0.1:9',
    });
    expect(away.code).toBe(1);
    expect(away.err).toMatch(
      /cannot reach mailstats at http:\/\/127\.0\.0\.1:9 .*--url.*MAILSTATS_URL or PORT/,
    );
    // The admin token is not an ingest token.
    expect((await svc.ingest([], ADMIN)).status).toBe(401);
    await expectCounted();
  }, 120_000);
});
