import { callApi, type Session } from './api.js';
import { currentPreset, filterProblem, selectedWorkflowIds, triggerParam, triggerText } from './controls.js';
import { renderCharts } from './daily-charts.js';
import { renderDays } from './days-table.js';
import { $, messageOf } from './dom.js';
import { periodText, renderTotals } from './kpis.js';
import { isComparable, resolvePreset, todayIn, type ResolvedPeriod } from './period.js';
import { markLoading, setState, setStatus, showEmpty, showFailure, showFigures } from './results.js';
import { state } from './state.js';
import type { StatsRecord } from './stats.js';
import { totalsOf } from './totals.js';
import { writeView } from './url-state.js';
import { clearBreakdown, renderBreakdown, type WorkflowRow } from './workflow-table.js';

/** Fetching the figures for what the filters ask, and handing them to the parts that show them. */

/** automation.stats takes at most 1,000 workflow ids. */
const MAX_WORKFLOW_IDS = 1000;
/** Per-workflow stats calls in flight at once. */
const CONCURRENCY = 4;

type Common = { list_id: number; workflow_ids?: number[]; trigger_id?: number };

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
  try {
    const [now, previous] = await Promise.all([
      callApi<StatsRecord[]>(session, 'automation.stats', { ...common, ...period.params }),
      comparable
        ? callApi<StatsRecord[]>(session, 'automation.stats', { ...common, ...period.previous.params })
        : Promise.resolve(undefined),
    ]);
    if (seq !== state.seq) return;
    current = now;
    state.days = current;
    if (current.length === 0) {
      showEmpty(line, `${period.from} – ${period.to}`);
      return;
    }
    const totals = totalsOf(current);
    renderTotals(totals, previous && totalsOf(previous));
    renderCharts(
      { records: current, from: period.from, to: period.to, totals },
      previous && {
        records: previous,
        from: period.previous.from,
        to: period.previous.to,
        totals: totalsOf(previous),
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
  await loadBreakdown(seq, session, period, comparable, common, current.length);
}

/** The breakdown's calls, two per workflow: logged at debug by the service. */
const fetchRecords = (session: Session, params: object) =>
  callApi<StatsRecord[]>(session, 'automation.stats', params, 'breakdown');

/** Two stats calls per workflow (this period and the previous one), a few workflows at a time. */
async function loadBreakdown(
  seq: number,
  session: Session,
  period: ResolvedPeriod,
  comparable: boolean,
  common: Common,
  days: number,
): Promise<void> {
  const ids = new Set(common.workflow_ids ?? []);
  const workflows = ids.size > 0 ? state.workflows.filter((w) => ids.has(w.workflow_id)) : state.workflows;
  const rows: WorkflowRow[] = new Array(workflows.length);
  const all: { now: StatsRecord[]; before: StatsRecord[] } = { now: [], before: [] };
  const status = $('wf-status');
  clearBreakdown();
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
        const [now, before] = await Promise.all([
          fetchRecords(session, { ...params, ...period.params }),
          comparable ? fetchRecords(session, { ...params, ...period.previous.params }) : undefined,
        ]);
        rows[i] = { workflow: w, totals: totalsOf(now), previous: before && totalsOf(before) };
        all.now.push(...now);
        if (before) all.before.push(...before);
        done++;
        if (seq === state.seq) status.textContent = `Loading workflows… ${done}/${workflows.length}`;
      } catch (err) {
        failed = err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, workflows.length) }, worker));
  if (seq !== state.seq) return;
  setStatus(`Loaded ${days} day${days === 1 ? '' : 's'} with activity.`, false);
  if (failed !== undefined) {
    status.textContent = `Per-workflow figures failed: ${messageOf(failed)}`;
    setState('error');
    return;
  }
  state.breakdown = rows;
  renderBreakdown(rows, {
    totals: totalsOf(all.now),
    previous: comparable ? totalsOf(all.before) : undefined,
  });
  status.textContent = workflows.length ? `${workflows.length} workflows.` : 'No workflows to show.';
  $<HTMLButtonElement>('export-workflows').disabled = workflows.length === 0;
  $<HTMLButtonElement>('export-workflows-ro').disabled = workflows.length === 0;
  setState('loaded');
}
