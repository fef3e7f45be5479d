import type { Catalog } from '../../shared/catalog/catalog.js';
import type { Db } from '../../shared/clickhouse/client.js';
import type { CurrentGenerations } from '../../shared/clickhouse/generations.js';
import { readDailyStats } from '../../shared/clickhouse/stats-store.js';
import { authorize } from '../api12/auth.js';
import type { Caller } from '../api12/operation.js';
import { JsonAnswer } from '../api12/json-answer.js';
import {
  optionalDate,
  optionalId,
  optionalIdList,
  optionalIntInRange,
  optionalMonth,
  requiredId,
  type RawParams,
} from '../api12/params.js';
import { toStatsRecord } from './answer.js';
import type { StatsRecord } from './record.js';
import type { StatsCache } from './cache.js';
import type { DayRows } from './day-rows.js';
import { resolvePeriod, type PeriodParams } from './period.js';

export const MAX_WORKFLOW_IDS = 1000;

export interface StatsDeps {
  db: Db;
  /** Embedded: each list's current dating generation, held by the writer (server mode: looked up). */
  generations?: CurrentGenerations;
  catalog: Catalog;
  defaultTimezone: string;
  maxPeriodDays: number;
  /** Embedded: lists' per-day answers held in memory (absent: every uncached answer reads the engine). */
  dayRows?: DayRows;
  /** The per-day rows, cached per list version (absent or disabled: always read). */
  cache?: StatsCache;
}

/**
 * Whether the period is fixed by the params alone. Otherwise it is counted from "today" in the list's
 * time zone, which only a caller who may read the list can be told anything about.
 */
const zoneFree = (p: PeriodParams) =>
  p.startDate !== undefined
    ? p.stopDate !== undefined
    : p.stopDate !== undefined || (p.month !== undefined && p.month.year !== undefined);

/**
 * automation.stats: 407 → 406 → 101 → checks that depend on the list → answer (docs/api.md "Errors", "automation.stats").
 * A period that depends on the list's zone is resolved only after authorize(): before it, a 406 for a
 * list behind UTC and a 101 for an unknown one would tell an outsider that the list exists and its zone.
 */
export async function automationStats(
  deps: StatsDeps,
  caller: Caller,
  params: RawParams,
): Promise<JsonAnswer<StatsRecord[]>> {
  const listId = requiredId(params, 'list_id');
  const workflowIds = optionalIdList(params, 'workflow_ids', MAX_WORKFLOW_IDS) ?? null;
  const triggerId = optionalId(params, 'trigger_id') ?? null;
  const periodParams: PeriodParams = {
    startDate: optionalDate(params, 'start_date'),
    stopDate: optionalDate(params, 'stop_date'),
    days: optionalIntInRange(params, 'days', 1, deps.maxPeriodDays),
    month: optionalMonth(params, 'month'),
  };
  // Any zone gives the same answer here: it is never asked for "today".
  const fixed = zoneFree(periodParams)
    ? resolvePeriod(periodParams, deps.defaultTimezone, deps.maxPeriodDays)
    : undefined;
  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);

  const list = await deps.catalog.list(listId);
  const period =
    fixed ?? resolvePeriod(periodParams, list?.timezone ?? deps.defaultTimezone, deps.maxPeriodDays);
  const query = { listId, workflowIds, triggerId, ...period };
  const currency = list?.currency ?? 'RON';
  const answer = async () => {
    const days =
      (await deps.dayRows?.rows(query)) ?? (await readDailyStats(deps.db, query, deps.generations));
    return JsonAnswer.from(days.map((d) => toStatsRecord(d, listId, currency)));
  };
  return deps.cache ? deps.cache.read(query, currency, answer) : answer();
}
