import { ApiError, callApi, type Session, type WorkflowEntry } from './api.js';
import {
  currentPreset,
  filterProblem,
  periodOptions,
  selectedWorkflowIds,
  triggerParam,
} from './controls.js';
import { renderCharts, renderWorkflowBars } from './daily-charts.js';
import { renderDays } from './days-table.js';
import { $, messageOf } from './dom.js';
import { periodText, renderTotals } from './kpis.js';
import { isComparable, resolvePreset, todayIn, type ResolvedPeriod } from './period.js';
import { markLoading, setState, setStatus, showEmpty, showFailure, showFigures } from './results.js';
import { state } from './state.js';
import type { StatsRecord, StatsTotals, WorkflowStatsRow } from './stats.js';
import { minus, sumOfPartial, totalsOf, totalsOfGrouped, withExactMoney, type Totals } from './totals.js';
import { saveView } from './view.js';
import { clearHealth, renderHealth } from './health.js';
import { clearRates, renderRates } from './rates-table.js';
import { clearBreakdown, renderBreakdown, type Figures, type WorkflowRow } from './workflow-table.js';

/** Fetching the figures for what the filters ask, and handing them to the parts that show them. */

/** automation.stats takes at most 1,000 workflow ids. */
const MAX_WORKFLOW_IDS = 1000;
/** Per-workflow stats calls in flight at once. */
const CONCURRENCY = 4;

type Common = { list_id: number; workflow_ids?: number[]; trigger_id?: number };

/** A query's days as automation.stats answers them, and their totals with the period's exact money. */
interface Period {
  records: StatsRecord[];
  totals: Totals;
}

/** Asked again at most this often when the two answers of one query disagree (a write fell between). */
const ATTEMPTS = 3;

/**
 * The days (automation.stats) and the period's exact money (automation.statsTotals) of one query, asked
 * together. Both read the same rows; a write between the two reads shows as other days or purchases in
 * one of them, and then both are asked again, so that the money shown is that of the days shown.
 */
async function periodOf(session: Session, params: object, part?: 'breakdown'): Promise<Period> {
  for (let attempt = 1; ; attempt++) {
    const [records, money] = await Promise.all([
      callApi<StatsRecord[]>(session, 'automation.stats', params, part),
      callApi<StatsTotals>(session, 'automation.statsTotals', params, part),
    ]);
    const totals = totalsOf(records);
    const agree = money.days === records.length && money.purchase_count === totals.counts.purchase_count;
    if (agree || attempt === ATTEMPTS) return { records, totals: withExactMoney(totals, money) };
  }
}

