import { callApi, type RenderAnswer } from './api.js';
import { $, el, messageOf, show } from './dom.js';
import { state } from './state.js';

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
  $<HTMLButtonElement>('tpl-render').disabled = state.accounts.length === 0;
  $('tpl-result').hidden = true;
  show($('tpl-error'), state.accounts.length === 0 ? 'This list has no SMTP account.' : undefined);
}

export function renderTemplateChoices(): void {
  const account = state.accounts.find((a) => a.account_id === $<HTMLSelectElement>('tpl-account').value);
  const templates = account?.templates ?? [];
  $<HTMLSelectElement>('tpl-template').replaceChildren(
    ...templates.map((t) => el('option', `${t.template_id} (${t.content_type})`, { value: t.template_id })),
  );
}

export async function renderTemplate(): Promise<void> {
  if (!state.session || !state.list) return;
  const button = $<HTMLButtonElement>('tpl-render');
  button.disabled = true;
  button.textContent = 'Rendering…';
  show($('tpl-error'), undefined);
  try {
    // params go as the text typed: the API parses it and names what is wrong (406).
    const answer = await callApi<RenderAnswer>(state.session, 'transactional.templateRender', {
      list_id: Number(state.list.list_id),
      account_id: $<HTMLSelectElement>('tpl-account').value || undefined,
      template_id: $<HTMLSelectElement>('tpl-template').value || undefined,
      params: $<HTMLTextAreaElement>('tpl-params').value,
    });
    $('tpl-props').textContent = JSON.stringify(answer.props, null, 2);
    $('tpl-type').textContent = `(${answer.type}, ${answer.engine})`;
    const frame = $<HTMLIFrameElement>('tpl-frame');
    const text = $('tpl-text');
    // Shown before the frame gets its document, so that it lays the email out at its real width.
    $('tpl-result').hidden = false;
    if (answer.type === 'html') {
      frame.srcdoc = answer.content;
      frame.hidden = false;
      text.hidden = true;
    } else {
      text.textContent = answer.content;
      text.hidden = false;
      frame.hidden = true;
      frame.srcdoc = '';
    }
  } catch (err) {
    $('tpl-result').hidden = true;
    show($('tpl-error'), messageOf(err));
  } finally {
    button.disabled = false;
    button.textContent = 'Render';
  }
}
