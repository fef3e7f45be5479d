import { callApi, type Session } from './api.js';
import { currentPreset, selectedWorkflowIds, triggerParam } from './controls.js';
import { renderCharts } from './daily-charts.js';
import { $, messageOf, show } from './dom.js';
import { renderPeriodText, renderTotals } from './kpis.js';
import { isComparable, resolvePreset, todayIn, type ResolvedPeriod } from './period.js';
import { state, type BreakdownRow } from './state.js';
import type { StatsRecord } from './stats.js';
import { renderBreakdown, renderDays } from './tables.js';
import { totalsOf } from './totals.js';

/** Fetching the figures for what the filters ask, and handing them to the parts that show them. */

/** automation.stats takes at most 1,000 workflow ids. */
const MAX_WORKFLOW_IDS = 1000;
/** Per-workflow stats calls in flight at once. */
const CONCURRENCY = 4;

export function setStatus(text: string, busy: boolean): void {
  $('status').textContent = text;
  $('app').setAttribute('aria-busy', String(busy));
}

/** `loading` → `loaded` (everything shown, per-workflow table included) or `error`: for people and tests. */
export const setState = (s: 'loading' | 'loaded' | 'error') => ($('app').dataset.state = s);

export async function reload(): Promise<void> {
  const session = state.session;
  const list = state.list;
  if (!session || !list) return;
  const seq = ++state.seq;
  const period = resolvePreset(currentPreset(), todayIn(list.timezone));
  const ids = selectedWorkflowIds();
  show($('error'), undefined);
  if (ids.length > MAX_WORKFLOW_IDS) {
    setState('error');
    show($('error'), `Pick at most ${MAX_WORKFLOW_IDS} workflows (the API's limit), or none for all.`);
    return;
  }
  const common = {
    list_id: Number(list.list_id),
    ...(ids.length > 0 ? { workflow_ids: ids } : {}),
    ...triggerParam(),
  };
  setStatus('Loading…', true);
  setState('loading');
  $<HTMLButtonElement>('export-days').disabled = true;
  $<HTMLButtonElement>('export-workflows').disabled = true;
  const comparable = isComparable(period);
  try {
    const [current, previous] = await Promise.all([
      callApi<StatsRecord[]>(session, 'automation.stats', { ...common, ...period.params }),
      comparable
        ? callApi<StatsRecord[]>(session, 'automation.stats', { ...common, ...period.previous.params })
        : Promise.resolve(undefined),
    ]);
    if (seq !== state.seq) return;
    state.days = current;
    renderPeriodText(period, comparable);
    renderTotals(totalsOf(current), previous && totalsOf(previous));
    renderCharts(current);
    renderDays(current);
    $<HTMLButtonElement>('export-days').disabled = false;
    setStatus(`Loaded ${current.length} day${current.length === 1 ? '' : 's'} with activity.`, false);
  } catch (err) {
    if (seq !== state.seq) return;
    setStatus('', false);
    setState('error');
    show($('error'), messageOf(err));
    return;
  }
  await loadBreakdown(seq, session, period, common);
}

/** One stats call per workflow (the ticked ones, or all of the list's), a few at a time. */
async function loadBreakdown(
  seq: number,
  session: Session,
  period: ResolvedPeriod,
  common: { list_id: number; trigger_id?: string },
): Promise<void> {
  const ids = new Set(selectedWorkflowIds());
  const workflows = ids.size > 0 ? state.workflows.filter((w) => ids.has(w.workflow_id)) : state.workflows;
  const rows: BreakdownRow[] = new Array(workflows.length);
  const status = $('wf-status');
  let done = 0;
  let failed: unknown;
  status.textContent = workflows.length ? `Loading ${workflows.length} workflows…` : 'No workflows to show.';
  $('wf').replaceChildren();
  let next = 0;
  const worker = async () => {
    while (next < workflows.length && seq === state.seq && failed === undefined) {
      const i = next++;
      const w = workflows[i]!;
      try {
        const records = await callApi<StatsRecord[]>(session, 'automation.stats', {
          list_id: common.list_id,
          workflow_ids: [w.workflow_id],
          ...(common.trigger_id ? { trigger_id: common.trigger_id } : {}),
          ...period.params,
        });
        rows[i] = { workflow: w, totals: totalsOf(records) };
        done++;
        if (seq === state.seq) status.textContent = `Loading workflows… ${done}/${workflows.length}`;
      } catch (err) {
        failed = err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, workflows.length) }, worker));
  if (seq !== state.seq) return;
  if (failed !== undefined) {
    status.textContent = `Per-workflow figures failed: ${messageOf(failed)}`;
    setState('error');
    return;
  }
  state.breakdown = rows;
  renderBreakdown(rows);
  status.textContent = workflows.length ? `${workflows.length} workflows.` : 'No workflows to show.';
  $<HTMLButtonElement>('export-workflows').disabled = workflows.length === 0;
  setState('loaded');
}
