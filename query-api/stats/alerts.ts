import { percent } from '../../shared/money.js';
import type { Alert } from './record.js';

/**
 * "Needs a look" (docs/dashboard.md "Alerts"): what a marketer expects to be told about a period,
 * computed from the period's and the previous period's sums. Pure: the unit tests call it directly.
 */

/** Per-list thresholds; every one has a default (ALERT_DEFAULTS), a list may set its own (`admin alerts set`). */
export interface AlertThresholds {
  /** Spam complaints, % of sends, flagged above. */
  spam: number;
  /** Bounces, % of sends, flagged above. */
  bounce: number;
  /** Unsubscribe rate's rise over the previous period's, in % of it, flagged above. */
  unsubscribe_spike: number;
  /** Unique open rate's fall from the previous period's, in % of it, flagged above. */
  open_rate_drop: number;
  /** Revenue's fall from the previous period's, in % of it, flagged above. */
  revenue_drop: number;
  /** A workflow with sends before and none in the period's last N days is flagged. */
  stopped_days: number;
}

export const ALERT_DEFAULTS: AlertThresholds = {
  spam: 0.1,
  bounce: 2,
  unsubscribe_spike: 50,
  open_rate_drop: 20,
  revenue_drop: 30,
  stopped_days: 3,
};

export const ALERT_SETTINGS = Object.keys(ALERT_DEFAULTS) as (keyof AlertThresholds)[];

/** The sums of a period the alerts read (per-day uniques summed, as the dashboard's period rates). */
export interface PeriodSums {
  sends_total: number;
  sends_unique: number;
  opens_unique: number;
  bounce_total: number;
  unsub_total: number;
  spam_total: number;
  /** Revenue in the list's currency, in cents. */
  revenue_cents: bigint;
}

/** A workflow's sends before the period's last `stopped_days` days and within them. */
export interface WorkflowSends {
  workflow_id: number;
  name: string | null;
  before: number;
  recent: number;
}

/** Fewest unsubscribes in a period for a rise to count as a spike (a rise of 1 to 2 is noise). */
const MIN_SPIKE_UNSUBSCRIBES = 5;

/** Relative fall of `now` from `before`, in % of `before` (2 decimals), or undefined without a `before`. */
function fall(now: number, before: number): number | undefined {
  if (before <= 0 || now >= before) return undefined;
  return Math.round(((before - now) / before) * 10_000) / 100;
}

const pct = (v: number) => `${v.toFixed(2).replace('.', ',')} %`;

export function computeAlerts(
  current: PeriodSums,
  previous: PeriodSums,
  workflows: WorkflowSends[],
  t: AlertThresholds,
  currency: string,
): Alert[] {
  const alerts: Alert[] = [];
  const sends = current.sends_total;
  if (sends > 0) {
    const spam = percent(current.spam_total, sends);
    if (spam > t.spam)
      alerts.push({
        kind: 'spam',
        message: `Spam complaints at ${pct(spam)} of sends (above ${pct(t.spam)})`,
        value: spam,
        threshold: t.spam,
      });
    const bounce = percent(current.bounce_total, sends);
    if (bounce > t.bounce)
      alerts.push({
        kind: 'bounce',
        message: `Bounces at ${pct(bounce)} of sends (above ${pct(t.bounce)})`,
        value: bounce,
        threshold: t.bounce,
      });
    if (previous.sends_total > 0 && current.unsub_total >= MIN_SPIKE_UNSUBSCRIBES) {
      const now = current.unsub_total / sends;
      const before = previous.unsub_total / previous.sends_total;
      const rise = before > 0 ? Math.round(((now - before) / before) * 10_000) / 100 : undefined;
      if (rise !== undefined && rise > t.unsubscribe_spike)
        alerts.push({
          kind: 'unsubscribe_spike',
          message:
            `Unsubscribes up ${pct(rise)} on the previous period ` +
            `(${pct(percent(current.unsub_total, sends))} of sends against ${pct(percent(previous.unsub_total, previous.sends_total))})`,
          value: rise,
          threshold: t.unsubscribe_spike,
        });
    }
  }
  if (current.sends_unique > 0 && previous.sends_unique > 0) {
    const now = percent(current.opens_unique, current.sends_unique);
    const before = percent(previous.opens_unique, previous.sends_unique);
    const drop = fall(now, before);
    if (drop !== undefined && drop > t.open_rate_drop)
      alerts.push({
        kind: 'open_rate_drop',
        message: `Open rate down ${pct(drop)} on the previous period (${pct(now)} against ${pct(before)})`,
        value: drop,
        threshold: t.open_rate_drop,
      });
  }
  const drop = fall(Number(current.revenue_cents), Number(previous.revenue_cents));
  if (drop !== undefined && drop > t.revenue_drop)
    alerts.push({
      kind: 'revenue_drop',
      message: `Revenue (${currency}) down ${pct(drop)} on the previous period`,
      value: drop,
      threshold: t.revenue_drop,
    });
  for (const w of workflows) {
    if (w.before > 0 && w.recent === 0)
      alerts.push({
        kind: 'workflow_stopped',
        message: `${w.name ?? `Workflow ${w.workflow_id}`} sent nothing in the last ${t.stopped_days} days`,
        value: 0,
        threshold: t.stopped_days,
        workflow_id: String(w.workflow_id),
      });
  }
  return alerts;
}

/** Stored settings (JSON of a partial AlertThresholds) over the defaults; unknown or bad values ignored. */
export function thresholdsOf(stored: string | undefined): AlertThresholds {
  const t = { ...ALERT_DEFAULTS };
  if (!stored) return t;
  try {
    const parsed = JSON.parse(stored) as Record<string, unknown>;
    for (const k of ALERT_SETTINGS) {
      const v = parsed[k];
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) t[k] = v;
    }
  } catch {
    // A row that is not JSON is never written by us: the defaults stand.
  }
  return t;
}
