import './style.css';
import {
  ApiError,
  callApi,
  type AccountEntry,
  type ListEntry,
  type RenderAnswer,
  type Session,
  type WorkflowEntry,
} from './api.js';
import { drawChart, followWidth } from './charts.js';
import { toCsv, type Cell } from './csv.js';
import { format1, format2, formatCents, formatInt } from './format.js';
import { isComparable, resolvePreset, todayIn, type Preset, type ResolvedPeriod } from './period.js';
import { DAY_COLUMNS, type StatsRecord } from './stats.js';
import { changeOf, pointsChange, totalsOf, type Change, type Totals } from './totals.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const SESSION_KEY = 'mailstats.dashboard.session';
/** automation.stats takes at most 1,000 workflow ids. */
const MAX_WORKFLOW_IDS = 1000;
/** Per-workflow stats calls in flight at once. */
const CONCURRENCY = 4;

interface State {
  session: Session | undefined;
  lists: ListEntry[];
  list: ListEntry | undefined;
  workflows: WorkflowEntry[];
  accounts: AccountEntry[];
  /** The records shown, for the CSV exports. */
  days: StatsRecord[];
  breakdown: { workflow: WorkflowEntry; totals: Totals }[];
  /** Bumped on every reload: answers of an older reload are dropped. */
  seq: number;
}

const state: State = {
  session: undefined,
  lists: [],
  list: undefined,
  workflows: [],
  accounts: [],
  days: [],
  breakdown: [],
  seq: 0,
};

function show(el: HTMLElement, text: string | undefined): void {
  el.textContent = text ?? '';
  el.hidden = !text;
}

const messageOf = (err: unknown): string =>
  err instanceof ApiError
    ? err.code > 0
      ? `${err.message} (code ${err.code})`
      : err.message
    : `Unexpected error: ${String(err)}`;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  attrs: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// ---------------------------------------------------------------- sign in / out

function saveSession(s: Session | undefined): void {
  if (s) sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(SESSION_KEY);
}

function loadSession(): Session | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Session | null;
    return s && typeof s.userId === 'string' && typeof s.apiKey === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

