import { barMeasure } from './daily-charts.js';
import { currenciesOf } from './currency.js';
import { currentPreset, periodOptions, selectedWorkflowIds, triggerText } from './controls.js';
import { $ } from './dom.js';
import { rankText } from './rates-table.js';
import { state } from './state.js';
import { writeView, type View } from './url-state.js';
import { sortText } from './workflow-table.js';

/**
 * Every choice of the view, read from the page: what the address keeps (docs/dashboard.md "Shareable
 * views") so that a bookmarked or shared link shows the same view.
 */
export function currentView(): View {
  const preset = currentPreset();
  const opts = periodOptions();
  const group = $<HTMLSelectElement>('chart-group');
  const money = $<HTMLSelectElement>('chart-currency').value;
  const main = state.list ? currenciesOf(state.list.currency).main : undefined;
  const bars = barMeasure();
  return {
    share: state.share?.token,
    list: state.share ? undefined : state.list?.list_id,
    period: $<HTMLSelectElement>('period').value,
    from: preset.kind === 'custom' ? preset.start : undefined,
    to: preset.kind === 'custom' ? preset.stop : undefined,
    today: opts.includeToday,
    compare: opts.compare,
    workflows: selectedWorkflowIds(),
    trigger: triggerText(),
    points: state.pending.points ?? (group.dataset.chosen ? group.value : undefined),
    money: state.pending.money ?? (money && money !== main ? money : undefined),
    sort: sortText(),
    rank: rankText(),
    bars: bars === 'sends' ? undefined : bars,
  };
}

/** The view into the address, and the one-line summary of the filters (what a phone shows of them). */
export function saveView(): void {
  writeView(currentView());
  renderSummary();
}

export function renderSummary(): void {
  const period = $<HTMLSelectElement>('period');
  const preset = currentPreset();
  const opts = periodOptions();
  const label = period.selectedOptions[0]?.textContent ?? '';
  const when =
    preset.kind === 'custom'
      ? `${preset.start} – ${preset.stop}`
      : `${label}${opts.includeToday ? ', with today' : ''}`;
  const ids = selectedWorkflowIds();
  const which = ids.length ? `${ids.length} workflow${ids.length === 1 ? '' : 's'}` : 'all workflows';
  const trigger = triggerText() ? ` · trigger ${triggerText()}` : '';
  const vs = opts.compare === 'year' ? ' · vs last year' : '';
  // The list is named in the header above.
  $('filters-summary-text').textContent = `${when} · ${which}${trigger}${vs}`;
}
