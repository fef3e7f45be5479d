import type { Catalog } from '../../shared/catalog/catalog.js';
import type { Db } from '../../shared/clickhouse/client.js';
import type { CurrentGenerations } from '../../shared/clickhouse/generations.js';
import type { DayCounters } from '../../shared/clickhouse/schema.js';
import { readDailyStats, type StatsQuery } from '../../shared/clickhouse/stats-store.js';
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

/** A stats request read and authorised: the query it asks, and the list's currency. */
export interface StatsRequest {
  listId: number;
  query: StatsQuery;
  currency: string;
}

/**
 * The intake every stats-shaped operation shares: 407 → 406 → 101 → checks that depend on the list
 * (docs/api.md "Errors", "automation.stats"). A period that depends on the list's zone is resolved only
 * after authorize(): before it, a 406 for a list behind UTC and a 101 for an unknown one would tell an
 * outsider that the list exists and its zone.
 */
export async function statsRequest(
  deps: StatsDeps,
  caller: Caller,
  params: RawParams,
): Promise<StatsRequest> {
  return statsRequestWith(deps, params, requiredId(params, 'list_id'), (listId) =>
    authorize(deps.catalog, caller.userId, caller.apiKey, listId),
  );
}

/**
 * The same intake for a list fixed by the caller's credentials (`check` is the access check, run where
 * the list check runs; a share link fixes the list itself: docs/dashboard.md "Share links").
 */
export async function statsRequestWith(
  deps: StatsDeps,
  params: RawParams,
  listId: number,
  check: (listId: number) => Promise<void>,
): Promise<StatsRequest> {
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
  await check(listId);

  const list = await deps.catalog.list(listId);
  const period =
    fixed ?? resolvePeriod(periodParams, list?.timezone ?? deps.defaultTimezone, deps.maxPeriodDays);
  return { listId, query: { listId, workflowIds, triggerId, ...period }, currency: list?.currency ?? 'RON' };
}

/** The query's per-day rows, money as exact decimal text: from memory when held, else one engine read. */
export async function statsDays(deps: StatsDeps, query: StatsQuery): Promise<DayCounters[]> {
  return (await deps.dayRows?.rows(query)) ?? (await readDailyStats(deps.db, query, deps.generations));
}

/** automation.stats: the request's per-day rows, each shaped and rounded as the answer's record. */
export async function automationStats(
  deps: StatsDeps,
  caller: Caller,
  params: RawParams,
): Promise<JsonAnswer<StatsRecord[]>> {
  return statsAnswer(deps, await statsRequest(deps, caller, params));
}

/** The stats answer of a request already read and authorised (the API operation, a share link). */
export async function statsAnswer(deps: StatsDeps, req: StatsRequest): Promise<JsonAnswer<StatsRecord[]>> {
  const { listId, query, currency } = req;
  const answer = async () =>
    JsonAnswer.fromArray((await statsDays(deps, query)).map((d) => toStatsRecord(d, listId, currency)));
  return deps.cache ? deps.cache.read(query, currency, answer) : answer();
}
