import { ApiError, callApi, type ListEntry, type Session } from './api.js';
import { $, el, messageOf, show } from './dom.js';
import { selectList } from './list.js';
import { state } from './state.js';
import { readView } from './url-state.js';

/** Sign-in and sign-out: the key is kept in this tab's session storage only. */
const SESSION_KEY = 'mailstats.dashboard.session';

/**
 * The demo tenant's published key (ingest/demo-seed.ts; the page does not import server code). Refused,
 * it most likely means the demo is gone: the first record of an operator's own removes it.
 */
const DEMO_KEY = 'demo-key-0123456789abcdef';

function signInProblem(err: unknown, session: Session): string {
  const message = messageOf(err);
  return err instanceof ApiError && err.code === 101 && session.apiKey === DEMO_KEY
    ? `${message}. This is the demo tenant's published key: the demo is removed when the first record of your own arrives (docs/records.md, "The demo tenant"). Sign in with a user of your own (npm run admin -- user add --id N --generate-key).`
    : message;
}

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

/** `moveFocus`: after the user signed in with the form, the focus goes to the content (not on a restore). */
export async function signIn(session: Session, moveFocus = true): Promise<void> {
  const form = $('signin-form');
  const button = form.querySelector('button')!;
  // Busy while the service checks the key: the button says so and cannot be pressed twice.
  button.disabled = true;
  button.textContent = 'Signing in…';
  form.setAttribute('aria-busy', 'true');
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
    $('share-open').hidden = false;
    const select = $<HTMLSelectElement>('list');
    select.replaceChildren(
      ...lists.map((l) => el('option', `${l.list_name || 'List'} (#${l.list_id})`, { value: l.list_id })),
    );
    if (moveFocus) $('main').focus();
    const view = readView();
    const listId = lists.some((l) => l.list_id === view.list) ? view.list! : lists[0]!.list_id;
    await selectList(listId, view);
  } catch (err) {
    saveSession(undefined);
    show($('signin-error'), signInProblem(err, session));
  } finally {
    button.disabled = false;
    button.textContent = 'Sign in';
    form.removeAttribute('aria-busy');
  }
}

export function signOut(): void {
  saveSession(undefined);
  state.session = undefined;
  state.seq++;
  $('app').hidden = true;
  delete $('app').dataset.state;
  $('sign-out').hidden = true;
  $('share-open').hidden = true;
  $('share-panel').hidden = true;
  $('share-result').hidden = true;
  $('list-meta').hidden = true;
  $('signin').hidden = false;
  $<HTMLInputElement>('user-id').focus();
}
