import type { Db } from './client.js';
import type { CurrentGenerations } from './generations.js';
import { CURRENT_GEN } from './schema.js';
import { READ_SETTINGS, type StatsQuery } from './stats-store.js';

/**
 * Distinct subscribers over a whole period: the union of daily_sets' per-day subscriber bitmaps (exact),
 * with the same list, workflow and trigger filters as the per-day answer (docs/api.md
 * "automation.statsTotals", "automation.statsByWorkflow").
 */
export interface PeriodPeople {
  recipients: number;
  openers: number;
  clickers: number;
  buyers: number;
}

/** One workflow's figures over a period (`readByWorkflow`): totals, people and exact money. */
export interface WorkflowPeriod extends PeriodPeople {
  workflow_id: number;
  sends_total: number;
  opens_total: number;
  clicks_total: number;
  purchase_count: number;
  bounce_total: number;
  unsub_total: number;
  spam_total: number;
  /** Decimal(38,4) text. */
  value_ron: string;
  value_eur: string;
}

const PEOPLE = `
  groupBitmapMergeIf(subs, type = 'send') AS recipients,
  groupBitmapMergeIf(subs, type = 'open') AS openers,
  groupBitmapMergeIf(subs, type = 'click') AS clickers,
  groupBitmapMergeIf(subs, type = 'purchase') AS buyers`;

const FIGURES = `
  sumIf(n, type = 'send') AS sends_total,
  sumIf(n, type = 'open') AS opens_total,
  sumIf(n, type = 'click') AS clicks_total,
  sumIf(n, type = 'purchase') AS purchase_count,
  sumIf(n, type = 'bounce') AS bounce_total,
  sumIf(n, type = 'unsubscribe') AS unsub_total,
  sumIf(n, type = 'spam') AS spam_total,
  sumIf(ron, type = 'purchase') AS value_ron,
  sumIf(eur, type = 'purchase') AS value_eur,
  ${PEOPLE}`;

/** The rows of daily_sets a query reads: its list, workflows (all when none given), trigger, period, generation. */
const WHERE = (known: boolean) => `
  WHERE list_id = {list:UInt64}
    AND ({all:UInt8} = 1 OR workflow_id IN {workflows:Array(UInt64)})
    AND ({trigger:UInt64} = 0 OR trigger_id = {trigger:UInt64})
    AND day BETWEEN {from:Date} AND {to:Date}
    AND gen = ${known ? '{gen:UInt64}' : CURRENT_GEN}`;

function paramsOf(q: StatsQuery, gen?: number): Record<string, unknown> {
  return {
    list: q.listId,
    all: q.workflowIds === null ? 1 : 0,
    workflows: q.workflowIds ?? [],
    trigger: q.triggerId ?? 0,
    from: q.from,
    to: q.to,
    ...(gen !== undefined ? { gen } : {}),
  };
}

/**
 * One statement in the list's current generation (embedded: held in memory, the read run again when a
 * re-dating completed meanwhile, as `readDailyStats` does; server mode: looked up by the statement).
 */
async function inCurrentGeneration<T>(
  db: Db,
  q: StatsQuery,
  sql: (known: boolean) => string,
  generations?: CurrentGenerations,
): Promise<T[]> {
  if (!generations) return db.read<T>(sql(false), paramsOf(q), READ_SETTINGS);
  for (;;) {
    const gen = await generations.of(q.listId);
    const rows = await db.read<T>(sql(true), paramsOf(q, gen), READ_SETTINGS);
    if ((await generations.of(q.listId)) === gen) return rows;
  }
}

/** The period's distinct recipients, openers, clickers and buyers, in one statement. */
export async function readPeople(
  db: Db,
  q: StatsQuery,
  generations?: CurrentGenerations,
): Promise<PeriodPeople> {
  const rows = await inCurrentGeneration<PeriodPeople>(
    db,
    q,
    (known) => `SELECT ${PEOPLE} FROM daily_sets ${WHERE(known)}`,
    generations,
  );
  const r = rows[0];
  return {
    recipients: Number(r?.recipients ?? 0),
    openers: Number(r?.openers ?? 0),
    clickers: Number(r?.clickers ?? 0),
    buyers: Number(r?.buyers ?? 0),
  };
}

/** Every workflow's figures over the period (workflows with a row in it), ascending by id, in one statement. */
export async function readByWorkflow(
  db: Db,
  q: StatsQuery,
  generations?: CurrentGenerations,
): Promise<WorkflowPeriod[]> {
  const rows = await inCurrentGeneration<WorkflowPeriod>(
    db,
    q,
    (known) =>
      `SELECT workflow_id, ${FIGURES} FROM daily_sets ${WHERE(known)} GROUP BY workflow_id ORDER BY workflow_id`,
    generations,
  );
  return rows.map((r) => ({
    ...r,
    workflow_id: Number(r.workflow_id),
    sends_total: Number(r.sends_total),
    opens_total: Number(r.opens_total),
    clicks_total: Number(r.clicks_total),
    purchase_count: Number(r.purchase_count),
    bounce_total: Number(r.bounce_total),
    unsub_total: Number(r.unsub_total),
    spam_total: Number(r.spam_total),
    recipients: Number(r.recipients),
    openers: Number(r.openers),
    clickers: Number(r.clickers),
    buyers: Number(r.buyers),
  }));
}
