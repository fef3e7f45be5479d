import { clearChart } from './charts.js';
import { $, show } from './dom.js';
import { formatInt } from './format.js';
import { clearWorkflowBars } from './daily-charts.js';
import { clearHealth } from './health.js';
import { clearRates } from './rates-table.js';
import { clearBreakdown } from './workflow-table.js';

/**
 * What the results area shows: figures for the period named above them, never figures of another one.
 * While a period loads the old figures are marked stale (faded, with "Loading …"); after an error or
 * for a period without activity they are removed, not left at full strength under the message.
 */
const CHARTS = ['chart-activity', 'chart-rates', 'chart-revenue', 'chart-aov'];

/** `loading` → `loaded` (everything shown, per-workflow table included) or `error`: for people and tests. */
export const setState = (s: 'loading' | 'loaded' | 'error') => ($('app').dataset.state = s);

export function setStatus(text: string, busy: boolean): void {
  $('status').textContent = text;
  $('app').setAttribute('aria-busy', String(busy));
}

export function markLoading(periodLine: string): void {
  show($('error'), undefined);
  $('period-text').textContent = `Loading ${periodLine} …`;
  const results = $('results');
  results.dataset.stale = 'true';
  results.setAttribute('aria-busy', 'true');
  setStatus('Loading…', true);
  setState('loading');
}

function clearFigures(): void {
  $('kpis').replaceChildren();
  for (const id of CHARTS) clearChart($(id));
  $('days').replaceChildren();
  clearBreakdown();
  clearRates();
  clearHealth();
  clearWorkflowBars();
  $('wf-status').textContent = '';
}

export function showFigures(periodLine: string): void {
  $('period-text').textContent = periodLine;
  const results = $('results');
  results.hidden = false;
  delete results.dataset.stale;
  results.removeAttribute('aria-busy');
  $('empty').hidden = true;
}

/**
 * A period without activity: said once, instead of a wall of zeros. With filters set it says what they
 * did (`filters`: in words; `unfilteredDays`: the days with activity in the period without them); the
 * advice on how records arrive is for whoever runs the service, folded away, and only when the list
 * itself has nothing.
 */
export function showEmpty(
  periodLine: string,
  range: string,
  filters: string | undefined,
  unfilteredDays: number,
): void {
  clearFigures();
  $('period-text').textContent = periodLine;
  $('results').hidden = true;
  $('empty').hidden = false;
  const filteredOut = filters !== undefined && unfilteredDays > 0;
  $('empty-h').textContent = filteredOut ? 'No activity matches the filters' : 'No activity in this period';
  $('empty-text').textContent = filteredOut
    ? `From ${range} this list has activity on ${formatInt(unfilteredDays)} day${unfilteredDays === 1 ? '' : 's'}, but ${filters} leaves none of it. Untick workflows or clear the trigger to see it.`
    : filters
      ? `Nothing was recorded for this list from ${range}, with or without ${filters}.`
      : `Nothing was recorded for this list from ${range}.`;
  $('empty-operator').hidden = filteredOut;
  // The section above says it; the status line stays quiet so the page says it once.
  setStatus('', false);
  setState('loaded');
}

export function showFailure(message: string, periodLine: string | undefined): void {
  clearFigures();
  const results = $('results');
  results.hidden = true;
  delete results.dataset.stale;
  results.removeAttribute('aria-busy');
  $('empty').hidden = true;
  $('period-text').textContent = periodLine ? `No figures for ${periodLine}: see the message above.` : '';
  show($('error'), message);
  setStatus('', false);
  setState('error');
}
