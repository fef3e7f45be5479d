import './style.css';
import { followWidth } from './charts.js';
import { redrawMoney } from './daily-charts.js';
import { showCustomInputs, updateDateBounds } from './controls.js';
import { $ } from './dom.js';
import { exportDays, exportDaysSpreadsheet, exportWorkflows, exportWorkflowsSpreadsheet } from './export.js';
import { countTicked, filterWorkflowChoices, selectList, tickShown } from './list.js';
import { reload } from './load.js';
import { loadSession, signIn, signOut } from './session.js';
import { state } from './state.js';
import { readView } from './url-state.js';
import { saveView } from './view.js';
import { createShare, openShare, toggleSharePanel } from './share.js';
import { fitFrame, prefillParams, renderTemplate, renderTemplateChoices } from './templates.js';

/** Wiring: the page's controls to what they do, and the sign-in kept from earlier in this tab. */
$('signin-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const userId = $<HTMLInputElement>('user-id').value.trim();
  const apiKey = $<HTMLInputElement>('api-key').value;
  void signIn({ userId, apiKey });
});
$('sign-out').addEventListener('click', signOut);
$('filters').addEventListener('submit', (e) => e.preventDefault());
$('list').addEventListener('change', () => void selectList($<HTMLSelectElement>('list').value));
$('period').addEventListener('change', () => {
  showCustomInputs();
  void reload();
});
for (const id of ['start', 'stop']) {
  $(id).addEventListener('change', () => {
    updateDateBounds();
    void reload();
  });
}
$('trigger').addEventListener('change', () => void reload());
$('include-today').addEventListener('change', () => void reload());
$('compare').addEventListener('change', () => void reload());
$('chart-currency').addEventListener('change', () => {
  redrawMoney();
  saveView();
});
$('chart-group').addEventListener('change', () => {
  $('chart-group').dataset.chosen = 'true';
  redrawMoney();
  saveView();
});
$('wf-bars-measure').addEventListener('change', () => {
  redrawMoney();
  saveView();
});
// A table sorted: the address keeps it.
document.addEventListener('viewchange', saveView);
// On a phone the filters fold into one line; "Change" opens them.
$('filters-toggle').addEventListener('click', () => {
  const open = $('app').classList.toggle('filters-open');
  $('filters-toggle').setAttribute('aria-expanded', String(open));
  $('filters-toggle').textContent = open ? 'Done' : 'Change';
});
$('workflow-list').addEventListener('change', () => {
  countTicked();
  void reload();
});
$('workflow-search').addEventListener('input', filterWorkflowChoices);
// A search box inside the filter form: Enter must not submit anything.
$('workflow-search').addEventListener('keydown', (e) => {
  if (e.key === 'Enter') e.preventDefault();
});
$('workflows-all').addEventListener('click', () => {
  if (tickShown(true)) void reload();
});
$('workflows-none').addEventListener('click', () => {
  if (tickShown(false)) void reload();
});
$('export-days').addEventListener('click', exportDays);
$('export-workflows').addEventListener('click', exportWorkflows);
$('export-days-ro').addEventListener('click', exportDaysSpreadsheet);
$('export-workflows-ro').addEventListener('click', exportWorkflowsSpreadsheet);
$('tpl-account').addEventListener('change', renderTemplateChoices);
$('tpl-template').addEventListener('change', prefillParams);
if (typeof ResizeObserver !== 'undefined') new ResizeObserver(fitFrame).observe($('tpl-viewport'));
$('tpl-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void renderTemplate();
});
for (const id of ['chart-activity', 'chart-rates', 'chart-revenue', 'chart-aov']) followWidth($(id));

// A view link opened in a tab that is already signed in: the address changes, the page follows.
window.addEventListener('hashchange', () => {
  if (!state.session || state.share) return;
  const view = readView();
  const listId = state.lists.some((l) => l.list_id === view.list) ? view.list : state.list?.list_id;
  if (listId) void selectList(listId, view);
});

$('share-open').addEventListener('click', toggleSharePanel);
$('share-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void createShare();
});
$('share-copy').addEventListener('click', () => {
  const input = $<HTMLInputElement>('share-url');
  input.select();
  void navigator.clipboard?.writeText(input.value).catch(() => undefined);
});

const shared = readView().share;
const saved = loadSession();
if (shared) void openShare(shared);
else if (saved) {
  $<HTMLInputElement>('user-id').value = saved.userId;
  void signIn(saved, false);
}
