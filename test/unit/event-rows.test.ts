import { describe, expect, it } from 'vitest';
import { encodeRows } from '../../shared/clickhouse/client.js';
import { encodeBatchRows, encodeEventRows, encodeLedgerRows } from '../../shared/clickhouse/event-rows.js';
import { eventRow, type DatedActivity } from '../../shared/clickhouse/event-store.js';
import { toDateTime64 } from '../../shared/dates.js';
import { ACTIVITY_TYPES, checkRecord } from '../../shared/records/index.js';
import { rng } from '../support/rng.js';

/** Free text as records may carry it: plain, and with every character TabSeparated escapes. */
const TEXTS = ['e-1', 'a\tb', 'line\nbreak', 'cr\rhere', 'back\\slash', '\\N', 'ü€😀', 'x'.repeat(120)];

/** Valid records of every type, with and without each optional field, through the record schema. */
function batch(n: number, seed: number): DatedActivity[] {
  const rnd = rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const out: DatedActivity[] = [];
  for (let i = 0; i < n; i++) {
    const type = pick(ACTIVITY_TYPES);
    const ts = Date.UTC(2025, 0, 1) + Math.floor(rnd() * 600 * 86_400_000);
    const raw: Record<string, unknown> = {
      type,
      event_id: `${pick(TEXTS)}${i}`,
      list_id: 1 + Math.floor(rnd() * 2 ** 40),
      workflow_id: 1 + Math.floor(rnd() * 1000),
      subscriber_id: 1 + Math.floor(rnd() * 1e9),
      timestamp: rnd() < 0.5 ? ts : new Date(ts).toISOString(),
    };
    if (rnd() < 0.7) raw.trigger_id = 1 + Math.floor(rnd() * 9);
    if (type !== 'send' && !['event', 'condition', 'action'].includes(type) && rnd() < 0.6)
      raw.sent_at = ts - Math.floor(rnd() * 86_400_000 * 3);
    if (type === 'purchase') {
      raw.order_id = pick(TEXTS);
      raw.value_ron = rnd() < 0.5 ? (rnd() * 1000).toFixed(2) : Math.round(rnd() * 1e6) / 100;
      raw.value_eur = rnd() < 0.5 ? '0' : (rnd() * 1000).toFixed(4);
    }
    if (['event', 'condition', 'action'].includes(type)) {
      raw.status = rnd() < 0.5 ? 'ok' : 'failed';
      if (rnd() < 0.5) raw.reason = rnd() < 0.3 ? '' : pick(TEXTS);
    }
    const check = checkRecord(raw);
    if (!check.ok) throw new Error(`${check.reason}: ${JSON.stringify(raw)}`);
    const day = new Date(ts).toISOString().slice(0, 10);
    out.push(
      rnd() < 0.2
        ? { record: check.record as never, day }
        : { record: check.record as never, day, gen: 1 + Math.floor(rnd() * 5) },
    );
  }
  return out;
}

describe('encodeEventRows, encodeBatchRows, encodeLedgerRows', () => {
  it('writes the bytes the generic encoder writes for the same rows, every type and field', () => {
    const ingestedAt = toDateTime64(Date.UTC(2026, 10, 27, 8, 30, 1, 234));
    for (const seed of [1, 2, 3]) {
      const rows = batch(5_000, seed);
      const fast = encodeEventRows(rows, ingestedAt);
      const generic = encodeRows(rows.map((a) => eventRow(a, ingestedAt)));
      expect(fast.equals(generic)).toBe(true);
    }
  });

  it("write the ingest_batches and event_ids rows the generic encoder writes (the write's other inserts)", () => {
    const batchId = '0b7a1c2e-5d7f-4c1e-9a55-3e2f4d6b8a90';
    const firstSeen = toDateTime64(Date.UTC(2026, 10, 27, 8, 30, 1, 5));
    for (const seed of [4, 5]) {
      const rows = batch(5_000, seed);
      const ids = rows.map((a) => [
        batchId,
        a.record.event_id,
        a.record.list_id,
        a.day,
        a.gen ?? 0,
        a.record.workflow_id,
        a.record.trigger_id ?? 0,
      ]);
      expect(encodeBatchRows(batchId, rows).equals(encodeRows(ids))).toBe(true);
      const ledger = rows.map((a) => [a.record.event_id, firstSeen]);
      expect(encodeLedgerRows(rows, firstSeen).equals(encodeRows(ledger))).toBe(true);
    }
  });

  it('escapes the free-text cells: a record with a tab in its id is still one line of 16 cells', () => {
    const [a] = batch(1, 9);
    const row = { ...a!, record: { ...a!.record, event_id: 'x\ty\nz\\' } };
    const text = encodeEventRows([row], '2026-11-27 00:00:00.000').toString();
    expect(text.split('\n')).toHaveLength(2);
    expect(text.split('\t')).toHaveLength(16);
    expect(text.startsWith('x\\ty\\nz\\\\\t')).toBe(true);
  });
});
