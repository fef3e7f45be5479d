import { $ } from './dom.js';
import { isDate, resolvePreset, todayIn, type PeriodOptions, type Preset } from './period.js';
import { state } from './state.js';

/** What the filter form asks for: the period, the workflows ticked, the trigger typed. */
export function currentPreset(): Preset {
  const v = $<HTMLSelectElement>('period').value;
  if (v.startsWith('days:')) return { kind: 'days', days: Number(v.slice(5)) };
  if (
    v === 'today' ||
    v === 'this-month' ||
    v === 'last-month' ||
    v === 'last-12-months' ||
    v === 'year-to-date'
  )
    return { kind: v };
  return {
    kind: 'custom',
    start: $<HTMLInputElement>('start').value,
    stop: $<HTMLInputElement>('stop').value,
  };
}

/** Periods that run up to now, which end yesterday unless "Include today" is ticked. */
const ROLLING = /^(days:\d+|this-month|year-to-date)$/;

/** "Include today" and the comparison picked. */
export function periodOptions(): PeriodOptions {
  const rolling = ROLLING.test($<HTMLSelectElement>('period').value);
  return {
    includeToday: rolling && $<HTMLInputElement>('include-today').checked,
    compare: $<HTMLSelectElement>('compare').value === 'year' ? 'year' : 'previous',
  };
}

/**
 * Shows the date inputs for a custom range, prefilled with the last 30 days so the range is never empty,
 * and "Include today" for the periods that run up to now.
 */
export function showCustomInputs(): void {
  const period = $<HTMLSelectElement>('period').value;
  const custom = period === 'custom';
  $('include-today-label').hidden = !ROLLING.test(period);
  for (const l of document.querySelectorAll<HTMLElement>('.filters .custom')) l.hidden = !custom;
  if (custom && state.list) {
    const start = $<HTMLInputElement>('start');
    const stop = $<HTMLInputElement>('stop');
    if (!start.value || !stop.value) {
      const p = resolvePreset({ kind: 'days', days: 30 }, todayIn(state.list.timezone));
      start.value = p.from;
      stop.value = p.to;
    }
  }
  updateDateBounds();
}

/** The date pickers offer only a range that can be asked for: the end not before the start. */
export function updateDateBounds(): void {
  const start = $<HTMLInputElement>('start');
  const stop = $<HTMLInputElement>('stop');
  const today = state.list ? todayIn(state.list.timezone) : '';
  start.max = isDate(stop.value) && (!today || stop.value < today) ? stop.value : today;
  stop.min = isDate(start.value) ? start.value : '';
  stop.max = today;
}

export const selectedWorkflowIds = (): number[] =>
  [...$('workflow-list').querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((i) =>
    Number(i.value),
  );

export const triggerText = (): string => $<HTMLInputElement>('trigger').value.trim();

export function triggerParam(): { trigger_id?: number } {
  const v = triggerText();
  return v ? { trigger_id: Number(v) } : {};
}

/**
 * What is wrong with the filters, caught before the API is called (a message naming it), or undefined.
 * The API checks the same (its 406 names the param); the page says it in the user's terms first.
 */
export function filterProblem(preset: Preset): string | undefined {
  if (preset.kind === 'custom') {
    if (!isDate(preset.start)) return 'Pick a start date for the custom range.';
    if (!isDate(preset.stop)) return 'Pick an end date for the custom range.';
    if (preset.stop < preset.start)
      return `The end date ${preset.stop} is before the start date ${preset.start}: pick an end on or after the start.`;
  }
  const t = triggerText();
  if (t && !(/^\d{1,15}$/.test(t) && Number(t) > 0))
    return `Trigger id “${t}” is not a trigger id: type a whole number above 0, or leave it empty for any trigger.`;
  return undefined;
}
