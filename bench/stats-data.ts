import type { DatedActivity } from '../shared/clickhouse/event-store.js';
import type { ActivityRecord } from '../shared/records/index.js';
import { fromDayNumber, toDayNumber } from '../shared/dates.js';

/** The benchmark tenant: one list, 50 workflows, 3 triggers shared by all workflows, ~200k subscribers. */
export const BENCH = { listId: 1, workflows: 50, triggers: 3, subscribers: 200_000, days: 365 } as const;

/** A seeded pseudo-random generator in [0, 1): reproducible bench data. */
export function rng(seed: number) {
  return () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}

/**
 * `total` records spread evenly over the last BENCH.days days, in time order (as a live stream
 * arrives), yielded in batches. Sends, opens and clicks, with a few purchases.
 */
export function* benchBatches(
  total: number,
  batchSize: number,
  idPrefix: string,
  endDay: string,
  /** The list's dating generation the rows are written in (its current one, or readers never see them). */
  gen = 0,
): Generator<DatedActivity[]> {
  const rnd = rng(7);
  const firstDay = toDayNumber(endDay) - BENCH.days + 1;
  let batch: DatedActivity[] = [];
  for (let i = 0; i < total; i++) {
    const dayNumber = firstDay + Math.floor((i * BENCH.days) / total);
    const day = fromDayNumber(dayNumber);
    const pick = rnd();
    const type = pick < 0.5 ? 'send' : pick < 0.8 ? 'open' : pick < 0.98 ? 'click' : 'purchase';
    const base = {
      event_id: `${idPrefix}${i}`,
      list_id: BENCH.listId,
      workflow_id: 1 + Math.floor(rnd() * BENCH.workflows),
      trigger_id: 1 + Math.floor(rnd() * BENCH.triggers),
      subscriber_id: 1 + Math.floor(rnd() * BENCH.subscribers),
      timestamp: dayNumber * 86_400_000 + 43_200_000,
    };
    const record = (
      type === 'purchase'
        ? {
            type,
            ...base,
            order_id: `o${i}`,
            value_ron: (rnd() * 500).toFixed(2),
            value_eur: (rnd() * 100).toFixed(4),
          }
        : { type, ...base }
    ) as ActivityRecord;
    batch.push({ record, day, gen });
    if (batch.length === batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}
