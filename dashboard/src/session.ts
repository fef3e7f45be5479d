import { ApiError, callApi, type ListEntry, type Session } from './api.js';
import { $, el, messageOf, show } from './dom.js';
import { selectList } from './list.js';
import { state } from './state.js';

/** Sign-in and sign-out: the key is kept in this tab's session storage only. */
const SESSION_KEY = 'mailstats.dashboard.session';

function saveSession(s: Session | undefined): void {
  if (s) sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(SESSION_KEY);
}

export function loadSession(): Session | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Session | null;
    return s && typeof s.userId === 'string' && typeof s.apiKey === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

export async function signIn(session: Session): Promise<void> {
  const button = $<HTMLButtonElement>('signin-form').querySelector('button')!;
  button.disabled = true;
  show($('signin-error'), undefined);
  try {
    const lists = await callApi<ListEntry[]>(session, 'list.all');
    if (lists.length === 0) throw new ApiError('This user may read no list.', 0, 200);
    state.session = session;
    state.lists = lists;
    saveSession(session);
    $<HTMLInputElement>('api-key').value = '';
    $('signin').hidden = true;
    $('app').hidden = false;
    $('sign-out').hidden = false;
    const select = $<HTMLSelectElement>('list');
    select.replaceChildren(
      ...lists.map((l) => el('option', `${l.list_name || 'List'} (#${l.list_id})`, { value: l.list_id })),
    );
    await selectList(lists[0]!.list_id);
  } catch (err) {
    saveSession(undefined);
    show($('signin-error'), messageOf(err));
  } finally {
    button.disabled = false;
  }
}

export function signOut(): void {
  saveSession(undefined);
  state.session = undefined;
  state.seq++;
  $('app').hidden = true;
  $('sign-out').hidden = true;
  $('list-meta').hidden = true;
  $('signin').hidden = false;
  $<HTMLInputElement>('user-id').focus();
}
