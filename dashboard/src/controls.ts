import { $ } from './dom.js';
import { resolvePreset, todayIn, type Preset } from './period.js';
import { state } from './state.js';

/** What the filter form asks for: the period, the workflows ticked, the trigger typed. */
export function currentPreset(): Preset {
  const v = $<HTMLSelectElement>('period').value;
  if (v.startsWith('days:')) return { kind: 'days', days: Number(v.slice(5)) };
  if (v === 'this-month' || v === 'last-month') return { kind: v };
  return {
    kind: 'custom',
    start: $<HTMLInputElement>('start').value,
    stop: $<HTMLInputElement>('stop').value,
  };
}

/** Shows the date inputs for a custom range, prefilled with the last 30 days so the range is never empty. */
export function showCustomInputs(): void {
  const custom = $<HTMLSelectElement>('period').value === 'custom';
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
}

export const selectedWorkflowIds = (): number[] =>
  [...$('workflow-list').querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((i) =>
    Number(i.value),
  );

export function triggerParam(): { trigger_id?: string } {
  const v = $<HTMLInputElement>('trigger').value.trim();
  // Sent as typed: a wrong value is the API's 406 to show.
  return v ? { trigger_id: v } : {};
}
