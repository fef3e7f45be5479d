/**
 * The view in the page's address (the fragment after #), so that a view can be bookmarked, shared and
 * survives a reload: list, period, custom dates, workflows ticked, trigger. Never the key: the key
 * stays in this tab's session storage; whoever opens the link signs in first.
 */
export interface View {
  list?: string;
  period?: string;
  from?: string;
  to?: string;
  workflows?: number[];
  trigger?: string;
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
  if (v.list) q.set('list', v.list);
  if (v.period) q.set('period', v.period);
  if (v.period === 'custom') {
    if (v.from) q.set('from', v.from);
    if (v.to) q.set('to', v.to);
  }
  if (v.workflows?.length) q.set('workflows', v.workflows.join(','));
  if (v.trigger) q.set('trigger', v.trigger);
  return `#${q.toString().replace(/%2C/g, ',')}`;
}

/** Replaces the address's fragment (no new history entry per filter change; no reload). */
export function writeView(v: View): void {
  const hash = viewHash(v);
  if (location.hash !== hash) history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
}
