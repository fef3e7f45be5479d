import type { Db } from './client.js';
import type { CurrentGenerations } from './generations.js';
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

/** The list's current generation: given (embedded, held in memory) or looked up in the same statement. */
const GEN = (known: boolean) => (known ? '{gen:UInt64}' : CURRENT_GEN);

const FROM_SCOPES = (known: boolean) => `
  SELECT toString(day) AS date, ${SCOPE_COUNTERS.join(', ')}, value_ron, value_eur
  FROM daily_scopes FINAL
  WHERE list_id = {list:UInt64} AND workflow_id = {workflow:UInt64} AND trigger_id = {trigger:UInt64}
    AND day BETWEEN {from:Date} AND {to:Date} AND gen = ${GEN(known)}
  ORDER BY day`;

const FROM_SETS = (known: boolean) => `
  SELECT toString(day) AS date, ${STATS_SELECT}
  FROM daily_sets
  WHERE list_id = {list:UInt64} AND workflow_id IN {workflows:Array(UInt64)}
    AND ({trigger:UInt64} = 0 OR trigger_id = {trigger:UInt64})
    AND day BETWEEN {from:Date} AND {to:Date} AND gen = ${GEN(known)}
  GROUP BY day
  ORDER BY day`;

/**
 * The SQL a stats request runs: precomputed rows (daily_scopes) for all workflows and for one workflow
 * over any trigger, a bitmap union of daily_sets for the rest: workflow subsets, and one workflow with a
 * trigger, whose daily_sets rows are already that shape (one per type and day, found by the key's
 * list, workflow and day), so no row is precomputed for it (event-store.ts, RECOMPUTE_BATCH). In the
 * list's generation `gen` when it is known, else in the current one looked up by the statement.
 */
export function statsSql(q: StatsQuery, gen?: number): { sql: string; params: Record<string, unknown> } {
  const known = gen !== undefined;
  const common = {
    list: q.listId,
    trigger: q.triggerId ?? 0,
    from: q.from,
    to: q.to,
    ...(known ? { gen } : {}),
  };
  if (q.workflowIds === null || (q.workflowIds.length === 1 && q.triggerId === null)) {
    return { sql: FROM_SCOPES(known), params: { ...common, workflow: q.workflowIds?.[0] ?? 0 } };
  }
  return { sql: FROM_SETS(known), params: { ...common, workflows: q.workflowIds } };
}

/**
 * The per-day rows of a stats answer, in one engine statement. With `generations` (embedded) the list's
 * current generation comes from memory; a re-dating that completes during the read (its older
 * generation may then be dropped under it) makes the read run again in the new one, so the answer is
 * always of one whole generation that was current while it was read.
 */
export async function readDailyStats(
  db: Db,
  q: StatsQuery,
  generations?: CurrentGenerations,
): Promise<DayCounters[]> {
  if (!generations) {
    const { sql, params } = statsSql(q);
    return db.read<DayCounters>(sql, params, READ_SETTINGS);
  }
  for (;;) {
    const gen = await generations.of(q.listId);
    const { sql, params } = statsSql(q, gen);
    const rows = await db.read<DayCounters>(sql, params, READ_SETTINGS);
    if ((await generations.of(q.listId)) === gen) return rows;
  }
}

/** A day of one (workflow, trigger) scope of a list, as `listScopes` reads it. */
export type ScopeDay = DayCounters & { workflow_id: number; trigger_id: number };

/**
 * Every precomputed answer of a list in generation `gen` — its daily_scopes rows of all workflows, of
 * each workflow and of each trigger — by scope and day: what `statsSql` reads a slice of. A (workflow,
 * trigger) row an older version precomputed is left out: it is not rewritten any more, so it may be
 * stale (`listPairs` computes that shape).
 */
export function listScopes(db: Db, listId: number, gen: number): Promise<ScopeDay[]> {
  return db.read<ScopeDay>(
    `SELECT workflow_id, trigger_id, toString(day) AS date, ${SCOPE_COUNTERS.join(', ')}, value_ron, value_eur
     FROM daily_scopes FINAL
     WHERE list_id = {list:UInt64} AND gen = {gen:UInt64} AND (workflow_id = 0 OR trigger_id = 0)
     ORDER BY workflow_id, trigger_id, day`,
    { list: listId, gen },
    READ_SETTINGS,
  );
}

/**
 * Each (workflow, trigger) pair's answers of a list in generation `gen`, by pair and day, computed from
 * daily_sets (not precomputed, see `statsSql`): what `statsSql` computes for one workflow with a trigger,
 * for every pair and day at once.
 */
export function listPairs(db: Db, listId: number, gen: number): Promise<ScopeDay[]> {
  return db.read<ScopeDay>(
    `SELECT workflow_id, trigger_id, toString(day) AS date, ${STATS_SELECT}
     FROM daily_sets
     WHERE list_id = {list:UInt64} AND gen = {gen:UInt64} AND trigger_id != 0
     GROUP BY workflow_id, trigger_id, day
     ORDER BY workflow_id, trigger_id, day`,
    { list: listId, gen },
    READ_SETTINGS,
  );
}

/** The activity types whose subscribers a stats answer counts once per day (the bitmaps of daily_sets). */
export const UNIQUE_TYPES = ['send', 'open', 'click'] as const;

/** One day's subscriber ids of one (workflow, trigger) scope and type, as `listSets` reads them. */
export interface ScopeDaySet {
  workflow_id: number;
  /** 0: any trigger (the union over the workflow's triggers, records without one included). */
  trigger_id: number;
  date: string;
  type: (typeof UNIQUE_TYPES)[number];
  ids: number[];
}

/**
 * The subscriber sets of a list in generation `gen` over the days `from`…`to`, per workflow and trigger
 * (and per workflow over any trigger) and day, for unique counts over workflow subsets: the union of a subset's sets on a day
 * is what `FROM_SETS` counts with bitmap unions. Ids are below 2^53 (records refuse larger ones), so
 * they arrive as exact JSON numbers.
 */
export function listSets(
  db: Db,
  listId: number,
  gen: number,
  from: string,
  to: string,
): Promise<ScopeDaySet[]> {
  const sets = (trigger: string, group: string, where: string) => `
    SELECT workflow_id, ${trigger} AS trigger_id, toString(day) AS date, toString(type) AS type,
      bitmapToArray(groupBitmapMergeState(subs)) AS ids
    FROM daily_sets
    WHERE list_id = {list:UInt64} AND gen = {gen:UInt64} AND type IN {types:Array(String)}
      AND day BETWEEN {from:Date} AND {to:Date} ${where}
    GROUP BY workflow_id, ${group} day, type`;
  return db.read<ScopeDaySet>(
    `SELECT * FROM (
       ${sets('trigger_id', 'trigger_id,', 'AND trigger_id != 0')}
       UNION ALL
       ${sets('toUInt64(0)', '', '')}
     ) ORDER BY workflow_id, trigger_id, date, type`,
    { list: listId, gen, types: [...UNIQUE_TYPES], from, to },
    READ_SETTINGS,
  );
}
