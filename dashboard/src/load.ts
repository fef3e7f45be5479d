import { callApi, type Session } from './api.js';
import { currentPreset, filterProblem, selectedWorkflowIds, triggerParam, triggerText } from './controls.js';
import { renderCharts, renderWorkflowLines } from './daily-charts.js';
import { renderDays } from './days-table.js';
import { $, messageOf } from './dom.js';
import { periodText, renderTotals } from './kpis.js';
import { isComparable, resolvePreset, todayIn, type ResolvedPeriod } from './period.js';
import { markLoading, setState, setStatus, showEmpty, showFailure, showFigures } from './results.js';
import { state } from './state.js';
import type { StatsRecord, StatsTotals } from './stats.js';
import { minus, totalsOf, withExactMoney, type Totals } from './totals.js';
import { writeView } from './url-state.js';
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
  writeView({
    list: list.list_id,
    period: $<HTMLSelectElement>('period').value,
    from: preset.kind === 'custom' ? preset.start : undefined,
    to: preset.kind === 'custom' ? preset.stop : undefined,
    workflows: ids,
    trigger: triggerText(),
  });
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
  const period = resolvePreset(preset, todayIn(list.timezone));
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
      if (seq !== state.seq) return;
      showEmpty(line, `${period.from} – ${period.to}`, filters, unfiltered?.days ?? 0);
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
  let done = 0;
  let failed: unknown;
  status.textContent = workflows.length ? `Loading ${workflows.length} workflows…` : 'No workflows to show.';
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
    allLabel: ids.size > 0 ? 'All shown workflows, together' : 'All workflows of the list, together',
  };
  renderBreakdown(breakdown);
  renderHealth(rows);
  renderWorkflowLines(rows, period.from, period.to);
  renderRates(breakdown, state.list!.currency);
  status.textContent = [
    workflows.length ? `${workflows.length} workflows.` : 'No workflows in the catalog.',
    other.other ? 'Part of the activity is of workflows the catalog does not name: “Other workflows”.' : '',
    other.note ?? '',
    'The last row is the API’s answer for these workflows as one query: a subscriber that two workflows reached on a day is one unique send in it, so unique columns are not the sum of the rows.',
  ]
    .filter(Boolean)
    .join(' ');
  $<HTMLButtonElement>('export-workflows').disabled = workflows.length === 0;
  $<HTMLButtonElement>('export-workflows-ro').disabled = workflows.length === 0;
  setState('loaded');
}
