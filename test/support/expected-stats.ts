/**
 * An independent model of automation.stats for tests: straightforward loops over the raw records,
 * Intl for time zones, BigInt rationals for money. It shares no code with the service.
 */

export interface RawActivity {
  type: string;
  event_id: string;
  list_id: number;
  workflow_id: number;
  subscriber_id: number;
  trigger_id?: number;
  /** epoch ms */
  at: number;
  sentAt?: number;
  value_ron?: string;
  value_eur?: string;
  status?: 'ok' | 'failed';
}

const dateIn = (ms: number, tz: string) =>
  new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(ms);

/** "12.3" → 123000n (ten-thousandths). */
function tenThousandths(v: string): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(v)!;
  return BigInt(m[1]!) * 10000n + BigInt((m[2] ?? '').padEnd(4, '0'));
}

/** Round p/q (≥ 0) to 2 decimals, half away from zero; returns hundredths. */
function roundHundredths(p: bigint, q: bigint): bigint {
  const scaled = p * 100n;
  const whole = scaled / q;
  return (scaled % q) * 2n >= q ? whole + 1n : whole;
}

function formatHundredths(h: bigint): string {
  const int = (h / 100n).toString();
  const frac = (h % 100n).toString().padStart(2, '0');
  let grouped = '';
  for (let i = 0; i < int.length; i++) {
    if (i > 0 && (int.length - i) % 3 === 0) grouped += '.';
    grouped += int[i];
  }
  return `${grouped},${frac}`;
}

export function expectedStats(
  records: RawActivity[],
  q: {
    listId: number;
    tz: string;
    currency: string;
    from: string;
    to: string;
    workflowIds?: number[];
    triggerId?: number;
  },
): Record<string, unknown>[] {
  const byDate = new Map<string, RawActivity[]>();
  const seen = new Set<string>();
  for (const r of records) {
    if (seen.has(r.event_id)) continue; // the first delivery of an event_id is the one counted
    seen.add(r.event_id);
    if (r.list_id !== q.listId) continue;
    if (q.workflowIds && !q.workflowIds.includes(r.workflow_id)) continue;
    if (q.triggerId !== undefined && r.trigger_id !== q.triggerId) continue;
    const date = dateIn(r.sentAt ?? r.at, q.tz);
    if (date < q.from || date > q.to) continue;
    byDate.set(date, [...(byDate.get(date) ?? []), r]);
  }
  return [...byDate.keys()].sort().map((date) => {
    const rs = byDate.get(date)!;
    const of = (t: string) => rs.filter((r) => r.type === t);
    const uniq = (t: string) => new Set(of(t).map((r) => r.subscriber_id)).size;
    const status = (t: string, s: string) => of(t).filter((r) => r.status === s).length;
    const purchases = of('purchase');
    const ron = purchases.reduce((a, r) => a + tenThousandths(r.value_ron!), 0n);
    const eur = purchases.reduce((a, r) => a + tenThousandths(r.value_eur!), 0n);
    const n = BigInt(purchases.length);
    const revRon = roundHundredths(ron, 10000n);
    const revEur = roundHundredths(eur, 10000n);
    const aovRon = n === 0n ? 0n : roundHundredths(ron, 10000n * n);
    const aovEur = n === 0n ? 0n : roundHundredths(eur, 10000n * n);
    const sendsU = uniq('send');
    const pct = (x: number) =>
      sendsU === 0 ? 0 : Number(roundHundredths(BigInt(x) * 100n, BigInt(sendsU))) / 100;
    return {
      sends_unique: sendsU,
      sends_total: of('send').length,
      opens_unique: uniq('open'),
      opens_total: of('open').length,
      clicks_unique: uniq('click'),
      clicks_total: of('click').length,
      purchase_count: purchases.length,
      purchases_value_ron: Number(revRon) / 100,
      purchases_value_eur: Number(revEur) / 100,
      bounce_total: of('bounce').length,
      unsub_total: of('unsubscribe').length,
      spam_total: of('spam').length,
      events_ok: status('event', 'ok'),
      events_failed: status('event', 'failed'),
      conditions_ok: status('condition', 'ok'),
      conditions_failed: status('condition', 'failed'),
      actions_ok: status('action', 'ok'),
      actions_failed: status('action', 'failed'),
      date,
      currency: q.currency,
      formatted_revenue_ron: formatHundredths(revRon),
      formatted_revenue_eur: formatHundredths(revEur),
      purchases_value_aov_ron: Number(aovRon) / 100,
      formatted_value_aov_ron: formatHundredths(aovRon),
      purchases_value_aov_eur: Number(aovEur) / 100,
      formatted_value_aov_eur: formatHundredths(aovEur),
      opens_unique_percent: pct(uniq('open')),
      clicks_unique_percent: pct(uniq('click')),
      list_id: String(q.listId),
    };
  });
}
