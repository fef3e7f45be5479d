// Modes: embedded only — asserts the embedded engine's statement counts per batch
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { isCatalogPoll } from '../support/statements.js';

/**
 * The engine runs one statement at a time, so each statement of a write is paid by every batch
 * (BENCHMARKS.md, Kafka). Embedded, a write of a list already dated costs exactly these five: no dating
 * look-up (kept in memory, the process being the only writer) and no read-back of stored generations
 * (no claim can fall between dating and insert there) unless the list was re-dated at least once: then
 * a retry of a batch first stored before the re-dating must find out (redate-retry.test.ts). Correctness
 * of both is list-redating.test.ts's.
 */
const send = (list: number, id: string, timestamp = '2026-11-10T10:00:00Z'): MailstatsRecord => {
  const check = checkRecord({
    type: 'send',
    event_id: id,
    list_id: list,
    workflow_id: 1,
    subscriber_id: 1,
    timestamp,
  });
  if (!check.ok) throw new Error(check.reason);
  return check.record;
};
const LIST = 7;
const KINDS: [prefix: string, kind: string][] = [
  ['INSERT INTO ingest_batches', 'ids'],
  ['SELECT event_id FROM event_ids', 'dedup look-up'],
  ['INSERT INTO events', 'events'],
  ['INSERT INTO event_ids', 'ledger'],
  ['SELECT stored.list_id', 'read-back'],
  ['INSERT INTO daily_scopes', 'recompute'],
];

describe('statements of an embedded write', () => {
  let svc: TestService;
  const statements: string[] = [];
  beforeAll(async () => {
    svc = await startTestService();
    svc.db.faultInjector = async (what) => void statements.push(what.replace(/\s+/g, ' ').trim());
  });
  afterAll(() => svc?.stop());

  /** The write's statements, by kind (the catalog's change poll runs beside writes on its own timer). */
  const kinds = () =>
    statements
      .filter((s) => !isCatalogPoll(s))
      .map((s) => KINDS.find(([prefix]) => s.startsWith(prefix))?.[1] ?? s);

  it('a second batch of a dated list: ids, dedup look-up, events, ledger, recompute — nothing else', async () => {
    await svc.pipeline.write([
      { type: 'list', list_id: LIST, name: 'l', timezone: 'America/New_York' } as MailstatsRecord,
    ]);
    await svc.pipeline.write([send(LIST, 'a1')], 'first');
    statements.length = 0;
    await svc.pipeline.write([send(LIST, 'a2'), send(LIST, 'a3')], 'second');
    expect(kinds()).toEqual(['ids', 'dedup look-up', 'events', 'ledger', 'recompute']);
  });

  it('a list record re-dates at once; the next write is dated in the new zone without a look-up, and reads its generation back', async () => {
    statements.length = 0;
    await svc.pipeline.write([
      { type: 'list', list_id: LIST, name: 'l', timezone: 'Asia/Tokyo' } as MailstatsRecord,
    ]);
    expect(statements.some((s) => s.startsWith('INSERT INTO list_dating'))).toBe(true);
    statements.length = 0;
    // 20:00 UTC: the 10th in New York, already the 11th in Tokyo.
    await svc.pipeline.write([send(LIST, 'a4', '2026-11-10T20:00:00Z')], 'third');
    expect(kinds()).toEqual(['ids', 'dedup look-up', 'events', 'read-back', 'ledger', 'recompute']);
    const rows = await svc.db.query<{ day: string }>(
      "SELECT toString(day) AS day FROM events WHERE event_id = 'a4'",
    );
    expect(rows).toEqual([{ day: '2026-11-11' }]);
  });

  it('writes that come while the queue is busy are written together: one look-up and one recompute, each its own insert', async () => {
    statements.length = 0;
    // Three Kafka chunks of three partitions at once, each with its token (its re-formable range).
    await Promise.all([
      svc.pipeline.write([send(LIST, 'b1')], 'p0:1-1'),
      svc.pipeline.write([send(LIST, 'b2')], 'p1:1-1'),
      svc.pipeline.write([send(LIST, 'b3'), send(LIST, 'b4')], 'p2:1-2'),
    ]);
    expect(kinds()).toEqual([
      'ids',
      'dedup look-up',
      // The list was re-dated (above): each batch reads its stored generation back before its ledger insert.
      ...['events', 'read-back', 'ledger', 'events', 'read-back', 'ledger', 'events', 'read-back', 'ledger'],
      'recompute',
    ]);
    // Each chunk is still a batch of its own: re-formed alone after a crash (same records, same token),
    // it stores nothing twice; the day rows count every record once.
    await svc.pipeline.write([send(LIST, 'b3'), send(LIST, 'b4')], 'p2:1-2');
    const [stored] = await svc.db.query<{ n: number }>(
      "SELECT count() AS n FROM events WHERE event_id IN ('b1', 'b2', 'b3', 'b4')",
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(stored).toEqual({ n: 4 });
    const [sets] = await svc.db.query<{ n: number }>(
      `SELECT sum(n) AS n FROM daily_sets WHERE list_id = {list:UInt64} AND type = 'send' AND day = '2026-11-10'
         AND gen = (SELECT max(gen) FROM list_dating WHERE list_id = {list:UInt64} AND done = 1)`,
      { list: LIST },
      { output_format_json_quote_64bit_integers: 0 },
    );
    // a1–a3 on the 10th in New York (a4 fell on the 11th in Tokyo; the list was re-dated), b1–b4 too.
    expect(sets).toEqual({ n: 7 });
  });
});
