import { callApi, type AccountEntry, type WorkflowEntry } from './api.js';
import { showCustomInputs } from './controls.js';
import { $, el } from './dom.js';
import { reload } from './load.js';
import { setState, setStatus, showFailure } from './results.js';
import { messageOf } from './dom.js';
import { state } from './state.js';
import { renderAccountChoices } from './templates.js';
import type { View } from './url-state.js';
import { setRankText } from './rates-table.js';
import { setSortText } from './workflow-table.js';

/** The list chosen, and its workflows to tick; a view from the page's address applied on top. */
/** `view`: the filters to apply after a sign-in (from the page's address); a list change keeps them. */
export async function selectList(listId: string, view?: View): Promise<void> {
  const list = state.lists.find((l) => l.list_id === listId);
  if (!list || !state.session) return;
  state.list = list;
  $<HTMLSelectElement>('list').value = list.list_id;
  const meta = $('list-meta');
  // Short on a phone (the words in .long are left out there): "Demo Shop · #1 · Europe/Bucharest · RON".
  meta.replaceChildren(
    state.share ? 'Shared, read-only · ' : '',
    `${list.list_name} · `,
    el('span', 'list ', { class: 'long' }),
    `#${list.list_id} · `,
    el('span', 'time zone ', { class: 'long' }),
    `${list.timezone} · `,
    el('span', 'currency ', { class: 'long' }),
    list.currency,
  );
  meta.hidden = false;
  const seq = ++state.seq;
  setStatus('Loading the list…', true);
  setState('loading');
  try {
    // A share link has no catalog: its workflows come with it (share.ts).
    const [workflows, accounts] = state.share
      ? [state.share.workflows ?? [], []]
      : await Promise.all([
          callApi<WorkflowEntry[]>(state.session, 'automation.workflows', { list_id: Number(list.list_id) }),
          callApi<AccountEntry[]>(state.session, 'transactional.templates', {
            list_id: Number(list.list_id),
          }),
        ]);
    if (seq !== state.seq) return;
    state.workflows = workflows;
    state.accounts = accounts;
    renderWorkflowChoices();
    renderAccountChoices();
  } catch (err) {
    if (seq !== state.seq) return;
    state.workflows = [];
    state.accounts = [];
    renderWorkflowChoices();
    renderAccountChoices();
    showFailure(messageOf(err), undefined);
    return;
  }
  if (view) applyView(view);
  await reload();
}

/**
 * Puts a shared or bookmarked view into the filters, the defaults for what it does not say; what does
 * not fit this list (a workflow of another list, an unknown period) is left out.
 */
function applyView(v: View): void {
  const period = $<HTMLSelectElement>('period');
  period.value = v.period && [...period.options].some((o) => o.value === v.period) ? v.period : 'days:30';
  $<HTMLInputElement>('include-today').checked = v.today === true;
  $<HTMLSelectElement>('compare').value = v.compare === 'year' ? 'year' : 'previous';
  $<HTMLSelectElement>('wf-bars-measure').value =
    v.bars === 'revenue' || v.bars === 'purchases' ? v.bars : 'sends';
  state.pending = { points: v.points, money: v.money };
  setSortText(v.sort);
  setRankText(v.rank);
  $<HTMLInputElement>('start').value = v.period === 'custom' ? (v.from ?? '') : '';
  $<HTMLInputElement>('stop').value = v.period === 'custom' ? (v.to ?? '') : '';
  showCustomInputs();
  $<HTMLInputElement>('trigger').value = v.trigger ?? '';
  for (const id of v.workflows ?? []) {
    const box = $('workflow-list').querySelector<HTMLInputElement>(`input[value="${id}"]`);
    if (box) box.checked = true;
  }
  countTicked();
}

const workflowName = (w: WorkflowEntry) => `${w.name || 'Workflow'} (#${w.workflow_id})`;

function renderWorkflowChoices(): void {
  const box = $('workflow-list');
  $<HTMLInputElement>('workflow-search').value = '';
  if (state.workflows.length === 0) {
    box.replaceChildren(el('span', 'No workflows in the catalog for this list.', { class: 'hint' }));
    countTicked();
    return;
  }
  // By name, as people look for them (ids in brackets for the ones named alike).
  const sorted = [...state.workflows].sort((a, b) =>
    workflowName(a).localeCompare(workflowName(b), 'ro', { numeric: true }),
  );
  box.replaceChildren(
    ...sorted.map((w) => {
      const label = el('label', undefined, { class: 'check', 'data-name': workflowName(w).toLowerCase() });
      const input = el('input', undefined, { type: 'checkbox', value: String(w.workflow_id) });
      label.append(input, ` ${workflowName(w)}`);
      return label;
    }),
  );
  countTicked();
}

/** "3 of 50 ticked", or how many the search shows. */
export function countTicked(): void {
  const boxes = [...$('workflow-list').querySelectorAll<HTMLInputElement>('input[type=checkbox]')];
  const ticked = boxes.filter((b) => b.checked).length;
  const shown = boxes.filter((b) => !b.closest('label')!.hidden).length;
  $('workflow-count').textContent = boxes.length
    ? `${ticked ? `${ticked} of ${boxes.length} ticked` : `all ${boxes.length} (none ticked)`}${
        shown < boxes.length ? ` · ${shown} match the search` : ''
      }`
    : '';
}

/** Shows only the workflows whose name or id holds the text typed. */
export function filterWorkflowChoices(): void {
  const q = $<HTMLInputElement>('workflow-search').value.trim().toLowerCase();
  for (const label of $('workflow-list').querySelectorAll<HTMLElement>('label.check'))
    label.hidden = q !== '' && !(label.dataset.name ?? '').includes(q);
  countTicked();
}

/** Ticks (or unticks) the workflows the search shows; true when a box changed. */
export function tickShown(checked: boolean): boolean {
  let changed = false;
  for (const label of $('workflow-list').querySelectorAll<HTMLElement>('label.check')) {
    const box = label.querySelector('input')!;
    if ((checked && label.hidden) || box.checked === checked) continue;
    box.checked = checked;
    changed = true;
  }
  countTicked();
  return changed;
}
