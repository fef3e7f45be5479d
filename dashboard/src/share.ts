import { callApi, ApiError, type ListEntry, type WorkflowEntry } from './api.js';
import { selectedWorkflowIds } from './controls.js';
import { $, el, messageOf, show } from './dom.js';
import { selectList } from './list.js';
import { state } from './state.js';
import type { WorkflowStatsRow } from './stats.js';
import { readView, viewHash } from './url-state.js';
import { currentView } from './view.js';

/**
 * Sharing (docs/dashboard.md "Sharing"): an owner creates a read-only link for the list shown (and the
 * workflows ticked) with `share.create`; whoever opens it sees that dashboard in that view and nothing
 * else, read from `/api/share/<token>/…` without a key.
 */

interface ShareCreated {
  url: string;
  id: string;
  expires_at: string;
}

/** The link as the service made it, with this view's choices after it (period, points, sorts, …). */
export function withView(url: string): string {
  const view = { ...currentView(), list: undefined, workflows: undefined, share: undefined };
  const extra = viewHash(view).slice(1);
  return extra ? `${url}&${extra}` : url;
}

export async function createShare(): Promise<void> {
  const session = state.session;
  const list = state.list;
  if (!session || !list || state.share) return;
  const days = Number($<HTMLInputElement>('share-days').value);
  show($('share-error'), undefined);
  $('share-result').hidden = true;
  if (!Number.isInteger(days) || days < 1 || days > 365) {
    show($('share-error'), 'Pick how many days the link works: a whole number from 1 to 365.');
    return;
  }
  const ids = selectedWorkflowIds();
  const button = $<HTMLButtonElement>('share-create');
  button.disabled = true;
  try {
    const made = await callApi<ShareCreated>(session, 'share.create', {
      list_id: Number(list.list_id),
      ...(ids.length ? { workflow_ids: ids } : {}),
      expires_days: days,
    });
    const url = new URL(withView(made.url), location.href).href;
    $<HTMLInputElement>('share-url').value = url;
    $('share-expires').textContent =
      `Works until ${made.expires_at.slice(0, 16).replace('T', ' ')} UTC${ids.length ? `, for the ${ids.length} workflow${ids.length === 1 ? '' : 's'} ticked` : ', for every workflow of the list'}.`;
    $('share-result').hidden = false;
  } catch (err) {
    show($('share-error'), messageOf(err));
  } finally {
    button.disabled = false;
  }
}

export function toggleSharePanel(): void {
  const panel = $('share-panel');
  panel.hidden = !panel.hidden;
  $('share-open').setAttribute('aria-expanded', String(!panel.hidden));
  if (!panel.hidden) $<HTMLInputElement>('share-days').focus();
}

/** A share link's workflows: named by the figures of the last year (no catalog through a link). */
async function shareWorkflows(list: ListEntry & { workflows?: WorkflowEntry[] }): Promise<WorkflowEntry[]> {
  if (Array.isArray(list.workflows)) return list.workflows;
  const rows = await callApi<WorkflowStatsRow[]>(state.session!, 'automation.statsByWorkflow', {
    list_id: Number(list.list_id),
    days: 365,
  });
  return rows
    .filter((r) => /^\d+$/.test(String(r.workflow_id)))
    .map((r) => ({ workflow_id: Number(r.workflow_id), name: r.workflow_name ?? '' }));
}

/** Opens a share link's dashboard: no sign-in, one list, no template preview, no sharing further. */
export async function openShare(token: string): Promise<void> {
  state.share = { token, workflows: undefined };
  state.session = { userId: '', apiKey: '', shareToken: token };
  document.body.classList.add('shared');
  $('signin').hidden = true;
  $('app').hidden = false;
  $('tpl-section').hidden = true;
  try {
    const answer = await callApi<ListEntry[] | ListEntry>(state.session, 'list.all');
    const lists = Array.isArray(answer) ? answer : [answer];
    if (lists.length === 0) throw new ApiError('This link shows no list.', 0, 200);
    state.lists = lists;
    state.share.workflows = await shareWorkflows(lists[0]!);
    const select = $<HTMLSelectElement>('list');
    select.replaceChildren(
      ...lists.map((l) => el('option', `${l.list_name || 'List'} (#${l.list_id})`, { value: l.list_id })),
    );
    select.disabled = true;
    await selectList(lists[0]!.list_id, readView());
  } catch (err) {
    $('app').hidden = true;
    $('signin').hidden = false;
    $('signin-h').textContent = 'This link does not open a dashboard';
    // The message stays, the sign-in form and its hint go: a link's reader has no key to type.
    const error = $('signin-error');
    $('signin-form').before(error);
    show(
      error,
      `${messageOf(err)}. The link may have expired or been revoked: ask whoever sent it for a new one.`,
    );
    $('signin-form').hidden = true;
    for (const hint of $('signin').querySelectorAll<HTMLElement>(':scope > .hint')) hint.hidden = true;
  }
}