export async function reload(): Promise<void> {
  const session = state.session;
  const list = state.list;
  if (!session || !list) return;
  const seq = ++state.seq;
  const preset = currentPreset();
  const ids = selectedWorkflowIds();
  saveView();
  for (const id of ['export-days', 'export-days-ro', 'export-workflows', 'export-workflows-ro'])
    $<HTMLButtonElement>(id).disabled = true;
  const problem =
    filterProblem(preset) ??
    (ids.length > MAX_WORKFLOW_IDS
      ? `Pick at most ${MAX_WORKFLOW_IDS} workflows (the API's limit), or none for all.`
      : undefined);
  if (problem) {
    showFailure(problem, undefined);
    return;
  }
  const period = resolvePreset(preset, todayIn(list.timezone), periodOptions());
  const comparable = isComparable(period);
  const line = periodText(period, comparable);
  const common: Common = {
    list_id: Number(list.list_id),
    ...(ids.length > 0 ? { workflow_ids: ids } : {}),
    ...triggerParam(),
  };
  markLoading(line);
  let current: StatsRecord[];
  let whole: Figures;
  try {
    const [now, previous] = await Promise.all([
      periodOf(session, { ...common, ...period.params }),
      comparable ? periodOf(session, { ...common, ...period.previous.params }) : Promise.resolve(undefined),
    ]);
    if (seq !== state.seq) return;
    current = now.records;
    state.days = current;
    if (current.length === 0) {
      const filters = filterWords(ids.length, common.trigger_id);
      // With filters: what the list holds without them, so that the page says what the filters did.
      const unfiltered = filters
        ? totalsOf(
            await callApi<StatsRecord[]>(session, 'automation.stats', {
              list_id: common.list_id,
              ...period.params,
            }),
          )
        : undefined;
      // A period that ends yesterday on a list whose first records came today: say where they are.
      const today = todayIn(list.timezone);
      const opts = periodOptions();
      const todayHas =
        period.to < today && !opts.includeToday && $('include-today-label').hidden === false
          ? (
              await callApi<StatsRecord[]>(session, 'automation.stats', {
                ...common,
                start_date: today,
                stop_date: today,
              })
            ).length > 0
          : false;
      if (seq !== state.seq) return;
      showEmpty(line, `${period.from} – ${period.to}`, filters, unfiltered?.days ?? 0);
      if (todayHas)
        $('empty-text').textContent +=
          ' Today has activity already: tick “Include today” (under Change on a phone) to see it.';
      return;
    }
    const totals = now.totals;
    whole = { totals, previous: previous?.totals };
    renderTotals(totals, whole.previous);
    renderCharts(
      { records: current, from: period.from, to: period.to, totals },
      previous && {
        records: previous.records,
        from: period.previous.from,
        to: period.previous.to,
        totals: previous.totals,
      },
      list.currency,
    );
    renderDays(current);
    showFigures(line);
    $<HTMLButtonElement>('export-days').disabled = false;
    $<HTMLButtonElement>('export-days-ro').disabled = false;
    setStatus(`Loaded ${current.length} day${current.length === 1 ? '' : 's'} with activity.`, true);
  } catch (err) {
    if (seq !== state.seq) return;
    showFailure(messageOf(err), line);
    return;
  }
  await loadBreakdown(seq, session, period, comparable, common, current.length, whole);
}

/** The filters set, in words ("the trigger filter (trigger 12)"), or undefined when none is. */
function filterWords(workflows: number, trigger: number | undefined): string | undefined {
  const parts = [
    workflows > 0 ? `the workflow filter (${workflows} workflow${workflows === 1 ? '' : 's'} ticked)` : '',
    trigger ? `the trigger filter (trigger ${trigger})` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' and ') : undefined;
}

/** This period's and (when comparable) the previous period's totals for `params`. */
async function figuresOf(
  session: Session,
  params: object,
  period: ResolvedPeriod,
  comparable: boolean,
): Promise<Figures> {
  // The breakdown's calls (four per workflow) are logged at debug by the service.
  const [now, before] = await Promise.all([
    periodOf(session, { ...params, ...period.params }, 'breakdown'),
    comparable ? periodOf(session, { ...params, ...period.previous.params }, 'breakdown') : undefined,
  ]);
  return { totals: now.totals, previous: before?.totals, records: now.records };
}

/**
 * "Other workflows": what the list's answer for all workflows holds beyond the workflows the catalog
 * names, from the API's answer for the named set as one query (so that its unique counts are exact).
 * Undefined when there is nothing else; a note when the named set is over the API's 1,000 ids.
 */
async function otherOf(
  session: Session,
  whole: Figures,
  rows: WorkflowRow[],
  common: Common,
  period: ResolvedPeriod,
  comparable: boolean,
): Promise<{ other?: Figures; note?: string }> {
  // Every record adds one to a count of records (sends_total, …, actions_failed) of its own workflow:
  // when the rows' counts add up to the whole's, no record is of a workflow outside the catalog.
  const addsUp = (t: Totals | undefined, part: (r: WorkflowRow) => Totals | undefined) =>
    !t || RECORD_COUNTS.every((f) => rows.reduce((n, r) => n + (part(r)?.counts[f] ?? 0), 0) === t.counts[f]);
  if (addsUp(whole.totals, (r) => r.totals) && addsUp(whole.previous, (r) => r.previous)) return {};
  if (rows.length > MAX_WORKFLOW_IDS)
    return {
      note: `Part of this activity is of workflows the catalog does not name; with more than ${MAX_WORKFLOW_IDS} named workflows it cannot be split off.`,
    };
  const named =
    rows.length === 0
      ? undefined
      : await figuresOf(
          session,
          { ...common, workflow_ids: rows.map((r) => r.workflow.workflow_id) },
          period,
          comparable,
        );
  return {
    other: {
      totals: named ? minus(whole.totals, named.totals) : whole.totals,
      previous: whole.previous && (named?.previous ? minus(whole.previous, named.previous) : whole.previous),
    },
  };
}

