import { $, el } from './dom.js';
import { format2, formatInt } from './format.js';
import { percent, type Totals } from './totals.js';
import type { StatsAlert } from './stats.js';
import type { WorkflowRow } from './workflow-table.js';

/**
 * Execution health on the overview (docs/dashboard.md "Needs a look"): a workflow whose sends fell to
 * zero against the previous period, or a share of failed steps (events, conditions and actions that
 * failed ÷ all of them) risen by 10 percentage points or more, with at least 3 failures. The figures are
 * those of the per-workflow table and of the cards; this only points at them. The grouped answer of the
 * table (automation.statsByWorkflow) does not count steps: then the share of failed steps is that of the
 * workflows shown together (the cards' query).
 */
const STEP_JUMP_POINTS = 10;
const MIN_FAILURES = 3;
/** Stopped workflows listed one by one; more fold under one line. */
const MAX_STOPPED_SHOWN = 5;

const failed = (t: Totals) => t.counts.events_failed + t.counts.conditions_failed + t.counts.actions_failed;
const steps = (t: Totals) => failed(t) + t.counts.events_ok + t.counts.conditions_ok + t.counts.actions_ok;

export interface HealthFlag {
  /** The workflow flagged; none for a flag of the workflows shown together. */
  workflowId?: number;
  text: string;
}

/** The share of failed steps of `now` against `before`, when it rose enough to flag: its text. */
function stepsJump(now: Totals, before: Totals, what: string, its = 'its'): string | undefined {
  if (steps(now) === 0 || failed(now) < MIN_FAILURES) return undefined;
  const share = percent(failed(now), steps(now));
  const was = steps(before) > 0 ? percent(failed(before), steps(before)) : 0;
  return share - was >= STEP_JUMP_POINTS
    ? `${what}: ${format2(share)} % of ${its} steps failed (events, conditions, actions: ${formatInt(failed(now))} of ${formatInt(steps(now))}), against ${format2(was)} % in the previous period.`
    : undefined;
}

/** The flags of the rows; `whole` (the workflows shown together) for the failed steps when rows lack them. */
export function healthFlags(
  rows: readonly WorkflowRow[],
  whole?: { now: Totals; before?: Totals },
): HealthFlag[] {
  const out: HealthFlag[] = [];
  const stepsOfRows = rows.every((r) => !r.totals.partial);
  for (const r of rows) {
    const [now, before] = [r.totals, r.previous];
    if (!before) continue;
    const name = `${r.workflow.name || 'Workflow'} (#${r.workflow.workflow_id})`;
    if (before.counts.sends_total > 0 && now.counts.sends_total === 0)
      out.push({
        workflowId: r.workflow.workflow_id,
        text: `${name}: no sends this period (${formatInt(before.counts.sends_total)} sends (total) in the previous one).`,
      });
    const jump = stepsOfRows ? stepsJump(now, before, name) : undefined;
    if (jump) out.push({ workflowId: r.workflow.workflow_id, text: jump });
  }
  const jump =
    !stepsOfRows && whole?.before
      ? stepsJump(whole.now, whole.before, 'The workflows shown', 'their')
      : undefined;
  if (jump) out.push({ text: jump });
  return out;
}

/**
 * The service's alerts for the period (automation.statsTotals `alerts`: spam, bounce and unsubscribe
 * rates, drops against the previous period, a workflow whose sends stopped, with the list's thresholds)
 * first, then the page's own flags of the per-workflow table. A workflow the service already flagged as
 * stopped is not flagged twice.
 */
export function renderHealth(
  rows: readonly WorkflowRow[],
  alerts: readonly StatsAlert[] = [],
  whole?: { now: Totals; before?: Totals },
): void {
  const stopped = new Set(
    alerts.filter((a) => a.kind === 'workflow_stopped').map((a) => String(a.workflow_id)),
  );
  const flags = healthFlags(rows, whole).filter(
    (f) => !(stopped.has(String(f.workflowId)) && f.text.includes(': no sends this period')),
  );
  const box = $('wf-health');
  box.hidden = flags.length === 0 && alerts.length === 0;
  const item = (a: StatsAlert) =>
    el('li', a.message, {
      class: 'alert',
      'data-alert': a.kind,
      ...(a.workflow_id !== undefined ? { 'data-workflow': String(a.workflow_id) } : {}),
    });
  // Many stopped workflows (a list whose flows send every few days) would push the table off the
  // screen: the first few stay in view, the others fold under one line that counts them.
  const quiet = alerts.filter((a) => a.kind === 'workflow_stopped');
  const folded = quiet.length > MAX_STOPPED_SHOWN ? quiet.slice(MAX_STOPPED_SHOWN - 1) : [];
  const items: HTMLElement[] = alerts.filter((a) => !folded.includes(a)).map(item);
  if (folded.length > 0) {
    const more = el('details', undefined, { class: 'health-more' });
    more.append(
      el('summary', `${folded.length} more workflows sent nothing in the last ${folded[0]!.threshold} days`),
      el('ul', undefined),
    );
    more.querySelector('ul')!.append(...folded.map(item));
    const li = el('li', undefined, { class: 'alert' });
    li.append(more);
    items.push(li);
  }
  $('wf-health-list').replaceChildren(
    ...items,
    ...flags.map((f) =>
      el(
        'li',
        f.text,
        f.workflowId === undefined ? { 'data-flag': 'steps' } : { 'data-workflow': String(f.workflowId) },
      ),
    ),
  );
}

export function clearHealth(): void {
  $('wf-health').hidden = true;
  $('wf-health-list').replaceChildren();
}
