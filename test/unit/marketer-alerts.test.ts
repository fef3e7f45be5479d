import { describe, expect, it } from 'vitest';
import {
  ALERT_DEFAULTS,
  computeAlerts,
  thresholdsOf,
  type PeriodSums,
} from '../../query-api/stats/alerts.js';

/** "Needs a look" (docs/dashboard.md "Alerts"): each kind at and beyond its threshold. */
const sums = (p: Partial<PeriodSums> = {}): PeriodSums => ({
  sends_total: 10_000,
  sends_unique: 10_000,
  opens_unique: 5_000,
  bounce_total: 100,
  unsub_total: 10,
  spam_total: 5,
  revenue_cents: 100_000n,
  ...p,
});
const kinds = (a: { kind: string }[]) => a.map((x) => x.kind);

describe('computeAlerts', () => {
  it('a healthy period beside a like one: nothing', () => {
    expect(computeAlerts(sums(), sums(), [], ALERT_DEFAULTS, 'RON')).toEqual([]);
  });

  it('spam above 0.1 % and bounces above 2 % of sends (at the threshold: not flagged)', () => {
    expect(
      computeAlerts(sums({ spam_total: 10, bounce_total: 200 }), sums(), [], ALERT_DEFAULTS, 'RON'),
    ).toEqual([]);
    const a = computeAlerts(sums({ spam_total: 11, bounce_total: 206 }), sums(), [], ALERT_DEFAULTS, 'RON');
    expect(a).toEqual([
      {
        kind: 'spam',
        message: 'Spam complaints at 0,11 % of sends (above 0,10 %)',
        value: 0.11,
        threshold: 0.1,
      },
      { kind: 'bounce', message: 'Bounces at 2,06 % of sends (above 2,00 %)', value: 2.06, threshold: 2 },
    ]);
  });

  it('an unsubscribe spike: the rate up more than 50 % on the previous period, with at least 5 unsubscribes', () => {
    expect(kinds(computeAlerts(sums({ unsub_total: 16 }), sums(), [], ALERT_DEFAULTS, 'RON'))).toEqual([
      'unsubscribe_spike',
    ]);
    expect(computeAlerts(sums({ unsub_total: 15 }), sums(), [], ALERT_DEFAULTS, 'RON')).toEqual([]);
    expect(
      computeAlerts(sums({ unsub_total: 4 }), sums({ unsub_total: 1 }), [], ALERT_DEFAULTS, 'RON'),
    ).toEqual([]);
  });

  it('open rate and revenue drops against the previous period', () => {
    const a = computeAlerts(
      sums({ opens_unique: 3_900, revenue_cents: 69_000n }),
      sums(),
      [],
      ALERT_DEFAULTS,
      'EUR',
    );
    expect(a).toEqual([
      {
        kind: 'open_rate_drop',
        message: 'Open rate down 22,00 % on the previous period (39,00 % against 50,00 %)',
        value: 22,
        threshold: 20,
      },
      {
        kind: 'revenue_drop',
        message: 'Revenue (EUR) down 31,00 % on the previous period',
        value: 31,
        threshold: 30,
      },
    ]);
    // No previous revenue or opens: nothing to drop from.
    expect(
      computeAlerts(sums(), sums({ revenue_cents: 0n, sends_unique: 0 }), [], ALERT_DEFAULTS, 'RON'),
    ).toEqual([]);
  });

  it('a workflow whose sends stopped', () => {
    const a = computeAlerts(
      sums(),
      sums(),
      [
        { workflow_id: 3, name: 'Welcome', before: 40, recent: 0 },
        { workflow_id: 4, name: null, before: 40, recent: 2 },
        { workflow_id: 5, name: null, before: 0, recent: 0 },
      ],
      ALERT_DEFAULTS,
      'RON',
    );
    expect(a).toEqual([
      {
        kind: 'workflow_stopped',
        message: 'Welcome sent nothing in the last 3 days',
        value: 0,
        threshold: 3,
        workflow_id: '3',
      },
    ]);
  });

  it("a list's own thresholds over the defaults; bad stored values are ignored", () => {
    expect(thresholdsOf(undefined)).toEqual(ALERT_DEFAULTS);
    expect(thresholdsOf('{"bounce":3,"spam":-1,"open_rate_drop":"x"}')).toEqual({
      ...ALERT_DEFAULTS,
      bounce: 3,
    });
    const t = thresholdsOf('{"bounce":3}');
    expect(computeAlerts(sums({ bounce_total: 206 }), sums(), [], t, 'RON')).toEqual([]);
  });
});