/** Counts of records: each activity record adds one to exactly one of them, in its own workflow. */
const RECORD_COUNTS = [
  'sends_total',
  'opens_total',
  'clicks_total',
  'purchase_count',
  'bounce_total',
  'unsub_total',
  'spam_total',
  'events_ok',
  'events_failed',
  'conditions_ok',
  'conditions_failed',
  'actions_ok',
  'actions_failed',
] as const;

/**
 * Per workflow, its days and exact money of this period and the previous one, a few workflows at a time; the total
 * row is `whole`, the answer the cards show (the same query: the ticked workflows, or all of the list's).
 */
async function loadBreakdown(
  seq: number,
  session: Session,
  period: ResolvedPeriod,
  comparable: boolean,
  common: Common,
  days: number,
  whole: Figures,
): Promise<void> {
  const ids = new Set(common.workflow_ids ?? []);
  const workflows = ids.size > 0 ? state.workflows.filter((w) => ids.has(w.workflow_id)) : state.workflows;
  const rows: WorkflowRow[] = new Array(workflows.length);
  const status = $('wf-status');
  clearBreakdown();
  clearRates();
  clearHealth();
  let failed: unknown;
  status.textContent = workflows.length ? `Loading ${workflows.length} workflows…` : 'No workflows to show.';
  // One request per period for every workflow, where the service answers it.
  let grouped: Grouped | undefined;
  try {
    grouped = await groupedOf(session, period, comparable, common);
  } catch (err) {
    failed = err;
  }
  if (seq !== state.seq) return;
  if (grouped || failed !== undefined) {
    const built = grouped ? groupedRows(grouped, workflows, ids.size === 0) : { rows: [], other: undefined };
    return showBreakdown(
      seq,
      days,
      whole,
      workflows,
      built.rows,
      { other: built.other },
      failed,
      ids.size,
      true,
    );
  }
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < workflows.length && seq === state.seq && failed === undefined) {
      const i = next++;
      const w = workflows[i]!;
      const params = {
        list_id: common.list_id,
        workflow_ids: [w.workflow_id],
        ...(common.trigger_id ? { trigger_id: common.trigger_id } : {}),
      };
      try {
        rows[i] = { workflow: w, ...(await figuresOf(session, params, period, comparable)) };
        done++;
        if (seq === state.seq) status.textContent = `Loading workflows… ${done}/${workflows.length}`;
      } catch (err) {
        failed = err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, workflows.length) }, worker));
  if (seq !== state.seq) return;
  let other: { other?: Figures; note?: string } = {};
  if (failed === undefined && ids.size === 0) {
    try {
      other = await otherOf(session, whole, rows, common, period, comparable);
    } catch (err) {
      failed = err;
    }
    if (seq !== state.seq) return;
  }
  showBreakdown(seq, days, whole, workflows, rows, other, failed, ids.size, false);
}

