import { createHash } from 'node:crypto';
import type { DecodedItem } from './decode.js';

/** The demo tenant (contract §5): fixed ids and key so the README's requests work as written. */
export const DEMO = {
  userId: 1001,
  apiKey: 'demo-key-0123456789abcdef',
  lists: [
    { list_id: 1, name: 'Demo Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
    { list_id: 2, name: 'Demo Newsletter', timezone: 'Europe/London', currency: 'EUR' },
  ],
  accountId: 'acc-shop',
  days: 90,
} as const;

/** A small deterministic PRNG (mulberry32), so every demo store holds the same numbers per day offset. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ORDER_TEMPLATE = `<html><body>
<h1>Thank you for your order, {{default customer.first_name "customer"}}!</h1>
<p>Order <strong>#{{order.id}}</strong> placed on {{formatDate order.placed_at "d MMMM yyyy, HH:mm"}}.</p>
<table>
{{#each order.items}}<tr><td>{{name}}</td><td>{{quantity}} × {{formatMoney price}}</td></tr>
{{/each}}</table>
<p>Total: <strong>{{formatMoney order.total}}</strong></p>
{{#if (gt order.total 200)}}<p>Your order ships for free.</p>{{/if}}
</body></html>`;

/** Catalog and ~90 days of activity ending on the day of `now`, as ingest items. */
export function demoRecords(now = Date.now()): DecodedItem[] {
  const records: unknown[] = [
    ...DEMO.lists.map((l) => ({ type: 'list', ...l })),
    {
      type: 'user',
      user_id: DEMO.userId,
      api_key_sha256: createHash('sha256').update(DEMO.apiKey).digest('hex'),
    },
    ...DEMO.lists.map((l) => ({
      type: 'list_access',
      user_id: DEMO.userId,
      list_id: l.list_id,
      granted: true,
    })),
    { type: 'smtp_account', account_id: DEMO.accountId, list_id: 1, active: true, is_default: true },
    { type: 'smtp_account', account_id: 'acc-news', list_id: 2, active: true },
    {
      type: 'template',
      template_id: 'order-confirmation',
      account_id: DEMO.accountId,
      content: ORDER_TEMPLATE,
      content_type: 'html',
      props: { subject: 'Order #{{order.id}} confirmed', from_name: 'Demo Shop' },
    },
    {
      type: 'template',
      template_id: 'welcome-text',
      account_id: 'acc-news',
      content: 'Hello {{name}}, welcome to {{list}}!',
      content_type: 'text',
      props: null,
    },
    ...[1, 2, 3, 4, 5].map((w) => ({ type: 'workflow', workflow_id: w, list_id: 1, name: `Shop flow ${w}` })),
    ...[6, 7].map((w) => ({ type: 'workflow', workflow_id: w, list_id: 2, name: `Newsletter flow ${w}` })),
  ];
  const day0 = Math.floor(now / 86_400_000) * 86_400_000;
  for (let offset = 0; offset < DEMO.days; offset++) {
    const rnd = prng(offset + 1);
    // Noon UTC is the same calendar day in both demo zones; activity spreads over the next hours.
    const noon = day0 - offset * 86_400_000 + 12 * 3_600_000;
    let seq = 0;
    const id = () => `demo-${offset}-${seq++}`;
    for (const [listId, workflows] of [
      [1, [1, 2, 3, 4, 5]],
      [2, [6, 7]],
    ] as const) {
      for (const workflowId of workflows) {
        const sends = 20 + Math.floor(rnd() * 20);
        for (let s = 0; s < sends; s++) {
          const subscriberId = 1 + Math.floor(rnd() * 400);
          const sentAt = noon - Math.floor(rnd() * 3_600_000);
          const base = {
            list_id: listId,
            workflow_id: workflowId,
            subscriber_id: subscriberId,
            trigger_id: workflowId * 10,
          };
          records.push({ type: 'send', event_id: id(), ...base, timestamp: sentAt });
          records.push({
            type: 'event',
            event_id: id(),
            ...base,
            timestamp: sentAt,
            status: rnd() < 0.95 ? 'ok' : 'failed',
          });
          if (rnd() < 0.5)
            records.push({
              type: 'open',
              event_id: id(),
              ...base,
              timestamp: sentAt + 600_000,
              sent_at: sentAt,
            });
          if (rnd() < 0.2)
            records.push({
              type: 'click',
              event_id: id(),
              ...base,
              timestamp: sentAt + 900_000,
              sent_at: sentAt,
            });
          if (rnd() < 0.05) {
            const ron = (Math.floor(rnd() * 50_000) / 100).toFixed(2);
            records.push({
              type: 'purchase',
              event_id: id(),
              ...base,
              timestamp: sentAt + 1_800_000,
              sent_at: sentAt,
              order_id: `o-${offset}-${seq}`,
              value_ron: ron,
              value_eur: (Number(ron) / 5).toFixed(4),
            });
          }
          if (rnd() < 0.02)
            records.push({
              type: 'bounce',
              event_id: id(),
              ...base,
              timestamp: sentAt + 60_000,
              sent_at: sentAt,
            });
          if (rnd() < 0.01)
            records.push({
              type: 'unsubscribe',
              event_id: id(),
              ...base,
              timestamp: sentAt + 7_200_000,
              sent_at: sentAt,
            });
          if (rnd() < 0.005)
            records.push({
              type: 'spam',
              event_id: id(),
              ...base,
              timestamp: sentAt + 7_200_000,
              sent_at: sentAt,
            });
          records.push({
            type: 'condition',
            event_id: id(),
            ...base,
            timestamp: sentAt,
            status: rnd() < 0.7 ? 'ok' : 'failed',
          });
          records.push({
            type: 'action',
            event_id: id(),
            ...base,
            timestamp: sentAt,
            status: rnd() < 0.98 ? 'ok' : 'failed',
          });
        }
      }
    }
  }
  return records.map((value, i) => ({ line: i + 1, value }));
}
