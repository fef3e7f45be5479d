import { createHash } from 'node:crypto';
import type { DecodedItem } from './sink.js';

/** The demo tenant (docs/records.md "The demo tenant"): fixed ids and key so the README's requests work as written. */
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

/**
 * The demo shop's order confirmation: a table-based HTML email as shops send them (inline styles, a
 * preheader, items with line totals, totals block, addresses, payment, a tracking button), using the
 * money and date helpers in the list's locale (ro-RO), currency (RON) and time zone (Europe/Bucharest).
 * Params: customer{first_name,email}, order{id,placed_at,items[{name,sku,quantity,price,total,variant}],
 * subtotal,discount,coupon,shipping,vat,total,payment_method,tracking_url}, shipping_address{name,line1,
 * line2,city,postcode,country}.
 */
const ORDER_TEMPLATE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Order #{{order.id}} confirmed</title>
</head>
<body style="margin:0;padding:0;background:#f4f4f7;font-family:Arial,Helvetica,sans-serif;color:#333;">
<span style="display:none;max-height:0;overflow:hidden;">We received order #{{order.id}} and are getting it ready.</span>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f7;">
<tr><td align="center" style="padding:24px 12px;">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:6px;">
<tr><td style="padding:24px 32px;border-bottom:1px solid #eee;font-size:22px;font-weight:bold;">Demo Shop</td></tr>
<tr><td style="padding:24px 32px;">
<h1 style="font-size:20px;margin:0 0 12px;">Thank you for your order, {{default customer.first_name "dear customer"}}!</h1>
<p style="margin:0 0 8px;">Order <strong>#{{order.id}}</strong>, placed on {{formatDate order.placed_at "dd.MM.yyyy, HH:mm"}}.</p>
<p style="margin:0;">We will email you again as soon as it ships.</p>
</td></tr>
<tr><td style="padding:0 32px;">
<table role="presentation" width="100%" cellpadding="6" cellspacing="0" style="border-collapse:collapse;font-size:14px;">
<tr style="background:#fafafa;text-align:left;"><th>Product</th><th align="center">Qty</th><th align="right">Price</th><th align="right">Total</th></tr>
{{#each order.items}}<tr style="border-top:1px solid #eee;">
<td>{{name}}{{#if variant}}<br><span style="color:#888;font-size:12px;">{{variant}}</span>{{/if}}<br><span style="color:#aaa;font-size:11px;">SKU {{sku}}</span></td>
<td align="center">{{quantity}}</td>
<td align="right">{{formatMoney price}}</td>
<td align="right">{{formatMoney total}}</td>
</tr>
{{/each}}</table>
</td></tr>
<tr><td style="padding:12px 32px;">
<table role="presentation" width="100%" cellpadding="4" cellspacing="0" style="font-size:14px;">
<tr><td align="right">Subtotal</td><td align="right" width="120">{{formatMoney order.subtotal}}</td></tr>
{{#if (gt order.discount 0)}}<tr><td align="right">Discount{{#if order.coupon}} ({{upper order.coupon}}){{/if}}</td><td align="right">-{{formatMoney order.discount}}</td></tr>
{{/if}}<tr><td align="right">Shipping</td><td align="right">{{#if (gt order.shipping 0)}}{{formatMoney order.shipping}}{{else}}free{{/if}}</td></tr>
<tr><td align="right">VAT included</td><td align="right">{{formatMoney order.vat}}</td></tr>
<tr><td align="right" style="font-size:16px;"><strong>Total</strong></td><td align="right" style="font-size:16px;"><strong>{{formatMoney order.total}}</strong></td></tr>
</table>
</td></tr>
<tr><td style="padding:12px 32px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="font-size:14px;">
<tr><td valign="top" width="50%"><strong>Shipping to</strong><br>
{{shipping_address.name}}<br>{{shipping_address.line1}}<br>{{#if shipping_address.line2}}{{shipping_address.line2}}<br>{{/if}}{{shipping_address.postcode}} {{shipping_address.city}}<br>{{shipping_address.country}}</td>
<td valign="top" width="50%"><strong>Payment</strong><br>{{default order.payment_method "card"}}</td></tr>
</table>
</td></tr>
{{#if order.tracking_url}}<tr><td align="center" style="padding:16px 32px;">
<a href="{{order.tracking_url}}" style="display:inline-block;background:#1a73e8;color:#fff;text-decoration:none;padding:12px 24px;border-radius:4px;">Track your order</a>
</td></tr>
{{/if}}<tr><td style="padding:16px 32px;border-top:1px solid #eee;font-size:12px;color:#888;">
Questions? Reply to this email or write to support@demo-shop.example.<br>
This message was sent to {{customer.email}} because you placed an order at Demo Shop.
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>`;

/** Params for the demo order confirmation: what a shop would send (used by the README and tests). */
export const DEMO_ORDER_PARAMS = {
  customer: { first_name: 'Ana', email: 'ana@example.com' },
  order: {
    id: '10057',
    placed_at: '2026-11-02T10:15:00Z',
    items: [
      {
        name: 'Espresso beans 1 kg',
        sku: 'CF-1000',
        quantity: 2,
        price: '89.90',
        total: '179.80',
        variant: 'Dark roast',
      },
      { name: 'Milk frother', sku: 'MF-20', quantity: 1, price: '149.00', total: '149.00' },
    ],
    subtotal: '328.80',
    discount: '32.88',
    coupon: 'welcome10',
    shipping: '0',
    vat: '47.25',
    total: '295.92',
    payment_method: 'Visa •••• 4242',
    tracking_url: 'https://track.demo-shop.example/10057',
  },
  shipping_address: {
    name: 'Ana Popescu',
    line1: 'Str. Lipscani 12',
    line2: 'ap. 4',
    city: 'București',
    postcode: '030031',
    country: 'România',
  },
};

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
      props: {
        subject: '{{default customer.first_name "Hello"}}, your order #{{order.id}} is confirmed',
        from_name: 'Demo Shop',
      },
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
