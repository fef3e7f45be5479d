import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { startService, type Service } from '../../service/start.js';
import { adminCli } from '../support/admin-cli.js';
import { activityStream, STREAM_LISTS } from '../support/kafka.js';
import { capturingLogger } from '../support/raw-http.js';
import { tenant } from '../support/service.js';

const ADMIN = 'audit-admin-token-0123456789-abcdef0123456789';
const INGEST = 'audit-ingest-token-0123456789-abcdef01234';

/**
 * Erasure times are unambiguous, an erasure that matches nothing says so, the audit trail holds what
 * the docs say it does, and a restore of an older backup does not bring erased subscribers back
 * silently (docs/lifecycle.md, "erase" and "Restores and replays").
 */
describe('erasure times, audit lines and restores', () => {
  const work = mkdtempSync(join(tmpdir(), 'mailstats-erase-audit-'));
  const { log, lines } = capturingLogger('info');
  let svc: Service | undefined;
  const { wire, model } = activityStream(2000, 77);
  const start = async (dataDir: string) => {
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      SEED_DEMO: 'false',
      INGEST_TOKEN: INGEST,
      ADMIN_TOKEN: ADMIN,
      BACKUP_ROOT: work,
    });
    svc = await startService(config, log);
    await svc.recovered;
    return svc;
  };
  const env = () => ({ MAILSTATS_URL: svc!.url!, ADMIN_TOKEN: ADMIN });
  const ingest = async (records: unknown[]) => {
    const res = await fetch(`${svc!.url}/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INGEST}`, 'content-type': 'application/x-ndjson' },
      body: records.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(res.status).toBe(200);
  };
  const recordsOf = async (list: number, subscriber: number) => {
    const [row] = await svc!.db.query<{ n: number }>(
      'SELECT count() AS n FROM events WHERE list_id = {l:UInt64} AND subscriber_id = {s:UInt64}',
      { l: list, s: subscriber },
      { output_format_json_quote_64bit_integers: 0 },
    );
    return row!.n;
  };
  const auditLines = (what: string) =>
    lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.audit === what);

  beforeAll(async () => {
    await start(join(work, 'source'));
    await ingest(tenant({ userId: 9, apiKey: 'audit-key', lists: STREAM_LISTS }));
    await ingest(wire);
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('epoch seconds and times before 2000 are refused, naming what was meant; nothing is erased', async () => {
    const subscriber = model.find((r) => r.list_id === 10)!.subscriber_id;
    const before = await recordsOf(10, subscriber);
    expect(before).toBeGreaterThan(0);
    const r = await adminCli(
      ['erase', '--list', '10', '--subscriber', String(subscriber), '--at', '1795749274'],
      env(),
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--at: 1795749274 is before 2000 as epoch milliseconds: if it is epoch seconds/);
    const api = await fetch(`${svc!.url}/admin/erase`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pairs: [{ list_id: 10, subscriber_id: subscriber, erased_at: 0 }] }),
    });
    expect(api.status).toBe(400);
    expect(await api.text()).toMatch(/pairs\.0\.erased_at: 0 is before 2000/);
    expect(await recordsOf(10, subscriber)).toBe(before);
  }, 120_000);

  it('an erasure that matches no record says so', async () => {
    const r = await adminCli(['erase', '--list', '10', '--subscriber', '987654'], env());
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/list 10: no records matched/);
    expect(r.out).not.toMatch(/1 subscriber erased/);
  }, 120_000);

  it('the erase audit line holds each erased pair with its time, ready for erase --file', async () => {
    const subscriber = model.find((r) => r.list_id === 11)!.subscriber_id;
    const r = await adminCli(
      ['erase', '--list', '11', '--subscriber', String(subscriber), '--at', '2026-11-20T09:30:00Z'],
      env(),
    );
    expect(r.code, r.err).toBe(0);
    const last = auditLines('erase').at(-1)!;
    expect(last.erasures).toEqual([`11,${subscriber},2026-11-20T09:30:00.000Z`]);
    // The audit lines, as the docs say, give back an `erase --file` input.
    const file = join(work, 'from-audit.csv');
    writeFileSync(
      file,
      auditLines('erase')
        .flatMap((l) => l.erasures as string[])
        .join('\n') + '\n',
    );
    const replay = await adminCli(['erase', '--file', file], env());
    expect(replay.code, replay.err).toBe(0);
  }, 120_000);

  it('the import end line holds the counts the service made, beside those the client posted', async () => {
    const post = (path: string, body: string, type: string) =>
      fetch(`${svc!.url}/admin${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': type },
        body,
      });
    const id = 'audit-import-1';
    const chunk = [JSON.stringify(wire[0]), '{"type":"send"}', JSON.stringify(wire[1])].join('\n');
    expect((await post(`/import?import_id=${id}&file=x.ndjson`, chunk, 'application/x-ndjson')).status).toBe(
      200,
    );
    const summary = {
      import_id: id,
      file: 'x.ndjson',
      accepted: 999,
      rejected: 0,
      seconds: 1,
      finished: true,
    };
    expect((await post('/import/summary', JSON.stringify(summary), 'application/json')).status).toBe(200);
    const end = auditLines('import').find((l) => l.phase === 'end' && l.import_id === id)!;
    expect(end).toMatchObject({
      accepted: 2,
      rejected: 1,
      chunks: 1,
      client_reported: { accepted: 999, rejected: 0, seconds: 1, finished: true },
    });
  }, 120_000);

  it('a restore of an older backup warns, and with --erasures re-applies the erasures made after it', async () => {
    const backup = join(work, 'older');
    expect((await adminCli(['backup', backup], env())).code).toBe(0);
    const subscriber = model.find((r) => r.list_id === 10 && r.subscriber_id !== 987654)!.subscriber_id;
    const e = await adminCli(['erase', '--list', '10', '--subscriber', String(subscriber)], env());
    expect(e.code, e.err).toBe(0);
    const erasures = join(work, 'erasures.csv');
    expect((await adminCli(['erasures', 'export', erasures], env())).code).toBe(0);
    expect(readFileSync(erasures, 'utf8')).toContain(`10,${subscriber},`);
    await svc!.close();
    svc = undefined;

    const plain = await adminCli(['restore', backup], { DATA_DIR: join(work, 'plain') });
    expect(plain.code, plain.err).toBe(0);
    expect(plain.err).toMatch(/erasures made after .* are not in this backup.*--erasures/s);

    const replayed = await adminCli(['restore', backup, '--erasures', erasures], {
      DATA_DIR: join(work, 'replayed'),
    });
    expect(replayed.code, replayed.err).toBe(0);
    expect(replayed.out).toMatch(/1 erasure made after the backup .* completed at the next start/);
    await start(join(work, 'replayed'));
    expect(await recordsOf(10, subscriber)).toBe(0);
    const other = model.find((r) => r.list_id === 10 && r.subscriber_id !== subscriber)!.subscriber_id;
    expect(await recordsOf(10, other)).toBeGreaterThan(0);
  }, 300_000);
});
