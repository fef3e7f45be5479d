import { callApi, type AccountEntry, type WorkflowEntry } from './api.js';
import { $, el, messageOf, show } from './dom.js';
import { reload, setState, setStatus } from './load.js';
import { state } from './state.js';
import { renderAccountChoices } from './templates.js';

/** The list chosen, and its workflows to tick. */
export async function selectList(listId: string): Promise<void> {
  const list = state.lists.find((l) => l.list_id === listId);
  if (!list || !state.session) return;
  state.list = list;
  $<HTMLSelectElement>('list').value = list.list_id;
  show(
    $('list-meta'),
    `${list.list_name} · list #${list.list_id} · time zone ${list.timezone} · currency ${list.currency}`,
  );
  const seq = ++state.seq;
  setStatus('Loading the list…', true);
  setState('loading');
  try {
    const [workflows, accounts] = await Promise.all([
      callApi<WorkflowEntry[]>(state.session, 'automation.workflows', { list_id: Number(list.list_id) }),
      callApi<AccountEntry[]>(state.session, 'transactional.templates', { list_id: Number(list.list_id) }),
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
    setStatus('', false);
    setState('error');
    show($('error'), messageOf(err));
    return;
  }
  await reload();
}

function renderWorkflowChoices(): void {
  const box = $('workflow-list');
  if (state.workflows.length === 0) {
    box.replaceChildren(el('span', 'No workflows in the catalog for this list.', { class: 'hint' }));
    return;
  }
  box.replaceChildren(
    ...state.workflows.map((w) => {
      const label = el('label', undefined, { class: 'check' });
      const input = el('input', undefined, { type: 'checkbox', value: String(w.workflow_id) });
      label.append(input, ` ${w.name || 'Workflow'} (#${w.workflow_id})`);
      return label;
    }),
  );
}
