import { describe, expect, it } from 'vitest';
import { sampleFor, TEMPLATE_SAMPLES } from '../../dashboard/src/template-samples.js';
import { DEMO_ORDER_PARAMS, demoRecords } from '../../ingest/demo-seed.js';

/** The template preview's sample params (the page cannot read a template's source through the API). */
describe('dashboard template samples', () => {
  it('the order confirmation sample is the demo seed’s order, field for field', () => {
    expect(TEMPLATE_SAMPLES['order-confirmation']).toEqual(DEMO_ORDER_PARAMS);
  });

  it('has a sample for every demo template, naming the fields its source uses', () => {
    const templates = demoRecords(0)
      .map((r: any) => r.value)
      .filter((v: any) => v?.type === 'template');
    for (const t of templates) {
      const sample = JSON.parse(sampleFor(t.template_id));
      const source = String(t.content);
      // Paths such as {{order.id}}; plain names too where no block ({{#each}}) makes them relative.
      const paths = [...source.matchAll(/\{\{\s*([a-z_]+(?:\.[a-z_]+)+)\s*\}\}/g)].map((m) => m[1]!);
      if (!source.includes('{{#'))
        paths.push(...[...source.matchAll(/\{\{\s*([a-z_]+)\s*\}\}/g)].map((m) => m[1]!));
      expect(paths.length, t.template_id).toBeGreaterThan(0);
      for (const f of paths) expect(sample, `${t.template_id}: ${f}`).toHaveProperty(f);
    }
    expect(templates.length).toBeGreaterThan(0);
  });

  it('an unknown template gets an empty object', () => {
    expect(sampleFor('anything-else')).toBe('{}');
  });
});
