import { describe, expect, it } from 'vitest';
import { templateVariables } from '../../query-api/render/variables.js';

/**
 * The fields a template reads (transactional.templateVariables, for the dashboard's template preview), as
 * paths from the root of the params, from Handlebars' own parser.
 */
describe('templateVariables', () => {
  it('plain mustaches, raw ones and nested paths, in the order first read, once each', () => {
    expect(
      templateVariables(['Order #{{order.id}}, placed on {{{order.placed_at}}}. {{order.id}} {{name}}']),
    ).toEqual(['order.id', 'order.placed_at', 'name']);
  });

  it('a helper’s arguments and hash values are fields, its name is not', () => {
    expect(
      templateVariables([
        '{{formatMoney order.total}} {{formatDate order.placed_at pattern=fmt}} {{formatMoney}}',
      ]),
    ).toEqual(['order.total', 'order.placed_at', 'fmt']);
  });

  it('blocks: #if and #unless read their condition, the body is the same context', () => {
    expect(
      templateVariables(['{{#if order.coupon}}Coupon {{order.coupon}}{{else}}{{fallback}}{{/if}}']),
    ).toEqual(['order.coupon', 'fallback']);
  });

  it('#with: paths inside are under its value; ../ reaches out again', () => {
    expect(templateVariables(['{{#with customer}}{{first_name}} {{../order.id}}{{/with}}'])).toEqual([
      'customer',
      'customer.first_name',
      'order.id',
    ]);
  });

  it('#each: its list is a field; an item’s fields are not known in advance, ../ and @root are', () => {
    expect(
      templateVariables([
        '{{#each order.items}}{{name}} {{this}} {{@index}} {{../currency}} {{@root.shop.name}}{{/each}}',
      ]),
    ).toEqual(['order.items', 'currency', 'shop.name']);
  });

  it('subexpressions and several sources (content and props)', () => {
    expect(
      templateVariables([
        '{{#if (gt order.total limit)}}big{{/if}}',
        'Order {{order.id}} for {{customer.first_name}}',
      ]),
    ).toEqual(['order.total', 'limit', 'order.id', 'customer.first_name']);
  });

  it('a template that does not parse throws (the operation answers 17007)', () => {
    expect(() => templateVariables(['{{#if a}}open'])).toThrow();
  });
});

describe('the demo template of docs/api.md’s example', () => {
  it('welcome-text reads name and list', async () => {
    const { demoRecords } = await import('../../ingest/demo-seed.js');
    const welcome = demoRecords()
      .flatMap((item) => ('value' in item ? [item.value as { template_id?: string; content?: string }] : []))
      .find((r) => r.template_id === 'welcome-text');
    expect(welcome?.content, 'the demo has welcome-text').toBeDefined();
    expect(templateVariables([welcome!.content!])).toEqual(['name', 'list']);
  });
});
