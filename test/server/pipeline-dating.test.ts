// Modes: server only — where other processes may claim, a write checks its lists' dating in the engine
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { isCatalogPoll, isChangePoll } from '../support/statements.js';

const LISTS = Array.from({ length: 25 }, (_, i) => 100 + i);

const record = (raw: Record<string, unknown>): MailstatsRecord => {
  const check = checkRecord(raw);
  if (!check.ok) throw new Error(check.reason);
  return check.record;
};
const send = (list: number, id: string) =>
  record({
    type: 'send',
    event_id: id,
    list_id: list,
    workflow_id: 1,
    subscriber_id: 1,
    timestamp: '2026-11-10T22:30:00Z',
  });

/**
 * A write over many lists already dated (ARCHITECTURE.md "Re-dating a list"): their zones and datings
 * are looked up in one statement each for the whole batch, not two per list (10,000 lists made that
 * 20,000 look-ups a write; BENCHMARKS.md "Many tenants"), and the rows are still dated in each list's zone.
 */
describe('the dating look-ups of a server-mode write', () => {
  let svc: TestService;
  const statements: string[] = [];
  beforeAll(async () => {
    svc = await startTestService();
    svc.db.faultInjector = async (what) => void statements.push(what.replace(/\s+/g, ' ').trim());
  });
  afterAll(() => svc?.stop());

  it('a batch over 25 dated lists looks up their zones once and their datings once', async () => {
    // Half the lists in Tokyo, where 22:30 UTC on the 10th is already the 11th; half in New York (the 10th).
    await svc.pipeline.write(
      LISTS.map((id, i) =>
        record({
          type: 'list',
          list_id: id,
          name: `l${id}`,
          timezone: i % 2 ? 'Asia/Tokyo' : 'America/New_York',
        }),
      ),
    );
    await svc.pipeline.write(
      LISTS.map((id) => send(id, `first-${id}`)),
      'first',
    );
    statements.length = 0;
    await svc.pipeline.write(
      LISTS.flatMap((id) => [send(id, `a-${id}`), send(id, `b-${id}`)]),
      'second',
    );
    const write = statements.filter((s) => !isCatalogPoll(s) && !isChangePoll(s));
    const datings = write.filter((s) => s.startsWith('SELECT list_id, gen, timezone'));
    const zones = write.filter((s) => s.startsWith('SELECT key, argMax(payload, (version, arrival))'));
    expect({ datings: datings.length, zones: zones.length }).toEqual({ datings: 1, zones: 1 });
    const days = await svc.db.query<{ list_id: number; day: string }>(
      `SELECT list_id, toString(day) AS day FROM events WHERE event_id LIKE 'a-%' ORDER BY list_id`,
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(days).toEqual(LISTS.map((id, i) => ({ list_id: id, day: i % 2 ? '2026-11-11' : '2026-11-10' })));
  });
});

/**
 * A catalog naming many new lists (issue 34: 10,000 of them were stored at ~71 records/s in server mode,
 * a claim and a done insert and their look-ups per list): the lists never claimed are claimed, read
 * back, checked for earlier rows and marked done together, so the statements of the write do not grow
 * with the number of lists, and list_dating gets two inserts (claims, done) per batch.
 */
describe('the dating of new lists in a server-mode catalog write', () => {
  let svc: TestService;
  const statements: string[] = [];
  beforeAll(async () => {
    svc = await startTestService();
    svc.db.faultInjector = async (what) => void statements.push(what.replace(/\s+/g, ' ').trim());
  });
  afterAll(() => svc?.stop());

  const catalogOf = async (ids: number[]) => {
    statements.length = 0;
    await svc.pipeline.write(
      ids.map((id, i) =>
        record({
          type: 'list',
          list_id: id,
          name: `n${id}`,
          timezone: i % 2 ? 'Asia/Tokyo' : 'Europe/Bucharest',
        }),
      ),
    );
    return statements.filter((s) => !isCatalogPoll(s) && !isChangePoll(s));
  };

  it('costs the same statements for 4 new lists as for 60, two of them inserts into list_dating', async () => {
    await catalogOf([999]); // after start-up recovery, which runs before the first write
    const few = await catalogOf([1000, 1001, 1002, 1003]);
    const many = await catalogOf(Array.from({ length: 60 }, (_, i) => 2000 + i));
    const datingInserts = (s: string[]) => s.filter((x) => x === 'INSERT INTO list_dating').length;
    expect({ few: few.length, datingInserts: datingInserts(many) }).toEqual({
      few: many.length,
      datingInserts: 2,
    });
    expect(datingInserts(few)).toBe(2);
    // Every list dated and done once, in generation 1 and its own zone.
    const rows = await svc.db.query<{ list_id: number; gen: number; timezone: string; dones: number }>(
      `SELECT list_id, gen, timezone, countIf(done = 1) AS dones FROM list_dating
       WHERE list_id >= 2000 GROUP BY list_id, gen, timezone ORDER BY list_id`,
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(rows).toEqual(
      Array.from({ length: 60 }, (_, i) => ({
        list_id: 2000 + i,
        gen: 1,
        timezone: i % 2 ? 'Asia/Tokyo' : 'Europe/Bucharest',
        dones: 1,
      })),
    );
  });
});