/** The per-workflow table, the bars, "Needs a look" and the ranked rates, once their figures are in. */
function showBreakdown(
  seq: number,
  days: number,
  whole: Figures,
  workflows: WorkflowEntry[],
  rows: WorkflowRow[],
  other: { other?: Figures; note?: string },
  failed: unknown,
  ticked: number,
  grouped: boolean,
): void {
  if (seq !== state.seq) return;
  const status = $('wf-status');
  setStatus(`Loaded ${days} day${days === 1 ? '' : 's'} with activity.`, false);
  if (failed !== undefined) {
    status.textContent = `Per-workflow figures failed: ${messageOf(failed)}`;
    setState('error');
    return;
  }
  const breakdown = {
    rows,
    other: other.other,
    otherNote: other.note,
    all: whole,
    allLabel: ticked > 0 ? 'All shown workflows, together' : 'All workflows of the list, together',
    grouped,
  };
  renderBreakdown(breakdown);
  renderHealth(rows, whole.totals.alerts, { now: whole.totals, before: whole.previous });
  renderWorkflowBars(rows);
  renderRates(breakdown, state.list!.currency);
  status.textContent = [
    workflows.length ? `${workflows.length} workflows.` : 'No workflows in the catalog.',
    other.other ? 'Part of the activity is of workflows the catalog does not name: “Other workflows”.' : '',
    other.note ?? '',
    grouped
      ? 'The last row is the API’s answer for these workflows as one query: a person two workflows reached is one recipient in it, so the people columns are not the sum of the rows.'
      : 'The last row is the API’s answer for these workflows as one query: a subscriber that two workflows reached on a day is one unique send in it, so unique columns are not the sum of the rows.',
  ]
    .filter(Boolean)
    .join(' ');
  $<HTMLButtonElement>('export-workflows').disabled = workflows.length === 0;
  $<HTMLButtonElement>('export-workflows-ro').disabled = workflows.length === 0;
  setState('loaded');
}

interface Grouped {
  now: WorkflowStatsRow[];
  before: WorkflowStatsRow[] | undefined;
}

/**
 * automation.statsByWorkflow for this period and the previous one: every workflow's figures in one
 * request each. Undefined when the service does not answer it (an older one: 404), and the page asks
 * per workflow instead.
 */
async function groupedOf(
  session: Session,
  period: ResolvedPeriod,
  comparable: boolean,
  common: Common,
): Promise<Grouped | undefined> {
  try {
    const [now, before] = await Promise.all([
      callApi<WorkflowStatsRow[]>(session, 'automation.statsByWorkflow', { ...common, ...period.params }),
      comparable
        ? callApi<WorkflowStatsRow[]>(session, 'automation.statsByWorkflow', {
            ...common,
            ...period.previous.params,
          })
        : Promise.resolve(undefined),
    ]);
    return { now, before };
  } catch (err) {
    if (err instanceof ApiError && err.code === 404) return undefined;
    throw err;
  }
}

const NO_ACTIVITY: WorkflowStatsRow = {
  workflow_id: '',
  workflow_name: null,
  sends_total: 0,
  opens_total: 0,
  clicks_total: 0,
  recipients: 0,
  openers: 0,
  clickers: 0,
  buyers: 0,
  purchase_count: 0,
  purchases_value_ron: 0,
  purchases_value_eur: 0,
  opens_unique_percent: 0,
  clicks_unique_percent: 0,
};

/**
 * The table's rows from the grouped answers: one per workflow of the catalog (none of its activity: a
 * row of zeros), and — all workflows shown — the activity of workflow ids the catalog does not name as
 * "Other workflows" (its counts and money; its people are not a sum, and are not shown).
 */
function groupedRows(
  g: Grouped,
  workflows: WorkflowEntry[],
  withOther: boolean,
): { rows: WorkflowRow[]; other: Figures | undefined } {
  const byId = (rows: WorkflowStatsRow[] | undefined) =>
    new Map((rows ?? []).map((r) => [String(r.workflow_id), r]));
  const [now, before] = [byId(g.now), byId(g.before)];
  const rows = workflows.map((w) => ({
    workflow: w,
    totals: totalsOfGrouped(now.get(String(w.workflow_id)) ?? NO_ACTIVITY),
    previous: g.before ? totalsOfGrouped(before.get(String(w.workflow_id)) ?? NO_ACTIVITY) : undefined,
  }));
  if (!withOther) return { rows, other: undefined };
  const named = new Set(workflows.map((w) => String(w.workflow_id)));
  const rest = (rows: WorkflowStatsRow[] | undefined) =>
    (rows ?? []).filter((r) => !named.has(String(r.workflow_id))).map(totalsOfGrouped);
  const [restNow, restBefore] = [rest(g.now), rest(g.before)];
  if (restNow.length === 0 && restBefore.length === 0) return { rows, other: undefined };
  return {
    rows,
    other: { totals: sumOfPartial(restNow), previous: g.before ? sumOfPartial(restBefore) : undefined },
  };
}
