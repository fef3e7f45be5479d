import { callApi, type RenderAnswer, type TemplateVariables } from './api.js';
import { $, el, messageOf, show } from './dom.js';
import { state } from './state.js';
import { jsonProblem } from './json-problem.js';
import { hasSample, sampleFor } from './template-samples.js';

/** The width an email is laid out at: 600 px of content and its margins. */
const EMAIL_WIDTH = 640;
const FRAME_HEIGHT = 560;

/** The template preview: SMTP account and template choices, and transactional.templateRender. */
export function renderAccountChoices(): void {
  const select = $<HTMLSelectElement>('tpl-account');
  select.replaceChildren(
    ...state.accounts.map((a) => {
      const notes = [a.is_default ? 'default' : '', a.active ? '' : 'inactive'].filter(Boolean).join(', ');
      return el('option', `${a.account_id}${notes ? ` (${notes})` : ''}`, { value: a.account_id });
    }),
  );
  const preferred = state.accounts.find((a) => a.is_default) ?? state.accounts[0];
  if (preferred) select.value = preferred.account_id;
  renderTemplateChoices();
  const none = state.accounts.length === 0;
  $<HTMLButtonElement>('tpl-render').disabled = none;
  $('tpl-result').hidden = true;
  // Not an error: many lists send no transactional email. Said as a fact, the form put away.
  $('tpl-form').hidden = none;
  show($('tpl-error'), undefined);
  show($('tpl-warning'), undefined);
  show(
    $('tpl-note'),
    none ? 'This list has no SMTP account, so it has no transactional templates to preview.' : undefined,
  );
}

export function renderTemplateChoices(): void {
  const account = state.accounts.find((a) => a.account_id === $<HTMLSelectElement>('tpl-account').value);
  const templates = account?.templates ?? [];
  $<HTMLSelectElement>('tpl-template').replaceChildren(
    ...templates.map((t) => el('option', `${t.template_id} (${t.content_type})`, { value: t.template_id })),
  );
  prefillParams();
}

/** The chosen template's sample params in the box (see template-samples.ts for where they come from). */
export function prefillParams(): void {
  const id = $<HTMLSelectElement>('tpl-template').value;
  $<HTMLTextAreaElement>('tpl-params').value = sampleFor(id);
  $('tpl-params-hint').textContent = !id
    ? ''
    : hasSample(id)
      ? 'Sample params of this demo template: edit them freely.'
      : 'No sample known for this template (the API does not give its source): type the params it uses, as JSON.';
}

/** An email's preheader: the props' own, else the hidden first text of the HTML that inboxes show. */
function preheaderOf(html: string, props: Record<string, unknown> | null): string {
  if (typeof props?.preheader === 'string') return props.preheader;
  // DOMParser documents are inert: no script runs and nothing is fetched.
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const hidden = [...doc.body.querySelectorAll<HTMLElement>('[style]')].find((e) =>
    /display\s*:\s*none/i.test(e.getAttribute('style') ?? ''),
  );
  return hidden?.textContent?.trim() ?? '';
}

/**
 * A warning naming the fields the template reads that the params do not give (they render empty), or
 * undefined when the params give them all. Fields of `{{#each}}` items are not listed by the API.
 */
export function missingWarning(variables: string[] | undefined, paramsText: string): string | undefined {
  if (!variables) return undefined;
  const params: unknown = paramsText.trim() === '' ? {} : JSON.parse(paramsText);
  const missing = variables.filter((path) => valueAt(params, path.split('.')) === undefined);
  if (missing.length === 0) return undefined;
  return (
    `The template uses ${missing.length === 1 ? 'a field' : `${missing.length} fields`} that the params ` +
    `do not give, shown empty: ${missing.join(', ')}.`
  );
}