async function signIn(session: Session): Promise<void> {
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

function signOut(): void {
  saveSession(undefined);
  state.session = undefined;
  state.seq++;
  $('app').hidden = true;
  $('sign-out').hidden = true;
  $('list-meta').hidden = true;
  $('signin').hidden = false;
  $<HTMLInputElement>('user-id').focus();
}

// ---------------------------------------------------------------- list, workflows, templates

async function selectList(listId: string): Promise<void> {
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

const selectedWorkflowIds = (): number[] =>
  [...$('workflow-list').querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((i) =>
    Number(i.value),
  );

function renderAccountChoices(): void {
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

function renderTemplateChoices(): void {
  const account = state.accounts.find((a) => a.account_id === $<HTMLSelectElement>('tpl-account').value);
  const templates = account?.templates ?? [];
  $<HTMLSelectElement>('tpl-template').replaceChildren(
    ...templates.map((t) => el('option', `${t.template_id} (${t.content_type})`, { value: t.template_id })),
  );
}

// ---------------------------------------------------------------- period

function currentPreset(): Preset {
  const v = $<HTMLSelectElement>('period').value;
  if (v.startsWith('days:')) return { kind: 'days', days: Number(v.slice(5)) };
  if (v === 'this-month' || v === 'last-month') return { kind: v };
  return {
    kind: 'custom',
    start: $<HTMLInputElement>('start').value,
    stop: $<HTMLInputElement>('stop').value,
  };
}

function onPeriodChange(): void {
  const custom = $<HTMLSelectElement>('period').value === 'custom';
  for (const l of document.querySelectorAll<HTMLElement>('.filters .custom')) l.hidden = !custom;
  if (custom && state.list) {
    // Start from the period shown so far, so the range is never empty.
    const start = $<HTMLInputElement>('start');
    const stop = $<HTMLInputElement>('stop');
    if (!start.value || !stop.value) {
      const p = resolvePreset({ kind: 'days', days: 30 }, todayIn(state.list.timezone));
      start.value = p.from;
      stop.value = p.to;
    }
  }
  void reload();
}

// ---------------------------------------------------------------- loading

function setStatus(text: string, busy: boolean): void {
  $('status').textContent = text;
  $('app').setAttribute('aria-busy', String(busy));
}

/** `loading` → `loaded` (everything shown, per-workflow table included) or `error`: for people and tests. */
const setState = (s: 'loading' | 'loaded' | 'error') => ($('app').dataset.state = s);

function triggerParam(): { trigger_id?: string } {
  const v = $<HTMLInputElement>('trigger').value.trim();
  // Sent as typed: a wrong value is the API's 406 to show.
  return v ? { trigger_id: v } : {};
}

async function reload(): Promise<void> {
  const session = state.session;
  const list = state.list;
  if (!session || !list) return;
  const seq = ++state.seq;
  const period = resolvePreset(currentPreset(), todayIn(list.timezone));
  const ids = selectedWorkflowIds();
  show($('error'), undefined);
  if (ids.length > MAX_WORKFLOW_IDS) {
    setState('error');
    show($('error'), `Pick at most ${MAX_WORKFLOW_IDS} workflows (the API's limit), or none for all.`);
    return;
  }
  const common = {
    list_id: Number(list.list_id),
    ...(ids.length > 0 ? { workflow_ids: ids } : {}),
    ...triggerParam(),
  };
  setStatus('Loading…', true);
  setState('loading');
  $<HTMLButtonElement>('export-days').disabled = true;
  $<HTMLButtonElement>('export-workflows').disabled = true;
  const comparable = isComparable(period);
  try {
    const [current, previous] = await Promise.all([
      callApi<StatsRecord[]>(session, 'automation.stats', { ...common, ...period.params }),
      comparable
        ? callApi<StatsRecord[]>(session, 'automation.stats', { ...common, ...period.previous.params })
        : Promise.resolve(undefined),
    ]);
    if (seq !== state.seq) return;
    state.days = current;
    renderPeriodText(period, comparable);
    renderTotals(totalsOf(current), previous && totalsOf(previous));
    renderCharts(current);
    renderDays(current);
    $<HTMLButtonElement>('export-days').disabled = false;
    setStatus(`Loaded ${current.length} day${current.length === 1 ? '' : 's'} with activity.`, false);
  } catch (err) {
    if (seq !== state.seq) return;
    setStatus('', false);
    setState('error');
    show($('error'), messageOf(err));
    return;
  }
  await loadBreakdown(seq, session, period, common);
}

/** One stats call per workflow (the ticked ones, or all of the list's), a few at a time. */
async function loadBreakdown(
  seq: number,
  session: Session,
  period: ResolvedPeriod,
  common: { list_id: number; trigger_id?: string },
): Promise<void> {
  const ids = new Set(selectedWorkflowIds());
  const workflows = ids.size > 0 ? state.workflows.filter((w) => ids.has(w.workflow_id)) : state.workflows;
  const rows: State['breakdown'] = new Array(workflows.length);
  const status = $('wf-status');
  let done = 0;
  let failed: unknown;
  status.textContent = workflows.length ? `Loading ${workflows.length} workflows…` : 'No workflows to show.';
  $('wf').replaceChildren();
  let next = 0;
  const worker = async () => {
    while (next < workflows.length && seq === state.seq && failed === undefined) {
      const i = next++;
      const w = workflows[i]!;
      try {
        const records = await callApi<StatsRecord[]>(session, 'automation.stats', {
          list_id: common.list_id,
          workflow_ids: [w.workflow_id],
          ...(common.trigger_id ? { trigger_id: common.trigger_id } : {}),
          ...period.params,
        });
        rows[i] = { workflow: w, totals: totalsOf(records) };
        done++;
        if (seq === state.seq) status.textContent = `Loading workflows… ${done}/${workflows.length}`;
      } catch (err) {
        failed = err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, workflows.length) }, worker));
  if (seq !== state.seq) return;
  if (failed !== undefined) {
    status.textContent = `Per-workflow figures failed: ${messageOf(failed)}`;
    setState('error');
    return;
  }
  state.breakdown = rows;
  renderBreakdown(rows);
  status.textContent = workflows.length ? `${workflows.length} workflows.` : 'No workflows to show.';
  $<HTMLButtonElement>('export-workflows').disabled = workflows.length === 0;
  setState('loaded');
}

// ---------------------------------------------------------------- rendering

function renderPeriodText(p: ResolvedPeriod, comparable: boolean): void {
  $('period-text').textContent = comparable
    ? `${p.from} – ${p.to}, compared with ${p.previous.from} – ${p.previous.to} (${state.list!.timezone})`
    : `${p.from} – ${p.to} (${state.list!.timezone})`;
}

/** Fewer is better for bounces and unsubscribes: their arrows keep their direction, their colours swap. */
function changeText(c: Change | undefined, fewerIsBetter = false): { text: string; cls: string } {
  const good = (up: boolean) => (up !== fewerIsBetter ? 'up' : 'down');
  if (!c) return { text: 'no comparison', cls: 'same' };
  switch (c.kind) {
    case 'same':
      return { text: 'no change', cls: 'same' };
    case 'new':
      return { text: 'new (none before)', cls: good(true) };
    case 'percent':
      return {
        text: `${c.value > 0 ? '▲ +' : '▼ −'}${format1(Math.abs(c.value))} %`,
        cls: good(c.value > 0),
      };
    case 'points':
      return {
        text: `${c.value > 0 ? '▲ +' : '▼ −'}${format2(Math.abs(c.value))} pp`,
        cls: good(c.value > 0),
      };
  }
}

function renderTotals(t: Totals, prev: Totals | undefined): void {
  const currency = state.list!.currency;
  const money: [string, number, number | undefined][] = [
    ['Revenue RON', t.revenueRonCents, prev?.revenueRonCents],
    ['Revenue EUR', t.revenueEurCents, prev?.revenueEurCents],
    ['AOV RON', t.aovRonCents, prev?.aovRonCents],
    ['AOV EUR', t.aovEurCents, prev?.aovEurCents],
  ];
  // The list's display currency first.
  if (currency === 'EUR') money.sort((a, b) => Number(b[0].endsWith('EUR')) - Number(a[0].endsWith('EUR')));
  const cards: { key: string; label: string; value: string; change: Change | undefined }[] = [
    {
      key: 'sends',
      label: 'Sends',
      value: formatInt(t.counts.sends_total),
      change: prev && changeOf(t.counts.sends_total, prev.counts.sends_total),
    },
    {
      key: 'open-rate',
      label: 'Unique open rate',
      value: `${format2(t.openRate)} %`,
      change: prev && pointsChange(t.openRate, prev.openRate),
    },
    {
      key: 'click-rate',
      label: 'Unique click rate',
      value: `${format2(t.clickRate)} %`,
      change: prev && pointsChange(t.clickRate, prev.clickRate),
    },
    {
      key: 'purchases',
      label: 'Purchases',
      value: formatInt(t.counts.purchase_count),
      change: prev && changeOf(t.counts.purchase_count, prev.counts.purchase_count),
    },
    ...money.map(([label, cents, p]) => ({
      key: label.toLowerCase().replace(' ', '-'),
      label,
      value: formatCents(cents),
      change: p === undefined ? undefined : changeOf(cents, p),
    })),
    {
      key: 'bounces',
      label: 'Bounces',
      value: formatInt(t.counts.bounce_total),
      change: prev && changeOf(t.counts.bounce_total, prev.counts.bounce_total),
    },
    {
      key: 'unsubscribes',
      label: 'Unsubscribes',
      value: formatInt(t.counts.unsub_total),
      change: prev && changeOf(t.counts.unsub_total, prev.counts.unsub_total),
    },
  ];
  $('kpis').replaceChildren(
    ...cards.map((c) => {
      const card = el('div', undefined, { class: 'kpi', 'data-kpi': c.key });
      const ch = changeText(c.change, c.key === 'bounces' || c.key === 'unsubscribes');
      card.append(
        el('span', c.label, { class: 'kpi-label' }),
        el('strong', c.value, { class: 'kpi-value' }),
        el('span', ch.text, { class: `kpi-change ${ch.cls}` }),
      );
      return card;
    }),
  );
}

function renderCharts(records: StatsRecord[]): void {
  drawChart(
    $('chart-activity'),
    records,
    [
      { label: 'Sends', color: '#1a73e8', value: (r) => r.sends_unique },
      { label: 'Opens', color: '#188038', value: (r) => r.opens_unique },
      { label: 'Clicks', color: '#e37400', value: (r) => r.clicks_unique },
    ],
    'count',
  );
  drawChart(
    $('chart-revenue'),
    records,
    [
      { label: 'RON', color: '#a142f4', value: (r) => r.purchases_value_ron },
      { label: 'EUR', color: '#12b5cb', value: (r) => r.purchases_value_eur },
    ],
    'money',
  );
  drawChart(
    $('chart-aov'),
    records,
    [
      { label: 'AOV RON', color: '#a142f4', value: (r) => r.purchases_value_aov_ron },
      { label: 'AOV EUR', color: '#12b5cb', value: (r) => r.purchases_value_aov_eur },
    ],
    'money',
  );
}

const DAY_HEADERS: Record<(typeof DAY_COLUMNS)[number], string> = {
  sends_unique: 'Sends (unique)',
  sends_total: 'Sends',
  opens_unique: 'Opens (unique)',
  opens_total: 'Opens',
  opens_unique_percent: 'Open rate %',
  clicks_unique: 'Clicks (unique)',
  clicks_total: 'Clicks',
  clicks_unique_percent: 'Click rate %',
  purchase_count: 'Purchases',
  purchases_value_ron: 'Revenue RON',
  purchases_value_eur: 'Revenue EUR',
  purchases_value_aov_ron: 'AOV RON',
  purchases_value_aov_eur: 'AOV EUR',
  bounce_total: 'Bounces',
  unsub_total: 'Unsubscribes',
  spam_total: 'Spam',
  events_ok: 'Events ok',
  events_failed: 'Events failed',
  conditions_ok: 'Conditions ok',
  conditions_failed: 'Conditions failed',
  actions_ok: 'Actions ok',
  actions_failed: 'Actions failed',
};

/** Money as the API formatted it; rates with 2 decimals; counts with thousands separators. */
function dayCell(r: StatsRecord, c: (typeof DAY_COLUMNS)[number]): string {
  switch (c) {
    case 'purchases_value_ron':
      return r.formatted_revenue_ron;
    case 'purchases_value_eur':
      return r.formatted_revenue_eur;
    case 'purchases_value_aov_ron':
      return r.formatted_value_aov_ron;
    case 'purchases_value_aov_eur':
      return r.formatted_value_aov_eur;
    case 'opens_unique_percent':
    case 'clicks_unique_percent':
      return format2(r[c]);
    default:
      return formatInt(r[c]);
  }
}

function table(
  target: HTMLElement,
  caption: string,
  headers: string[],
  rows: string[][],
  keys: string[] = [],
): void {
  const head = el('thead');
  const tr = el('tr');
  tr.append(...headers.map((h) => el('th', h, { scope: 'col' })));
  head.append(tr);
  const body = el('tbody');
  for (const [i, row] of rows.entries()) {
    const r = el('tr', undefined, keys[i] ? { 'data-key': keys[i] } : {});
    r.append(...row.map((v, j) => (j === 0 ? el('th', v, { scope: 'row' }) : el('td', v))));
    body.append(r);
  }
  target.replaceChildren(el('caption', caption, { class: 'sr-only' }), head, body);
}

function renderDays(records: StatsRecord[]): void {
  table(
    $('days'),
    'Daily figures',
    ['Date', ...DAY_COLUMNS.map((c) => DAY_HEADERS[c])],
    records.map((r) => [r.date, ...DAY_COLUMNS.map((c) => dayCell(r, c))]),
    records.map((r) => r.date),
  );
  if (records.length === 0) $('days').append(el('caption', 'No activity in this period.'));
}

const BREAKDOWN_HEADERS = [
  'Workflow',
  'Sends',
  'Sends (unique)',
  'Opens (unique)',
  'Open rate %',
  'Clicks (unique)',
  'Click rate %',
  'Purchases',
  'Revenue RON',
  'Revenue EUR',
  'AOV RON',
  'AOV EUR',
  'Bounces',
  'Unsubscribes',
];

function breakdownRow(b: State['breakdown'][number]): { shown: string[]; raw: Cell[] } {
  const t = b.totals;
  const raw: Cell[] = [
    t.counts.sends_total,
    t.counts.sends_unique,
    t.counts.opens_unique,
    t.openRate,
    t.counts.clicks_unique,
    t.clickRate,
    t.counts.purchase_count,
    t.revenueRonCents / 100,
    t.revenueEurCents / 100,
    t.aovRonCents / 100,
    t.aovEurCents / 100,
    t.counts.bounce_total,
    t.counts.unsub_total,
  ];
  const shown = [
    formatInt(t.counts.sends_total),
    formatInt(t.counts.sends_unique),
    formatInt(t.counts.opens_unique),
    format2(t.openRate),
    formatInt(t.counts.clicks_unique),
    format2(t.clickRate),
    formatInt(t.counts.purchase_count),
    formatCents(t.revenueRonCents),
    formatCents(t.revenueEurCents),
    formatCents(t.aovRonCents),
    formatCents(t.aovEurCents),
    formatInt(t.counts.bounce_total),
    formatInt(t.counts.unsub_total),
  ];
  return { shown, raw };
}

function renderBreakdown(rows: State['breakdown']): void {
  table(
    $('wf'),
    'Per-workflow totals',
    BREAKDOWN_HEADERS,
    rows.map((b) => [
      `${b.workflow.name || 'Workflow'} (#${b.workflow.workflow_id})`,
      ...breakdownRow(b).shown,
    ]),
    rows.map((b) => String(b.workflow.workflow_id)),
  );
}

// ---------------------------------------------------------------- CSV

function download(name: string, csv: string): void {
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
  const a = el('a', undefined, { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function fileStem(): string {
  const p = resolvePreset(currentPreset(), todayIn(state.list!.timezone));
  return `mailstats-list${state.list!.list_id}-${p.from}_${p.to}`;
}

/** The table of days with the API's own values (numbers as the API answered them). */
function exportDays(): void {
  const rows = state.days.map((r) => [r.date, ...DAY_COLUMNS.map((c) => r[c])]);
  download(`${fileStem()}-days.csv`, toCsv(['date', ...DAY_COLUMNS], rows));
}

function exportWorkflows(): void {
  const header = [
    'workflow_id',
    'workflow_name',
    'sends_total',
    'sends_unique',
    'opens_unique',
    'opens_unique_percent',
    'clicks_unique',
    'clicks_unique_percent',
    'purchase_count',
    'purchases_value_ron',
    'purchases_value_eur',
    'purchases_value_aov_ron',
    'purchases_value_aov_eur',
    'bounce_total',
    'unsub_total',
  ];
  const rows = state.breakdown.map((b) => [b.workflow.workflow_id, b.workflow.name, ...breakdownRow(b).raw]);
  download(`${fileStem()}-workflows.csv`, toCsv(header, rows));
}

// ---------------------------------------------------------------- template preview

async function renderTemplate(): Promise<void> {
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

// ---------------------------------------------------------------- wiring

$('signin-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const userId = $<HTMLInputElement>('user-id').value.trim();
  const apiKey = $<HTMLInputElement>('api-key').value;
  void signIn({ userId, apiKey });
});
$('sign-out').addEventListener('click', signOut);
$('filters').addEventListener('submit', (e) => e.preventDefault());
$('list').addEventListener('change', () => void selectList($<HTMLSelectElement>('list').value));
$('period').addEventListener('change', onPeriodChange);
$('start').addEventListener('change', () => void reload());
$('stop').addEventListener('change', () => void reload());
$('trigger').addEventListener('change', () => void reload());
$('workflow-list').addEventListener('change', () => void reload());
$('export-days').addEventListener('click', exportDays);
$('export-workflows').addEventListener('click', exportWorkflows);
$('tpl-account').addEventListener('change', renderTemplateChoices);
$('tpl-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void renderTemplate();
});
for (const id of ['chart-activity', 'chart-revenue', 'chart-aov']) followWidth($(id));

const saved = loadSession();
if (saved) {
  $<HTMLInputElement>('user-id').value = saved.userId;
  void signIn(saved);
}
