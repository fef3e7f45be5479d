import type { Db } from './client.js';
import { CURRENT_GEN, SCOPE_COUNTERS, STATS_SELECT, type DayCounters } from './schema.js';

export interface StatsQuery {
  listId: number;
  /** null: all workflows of the list. */
  workflowIds: number[] | null;
  /** null: any trigger. */
  triggerId: number | null;
  from: string;
  to: string;
}

/** Money leaves as exact decimal strings; counts as plain JSON numbers. */
export const READ_SETTINGS = {
  output_format_json_quote_decimals: 1,
  output_format_json_quote_64bit_integers: 0,
} as const;

const FROM_SCOPES = `
  SELECT toString(day) AS date, ${SCOPE_COUNTERS.join(', ')}, value_ron, value_eur
  FROM daily_scopes FINAL
  WHERE list_id = {list:UInt64} AND workflow_id = {workflow:UInt64} AND trigger_id = {trigger:UInt64}
    AND day BETWEEN {from:Date} AND {to:Date} AND gen = ${CURRENT_GEN}
  ORDER BY day`;

const FROM_SETS = `
  SELECT toString(day) AS date, ${STATS_SELECT}
  FROM daily_sets
  WHERE list_id = {list:UInt64} AND workflow_id IN {workflows:Array(UInt64)}
    AND ({trigger:UInt64} = 0 OR trigger_id = {trigger:UInt64})
    AND day BETWEEN {from:Date} AND {to:Date} AND gen = ${CURRENT_GEN}
  GROUP BY day
  ORDER BY day`;

/** The SQL a stats request runs: precomputed rows for all/one workflow, a bitmap union for subsets. */
export function statsSql(q: StatsQuery): { sql: string; params: Record<string, unknown> } {
  const common = { list: q.listId, trigger: q.triggerId ?? 0, from: q.from, to: q.to };
  if (q.workflowIds === null || q.workflowIds.length === 1) {
    return { sql: FROM_SCOPES, params: { ...common, workflow: q.workflowIds?.[0] ?? 0 } };
  }
  return { sql: FROM_SETS, params: { ...common, workflows: q.workflowIds } };
}

export async function readDailyStats(db: Db, q: StatsQuery): Promise<DayCounters[]> {
  const { sql, params } = statsSql(q);
  return db.query<DayCounters>(sql, params, READ_SETTINGS);
}
