import { readByWorkflow, type WorkflowPeriod } from '../../shared/clickhouse/people-store.js';
import { centsToNumber, percent, toUnits4, unitsToCents } from '../../shared/money.js';
import type { Caller } from '../api12/operation.js';
import type { RawParams } from '../api12/params.js';
import { JsonAnswer } from '../api12/json-answer.js';
import { statsRequest, type StatsDeps, type StatsRequest } from './handler.js';
import type { WorkflowTotals } from './record.js';

/** One workflow's row of the answer, money rounded once from its exact sum. */
export function workflowTotalsOf(w: WorkflowPeriod, name: string | null): WorkflowTotals {
  return {
    workflow_id: String(w.workflow_id),
    workflow_name: name,
    sends_total: w.sends_total,
    opens_total: w.opens_total,
    clicks_total: w.clicks_total,
    recipients: w.recipients,
    openers: w.openers,
    clickers: w.clickers,
    buyers: w.buyers,
    purchase_count: w.purchase_count,
    purchases_value_ron: centsToNumber(unitsToCents(toUnits4(w.value_ron))),
    purchases_value_eur: centsToNumber(unitsToCents(toUnits4(w.value_eur))),
    opens_unique_percent: percent(w.openers, w.recipients),
    clicks_unique_percent: percent(w.clickers, w.recipients),
  };
}

/**
 * The answer of a request already read and authorised (the API operation, a share link). The figures
 * are kept in the answer cache (the list's version retires them); the names are the catalog's of now
 * (a catalog change does not move a list's version).
 */
export async function byWorkflowAnswer(
  deps: StatsDeps,
  req: StatsRequest,
): Promise<JsonAnswer<WorkflowTotals[]>> {
  const { query, currency } = req;
  const figures = async () =>
    JsonAnswer.from(
      (await readByWorkflow(deps.db, query, deps.generations)).map((w) => workflowTotalsOf(w, null)),
    );
  const [held, workflows] = await Promise.all([
    deps.cache ? deps.cache.read(query, `${currency}|by-workflow`, figures) : figures(),
    deps.catalog.workflows(query.listId),
  ]);
  const names = new Map(workflows.map((w) => [String(w.workflow_id), w.name]));
  return JsonAnswer.from(
    held.value().map((w) => ({ ...w, workflow_name: names.get(w.workflow_id) ?? null })),
  );
}

/**
 * automation.statsByWorkflow (an operation of this service, docs/api.md "automation.statsByWorkflow"):
 * the params, checks and period of automation.stats; per workflow of the list (or of `workflow_ids`)
 * with activity in the period, its figures over the whole period, from one grouped statement.
 */
export async function automationStatsByWorkflow(
  deps: StatsDeps,
  caller: Caller,
  params: RawParams,
): Promise<JsonAnswer<WorkflowTotals[]>> {
  return byWorkflowAnswer(deps, await statsRequest(deps, caller, params));
}