/** The value at `path` in `value` (own properties only), or undefined when any step is absent. */
function valueAt(value: unknown, path: string[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at === null ? undefined : at;
}

/** Scales the frame down when its box is narrower than an email (phones); full size otherwise. */
export function fitFrame(): void {
  const viewport = $('tpl-viewport');
  // Hidden (no result yet): nothing to fit.
  if (viewport.clientWidth === 0) return;
  const frame = $<HTMLIFrameElement>('tpl-frame');
  const scale = Math.min(1, viewport.clientWidth / EMAIL_WIDTH);
  frame.style.width = scale < 1 ? `${EMAIL_WIDTH}px` : '100%';
  frame.style.transform = scale < 1 ? `scale(${scale})` : '';
  viewport.style.height = `${Math.ceil(FRAME_HEIGHT * scale) + 2}px`;
  frame.dataset.scale = String(scale);
}

export async function renderTemplate(): Promise<void> {
  if (!state.session || !state.list) return;
  const button = $<HTMLButtonElement>('tpl-render');
  // Bad JSON is caught here, where the line and column can be named (the API says only "not valid JSON").
  const problem = jsonProblem($<HTMLTextAreaElement>('tpl-params').value);
  if (problem) {
    $('tpl-result').hidden = true;
    show($('tpl-warning'), undefined);
    show($('tpl-error'), `The params are not valid JSON: ${problem}`);
    return;
  }
  button.disabled = true;
  button.textContent = 'Rendering…';
  show($('tpl-error'), undefined);
  show($('tpl-warning'), undefined);
  const paramsText = $<HTMLTextAreaElement>('tpl-params').value;
  const which = {
    list_id: Number(state.list.list_id),
    account_id: $<HTMLSelectElement>('tpl-account').value || undefined,
    template_id: $<HTMLSelectElement>('tpl-template').value || undefined,
  };
  // The fields the template reads, asked beside the render; its failure only leaves the warning out
  // (a template that does not parse fails the render too, which says why).
  const variables = callApi<TemplateVariables>(state.session, 'transactional.templateVariables', which).catch(
    () => undefined,
  );
  try {
    // params go as the text typed (JSON, checked above): the API names what else is wrong (406).
    const answer = await callApi<RenderAnswer>(state.session, 'transactional.templateRender', {
      ...which,
      params: paramsText,
    });
    show($('tpl-warning'), missingWarning((await variables)?.variables, paramsText));
    $('tpl-props').textContent = JSON.stringify(answer.props, null, 2);
    const props = answer.props ?? {};
    const text = (k: string) => (typeof props[k] === 'string' ? (props[k] as string) : '');
    $('tpl-from').textContent = text('from_name') || text('from') || '(no sender in the props)';
    $('tpl-subject').textContent = text('subject') || '(no subject in the props)';
    $('tpl-preheader').textContent =
      answer.type === 'html' ? preheaderOf(answer.content, answer.props) : answer.content.slice(0, 120);
    $('tpl-type').textContent = `(${answer.type}, ${answer.engine})`;
    const frame = $<HTMLIFrameElement>('tpl-frame');
    const plain = $('tpl-text');
    // Shown before the frame gets its document, so that it lays the email out at its real width.
    $('tpl-result').hidden = false;
    if (answer.type === 'html') {
      // A fresh frame per render: a document laid out while the preview was hidden (another list, a
      // sign-out) is not reused with no layout; the sandbox and policy stay those of the element.
      const fresh = frame.cloneNode(false) as HTMLIFrameElement;
      fresh.srcdoc = answer.content;
      frame.replaceWith(fresh);
      $('tpl-viewport').hidden = false;
      plain.hidden = true;
      fitFrame();
    } else {
      plain.textContent = answer.content;
      plain.hidden = false;
      $('tpl-viewport').hidden = true;
      frame.srcdoc = '';
    }
  } catch (err) {
    $('tpl-result').hidden = true;
    show($('tpl-warning'), undefined);
    show($('tpl-error'), messageOf(err));
  } finally {
    button.disabled = false;
    button.textContent = 'Render';
  }
}
