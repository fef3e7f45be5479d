/**
 * Sample params for the template preview, per template id. The API gives a template's id and type but
 * not its source (docs/api.md: transactional.templates), so the page cannot derive the fields a template
 * uses; it prefills the demo templates' documented samples (the same params as the demo seed's order,
 * checked by test/unit/dashboard-template-samples.test.ts) and, for any other template, an empty object
 * with a hint to type the fields the template uses.
 */
export const TEMPLATE_SAMPLES: Record<string, Record<string, unknown>> = {
  'order-confirmation': {
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
  },
  'welcome-text': { name: 'Ana', list: 'Demo Newsletter' },
};

export const sampleFor = (templateId: string): string =>
  JSON.stringify(TEMPLATE_SAMPLES[templateId] ?? {}, null, 2);

export const hasSample = (templateId: string): boolean => templateId in TEMPLATE_SAMPLES;
