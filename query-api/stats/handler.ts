import type { Catalog } from '../../shared/catalog/catalog.js';
import type { Db } from '../../shared/clickhouse/client.js';
import { readDailyStats } from '../../shared/clickhouse/stats-store.js';
import { authorize } from '../api12/auth.js';
import {
  optionalDate,
  optionalId,
  optionalIdList,
  optionalIntInRange,
  optionalMonth,
  requiredId,
  type RawParams,
} from '../api12/params.js';
import { toStatsRecord, type StatsRecord } from './answer.js';
import { resolvePeriod } from './period.js';

export const MAX_WORKFLOW_IDS = 1000;

export interface StatsDeps {
  db: Db;
  catalog: Catalog;
  defaultTimezone: string;
  maxPeriodDays: number;
}

export interface Caller {
  userId: string;
  apiKey: string;
}

/** automation.stats: 407 → 406 → 101 → answer (contract §2.2, §2.4). */
export async function automationStats(
  deps: StatsDeps,
  caller: Caller,
  params: RawParams,
): Promise<StatsRecord[]> {
  const listId = requiredId(params, 'list_id');
  const workflowIds = optionalIdList(params, 'workflow_ids', MAX_WORKFLOW_IDS) ?? null;
  const triggerId = optionalId(params, 'trigger_id') ?? null;
  const periodParams = {
    startDate: optionalDate(params, 'start_date'),
    stopDate: optionalDate(params, 'stop_date'),
    days: optionalIntInRange(params, 'days', 1, deps.maxPeriodDays),
    month: optionalMonth(params, 'month'),
  };
  const list = await deps.catalog.list(listId);
  const period = resolvePeriod(periodParams, list?.timezone ?? deps.defaultTimezone, deps.maxPeriodDays);
  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);

  const days = await readDailyStats(deps.db, { listId, workflowIds, triggerId, ...period });
  const currency = list?.currency ?? 'RON';
  return days.map((d) => toStatsRecord(d, listId, currency));
}
