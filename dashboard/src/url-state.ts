/**
 * The view in the page's address (the fragment after #), so that a view can be bookmarked, shared and
 * survives a reload: list, period, custom dates, "include today", the comparison, workflows ticked,
 * trigger, the charts' points and currency, and the sort of both workflow tables. Never the key: the key
 * stays in this tab's session storage; whoever opens the link signs in first (or opens a share link).
 */
export interface View {
  list?: string;
  period?: string;
  from?: string;
  to?: string;
  /** A rolling period ends today, not yesterday. */
  today?: boolean;
  /** `year`: compared with the same period last year. */
  compare?: string;
  workflows?: number[];
  trigger?: string;
  /** The charts' points: day, week or month (when picked, not the period's default). */
  points?: string;
  /** The money charts' currency, when not the list's own. */
  money?: string;
  /** The per-workflow table's sort, `column:direction`. */
  sort?: string;
  /** The ranked table's sort, `column:direction`. */
  rank?: string;
  /** What the bars of "Workflows side by side" show, when not sends. */
  bars?: string;
  /** A share link's token (the page then shows that list only, without signing in). */
  share?: string;
}

export function readView(hash: string = location.hash): View {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  const v: View = {};
  const get = (k: string) => q.get(k) ?? undefined;
  if (get('list')) v.list = get('list');
  if (get('period')) v.period = get('period');
  if (get('from')) v.from = get('from');
  if (get('to')) v.to = get('to');
  if (get('trigger')) v.trigger = get('trigger');
  if (get('today') === '1') v.today = true;
  for (const k of ['compare', 'points', 'money', 'sort', 'rank', 'bars', 'share'] as const)
    if (get(k)) v[k] = get(k);
  const wf = get('workflows');
  if (wf)
    v.workflows = wf
      .split(',')
      .map(Number)
      .filter((n) => Number.isSafeInteger(n) && n > 0);
  return v;
}

export function viewHash(v: View): string {
  const q = new URLSearchParams();
  if (v.share) q.set('share', v.share);
  if (v.list) q.set('list', v.list);
  if (v.period) q.set('period', v.period);
  if (v.period === 'custom') {
    if (v.from) q.set('from', v.from);
    if (v.to) q.set('to', v.to);
  }
  if (v.today) q.set('today', '1');
  if (v.compare && v.compare !== 'previous') q.set('compare', v.compare);
  if (v.workflows?.length) q.set('workflows', v.workflows.join(','));
  if (v.trigger) q.set('trigger', v.trigger);
  for (const k of ['points', 'money', 'sort', 'rank', 'bars'] as const) if (v[k]) q.set(k, v[k]);
  return `#${q.toString().replace(/%2C/g, ',').replace(/%3A/g, ':')}`;
}

/** Replaces the address's fragment (no new history entry per filter change; no reload). */
export function writeView(v: View): void {
  const hash = viewHash(v);
  if (location.hash !== hash) history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
}
