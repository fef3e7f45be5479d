import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Progress, progressLine, summaryLine } from '../../admin/progress.js';

/** A stream that keeps what is written to it; a terminal or not. */
function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 120, write: (t: string) => writes.push(t) } };
}

describe('import progress (admin/progress.ts)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-25T10:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('the plain line: share of the file, records, rate and ETA; no share nor ETA for stdin', () => {
    expect(
      progressLine({ name: 'events.ndjson', records: 400_000, seconds: 10, bytes: 40, total: 100 }),
    ).toBe('events.ndjson: 40.0% 400000 records, 40000 records/s, ETA 15 s');
    expect(progressLine({ name: 'stdin', records: 1234, seconds: 2, bytes: 999, total: 0 })).toBe(
      'stdin: 1234 records, 617 records/s',
    );
    expect(progressLine({ name: 'x.csv', records: 0, seconds: 0, bytes: 0, total: 10 })).toBe(
      'x.csv: 0.0% 0 records, 0 records/s',
    );
  });

  it('the summary: accepted, rejected (and where they went), seconds, records/s', () => {
    expect(
      summaryLine({
        name: 'events.ndjson',
        accepted: 1_000_000,
        rejected: 2,
        rejectedPath: 'events.ndjson.rejected.ndjson',
        seconds: 31.2,
        sent: 1_000_002,
      }),
    ).toBe(
      'events.ndjson: accepted 1000000, rejected 2 (see events.ndjson.rejected.ndjson), 31.2 s, 32051 records/s',
    );
    expect(
      summaryLine({
        name: 'a.json',
        accepted: 10,
        rejected: 0,
        rejectedPath: 'unused',
        seconds: 0.5,
        sent: 10,
      }),
    ).toBe('a.json: accepted 10, rejected 0, 0.5 s, 20 records/s');
  });

  it('not on a terminal: one plain line every 5 seconds, none after stop', () => {
    const { writes, stream } = sink(false);
    const p = new Progress('events.ndjson', 1000, 0, { stream });
    p.read(250);
    p.records(5000);
    vi.advanceTimersByTime(4_999);
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(writes).toEqual(['events.ndjson: 25.0% 5000 records, 1000 records/s, ETA 15 s\n']);
    p.read(250);
    p.records(5000);
    vi.advanceTimersByTime(5_000);
    expect(writes[1]).toBe('events.ndjson: 50.0% 10000 records, 1000 records/s, ETA 10 s\n');
    p.stop();
    p.stop(); // idempotent
    vi.advanceTimersByTime(60_000);
    expect(writes).toHaveLength(2);
    expect(writes.join('')).not.toContain('\u001b'); // no terminal control codes in a log
  });

  it('a resumed import counts the skipped bytes as read', () => {
    const { writes, stream } = sink(false);
    const p = new Progress('big.ndjson', 1000, 500, { stream, everyMs: 1000 });
    vi.advanceTimersByTime(1000);
    expect(writes[0]).toMatch(/^big\.ndjson: 50\.0% 0 records/);
    p.stop();
  });

  it('on a terminal: the cli-progress bar (records, rate, ETA), cleared at stop', () => {
    const { writes, stream } = sink(true);
    const p = new Progress('events.ndjson', 1000, 0, { stream });
    p.read(500);
    p.records(20_000);
    vi.advanceTimersByTime(2_000);
    const drawn = writes.join('');
    expect(drawn).toMatch(/events\.ndjson: \[#{15}\.{15}\] 50% 20000 records, 10000 records\/s, ETA \d+s/);
    p.stop();
    const after = writes.length;
    vi.advanceTimersByTime(10_000);
    expect(writes).toHaveLength(after);
  });
});
