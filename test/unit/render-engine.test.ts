import { describe, expect, it } from 'vitest';
import {
  MAX_PARAMS_DEPTH,
  MAX_TEMPLATE_BYTES,
  ParamsTooLargeError,
  TemplateRenderError,
  TemplateRenderer,
  checkParams,
  sanitizeParams,
  sanitizedJson,
  type ListContext,
  type RenderInput,
  type StoredTemplate,
} from '../../query-api/render/engine.js';

const RO: ListContext = { locale: 'ro-RO', timeZone: 'Europe/Bucharest', currency: 'RON' };
const US: ListContext = { locale: 'en-US', timeZone: 'America/New_York', currency: 'USD' };
const NBSP = '\u00a0'; // Intl puts a no-break space between amount and currency code

let seq = 0;
function template(content: string, over: Partial<StoredTemplate> = {}): StoredTemplate {
  return {
    templateId: `t${++seq}`,
    accountId: 'acc1',
    version: 'v1',
    content,
    contentType: 'html',
    props: null,
    ...over,
  };
}

const shared = new TemplateRenderer();
function render(
  content: string,
  params: Record<string, unknown> = {},
  over: Partial<StoredTemplate> = {},
  list = RO,
) {
  return shared.render({ template: template(content, over), params, list }).content;
}

function renderError(
  input: Partial<RenderInput> & { template: StoredTemplate },
  r = shared,
): TemplateRenderError {
  try {
    r.render({ params: {}, list: RO, ...input });
  } catch (err) {
    expect(err).toBeInstanceOf(TemplateRenderError);
    return err as TemplateRenderError;
  }
  throw new Error('expected a TemplateRenderError');
}

describe('escaping', () => {
  const x = `<script>alert(1)</script> "&'`;

  it('escapes {{x}} in html templates and leaves {{{x}}} raw', () => {
    expect(render('<p>{{x}}</p>', { x })).toBe(
      '<p>&lt;script&gt;alert(1)&lt;/script&gt; &quot;&amp;&#x27;</p>',
    );
    expect(render('<p>{{{x}}}</p>', { x })).toBe(`<p>${x}</p>`);
  });

  it('does not escape text templates', () => {
    expect(render('Hi {{x}} & {{{x}}}', { x }, { contentType: 'text' })).toBe(`Hi ${x} & ${x}`);
  });

  it('renders props strings unescaped, nested objects and arrays, non-strings as they are', () => {
    const result = shared.render({
      template: template('<b>{{name}}</b>', {
        props: {
          subject: 'Order #{{order}} for {{name}} & family',
          from: { name: 'Shop {{upper city}}', tags: ['t-{{order}}', 7, true, null] },
          priority: 3,
          track: false,
        },
      }),
      params: { name: 'Ana & Ion <x>', order: 42, city: 'cluj' },
      list: RO,
    });
    expect(result).toEqual({
      content: '<b>Ana &amp; Ion &lt;x&gt;</b>',
      engine: 'handlebars',
      type: 'html',
      props: {
        subject: 'Order #42 for Ana & Ion <x> & family',
        from: { name: 'Shop CLUJ', tags: ['t-42', 7, true, null] },
        priority: 3,
        track: false,
      },
    });
  });

  it('answers props null when the template has none, and reports the type', () => {
    const result = shared.render({ template: template('x', { contentType: 'text' }), params: {}, list: RO });
    expect(result).toEqual({ content: 'x', engine: 'handlebars', type: 'text', props: null });
  });
});

describe('helpers', () => {
  it('formatNumber: list locale, 2 decimals by default, rounding half away from zero', () => {
    expect(render('{{formatNumber n}}', { n: 1234.5 })).toBe('1.234,50');
    expect(render('{{formatNumber n 3}}', { n: '1234.5678' })).toBe('1.234,568');
    expect(render('{{formatNumber n 0}}', { n: 2.5 })).toBe('3');
    expect(render('{{formatNumber n}}', { n: '-0.001' })).toBe('0,00');
    expect(render('{{formatNumber n}}', { n: 1234.5 }, {}, US)).toBe('1,234.50');
    expect(render('[{{formatNumber missing}}]')).toBe('[]');
  });

  it('formatMoney: list currency by default, exact for decimal strings', () => {
    expect(render('{{formatMoney total}}', { total: '1234.5' })).toBe(`1.234,50${NBSP}RON`);
    // 17 integer digits: a float would print ...568,00; the string is formatted exactly.
    expect(render('{{formatMoney total}}', { total: '12345678901234567.895' })).toBe(
      `12.345.678.901.234.567,90${NBSP}RON`,
    );
    // CLDR's Romanian data writes the code for EUR, too.
    expect(render('{{formatMoney total "EUR"}}', { total: 0.3 })).toBe(`0,30${NBSP}EUR`);
    expect(render('{{formatMoney total}}', { total: -1234.5 }, {}, US)).toBe('-$1,234.50');
  });

  describe('formatDate (Europe/Bucharest: +02 → +03 at 2026-03-29 01:00Z, back at 2026-10-25 01:00Z)', () => {
    it.each([
      // 00:30Z is before the switch: +02 → 02:30 local.
      ['2026-03-29T00:30:00Z', 'yyyy-MM-dd HH:mm', '2026-03-29 02:30'],
      // 01:30Z is after the switch (03:00 local became 04:00): +03 → 04:30 local.
      ['2026-03-29T01:30:00Z', 'yyyy-MM-dd HH:mm', '2026-03-29 04:30'],
      // Autumn: 03:30 local happens twice, first at +03 then at +02.
      ['2026-10-25T00:30:00Z', 'HH:mm XXX', '03:30 +03:00'],
      ['2026-10-25T01:30:00Z', 'HH:mm XXX', '03:30 +02:00'],
      // 22:30Z Sunday is 01:30 Monday in Bucharest: the local day and ISO week change.
      ['2026-03-29T22:30:00Z', undefined, '2026-03-30'],
      ['2026-03-29T22:30:00Z', "RRRR-'W'II EEEE", '2026-W14 luni'],
      // Offsets in the input are honoured: 10:00+05:00 = 05:00Z = 08:00 at +03.
      ['2026-03-29T10:00:00+05:00', 'HH:mm', '08:00'],
      // No zone in the input: a wall-clock time in the list's zone; a date stays that date.
      ['2026-03-29T10:00:00', 'HH:mm XXX', '10:00 +03:00'],
      ['2026-03-29', 'yyyy-MM-dd', '2026-03-29'],
      // Month and day names in the list's locale.
      ['2026-03-29T01:30:00Z', 'd MMMM yyyy, EEEE', '29 martie 2026, duminică'],
    ])('%s with %s → %s', (value, pattern, expected) => {
      const tpl = pattern === undefined ? '{{formatDate d}}' : '{{formatDate d p}}';
      expect(render(tpl, { d: value, p: pattern })).toBe(expected);
    });

    it('takes epoch milliseconds and renders a date-only value on its own day in any zone', () => {
      expect(render('{{formatDate ms "yyyy-MM-dd HH:mm"}}', { ms: Date.UTC(2026, 2, 29, 1, 30) })).toBe(
        '2026-03-29 04:30',
      );
      expect(render('{{formatDate d}}', { d: '2026-03-29' }, {}, US)).toBe('2026-03-29');
      expect(render('{{formatDate d "MMMM d, yyyy h:mm a"}}', { d: '2026-03-29T01:30:00Z' }, {}, US)).toBe(
        'March 28, 2026 9:30 PM',
      );
    });
  });

  it.each([
    ['{{#if (eq status "paid")}}yes{{else}}no{{/if}}', { status: 'paid' }, 'yes'],
    ['{{#if (eq n 3)}}yes{{else}}no{{/if}}', { n: '3' }, 'no'],
    ['{{#if (ne status "paid")}}yes{{else}}no{{/if}}', { status: 'due' }, 'yes'],
    ['{{#if (lt n 10)}}yes{{else}}no{{/if}}', { n: 9.5 }, 'yes'],
    ['{{#if (lt n 10)}}yes{{else}}no{{/if}}', { n: '10.5' }, 'no'],
    ['{{#if (lte n 10)}}yes{{else}}no{{/if}}', { n: 10 }, 'yes'],
    ['{{#if (gt a b)}}yes{{else}}no{{/if}}', { a: 'b', b: 'a' }, 'yes'],
    ['{{#if (gt n "x")}}yes{{else}}no{{/if}}', { n: 5 }, 'no'],
    ['{{#if (gte n 10)}}yes{{else}}no{{/if}}', { n: 10 }, 'yes'],
    ['{{#if (and a b c)}}yes{{else}}no{{/if}}', { a: 1, b: 'x', c: [] }, 'no'],
    ['{{#if (or a b)}}yes{{else}}no{{/if}}', { a: 0, b: 'x' }, 'yes'],
    ['{{#if (not a)}}yes{{else}}no{{/if}}', { a: '' }, 'yes'],
    [
      '{{#unless (and (gt total 100) (eq country "RO"))}}shipping{{/unless}}',
      { total: 50, country: 'RO' },
      'shipping',
    ],
  ])('comparison %s with %j → %s', (content, params, expected) => {
    expect(render(content, params)).toBe(expected);
  });

  it('default, upper, lower, json', () => {
    expect(render('Hi {{default name "there"}}!', {})).toBe('Hi there!');
    expect(render('Hi {{default name "there"}}!', { name: '' })).toBe('Hi there!');
    expect(render('Hi {{default name "there"}}!', { name: 'Ana' })).toBe('Hi Ana!');
    expect(render('{{upper s}} {{lower s}}', { s: 'Ştefan Ţuţea' })).toBe('ŞTEFAN ŢUŢEA ştefan ţuţea');
    expect(render('{{lower s}}', { s: 'DİYARBAKIR' }, {}, { ...RO, locale: 'tr-TR' })).toBe('diyarbakır');
    expect(render('{{json o}}', { o: { a: '<b>', n: [1] } })).toBe(
      '{&quot;a&quot;:&quot;&lt;b&gt;&quot;,&quot;n&quot;:[1]}',
    );
    expect(render('{{json o}}', { o: { a: '<b>' } }, { contentType: 'text' })).toBe('{"a":"<b>"}');
  });

  it('reads the list per render, not from shared state', () => {
    const t = template('{{formatMoney 5}}');
    expect(shared.render({ template: t, params: {}, list: RO }).content).toBe(`5,00${NBSP}RON`);
    expect(shared.render({ template: t, params: {}, list: US }).content).toBe('$5.00');
  });
});

describe('cache', () => {
  it('compiles a version once', () => {
    const r = new TemplateRenderer();
    const t = template('Hi {{name}}', { props: { subject: 'For {{name}}', static: 'no mustache' } });
    expect(r.render({ template: t, params: { name: 'A' }, list: RO }).props).toEqual({
      subject: 'For A',
      static: 'no mustache',
    });
    expect(r.render({ template: t, params: { name: 'B' }, list: RO }).content).toBe('Hi B');
    expect(r.cacheStats()).toMatchObject({ entries: 1, compiles: 2, hits: 1, misses: 1 });
  });

  it('replaces the cached entry as soon as a new version is asked for', () => {
    const r = new TemplateRenderer();
    const v1 = template('one {{x}}');
    const v2 = { ...v1, version: 'v2', content: 'two {{x}}' };
    expect(r.render({ template: v1, params: { x: 1 }, list: RO }).content).toBe('one 1');
    expect(r.render({ template: v2, params: { x: 1 }, list: RO }).content).toBe('two 1');
    expect(r.cacheStats()).toMatchObject({ entries: 1, compiles: 2, bytes: Buffer.byteLength('two {{x}}') });
    // A broken new version still evicts the old one.
    const v3 = { ...v1, version: 'v3', content: '{{#if x}}' };
    renderError({ template: v3 }, r);
    expect(r.cacheStats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('keeps accounts apart', () => {
    const r = new TemplateRenderer();
    const a = template('A', { templateId: 'welcome', accountId: 'a' });
    const b = template('B', { templateId: 'welcome', accountId: 'b' });
    expect(r.render({ template: a, params: {}, list: RO }).content).toBe('A');
    expect(r.render({ template: b, params: {}, list: RO }).content).toBe('B');
    expect(r.render({ template: a, params: {}, list: RO }).content).toBe('A');
    expect(r.cacheStats()).toMatchObject({ entries: 2, compiles: 2 });
  });

  it('evicts the least recently used entry past maxEntries', () => {
    const r = new TemplateRenderer({ maxEntries: 2 });
    const [t1, t2, t3] = [template('1{{x}}'), template('2{{x}}'), template('3{{x}}')];
    const go = (t: StoredTemplate) => r.render({ template: t, params: {}, list: RO });
    go(t1);
    go(t2);
    go(t1); // t1 is now the most recent, t2 the least
    go(t3); // evicts t2
    expect(r.cacheStats()).toMatchObject({ entries: 2, compiles: 3, evictions: 1 });
    go(t1);
    expect(r.cacheStats().compiles).toBe(3);
    go(t2);
    expect(r.cacheStats().compiles).toBe(4);
  });

  it('evicts by total template bytes and does not cache a template larger than the bound', () => {
    const r = new TemplateRenderer({ maxBytes: 25 });
    const go = (t: StoredTemplate) => r.render({ template: t, params: {}, list: RO });
    go(template('a'.repeat(10) + '{{x}}')); // 15 bytes
    go(template('b'.repeat(5) + '{{x}}')); // 10 bytes: 25 in all
    expect(r.cacheStats()).toMatchObject({ entries: 2, bytes: 25 });
    go(template('c'.repeat(6) + '{{x}}')); // 11 bytes: the 15-byte entry goes
    expect(r.cacheStats()).toMatchObject({ entries: 2, bytes: 21, evictions: 1 });
    go(template('d'.repeat(30)));
    expect(r.cacheStats()).toMatchObject({ entries: 2, bytes: 21 });
  });
});

describe('errors', () => {
  it('reports an unclosed block with line and column', () => {
    const err = renderError({ template: template('Hello {{name}},\n{{#if x}}paid') });
    expect(err.code).toBe(17007);
    expect(err.reason).toBe(
      'Parse error (line 2, column 14): unexpected end of template (is a {{#block}} not closed?)',
    );
    expect(err.message).toBe(`The template could not be rendered: ${err.reason}`);
  });

  it('reports a mismatched block and other parse errors with line and column', () => {
    expect(renderError({ template: template('Hi\n  {{#each items}}\n{{/if}}') }).reason).toBe(
      "each doesn't match if (line 2, column 6)",
    );
    expect(renderError({ template: template('a\n{{foo bar=}}') }).reason).toMatch(
      /^Parse error \(line 2, column 11\): Expecting .*got 'CLOSE'$/,
    );
  });

  it('names the props field whose template is broken', () => {
    const err = renderError({ template: template('ok', { props: { mail: { subject: 'Hi {{name' } } }) });
    expect(err.reason).toMatch(/^props\.mail\.subject: Parse error \(line 1, column \d+\)/);
  });

  it('fails on partials: none are registered', () => {
    expect(renderError({ template: template('{{> footer}}') }).reason).toBe(
      'The partial footer could not be found',
    );
    // Inline partials are part of the template itself and work.
    expect(render('{{#*inline "f"}}[{{x}}]{{/inline}}{{> f}}', { x: 1 })).toBe('[1]');
  });

  it('surfaces helper failures at render time with the helper name', () => {
    const t = template('Total: {{formatNumber amount}}');
    expect(renderError({ template: t, params: { amount: 'abc' } }).reason).toBe(
      'formatNumber: "abc" is not a number',
    );
    expect(renderError({ template: template('{{formatNumber 1 "x"}}') }).reason).toBe(
      'formatNumber: decimals must be an integer from 0 to 20, got "x"',
    );
    expect(renderError({ template: template('{{formatDate d}}'), params: { d: '2026-02-30' } }).reason).toBe(
      'formatDate: "2026-02-30" is not a valid date',
    );
    expect(
      renderError({ template: template('{{formatDate d "dd.MM.YYYY"}}'), params: { d: '2026-01-01' } })
        .reason,
    ).toMatch(/^formatDate: use yyyy for the year/);
    expect(renderError({ template: template('{{formatMoney 1 "XX"}}') }).reason).toMatch(
      /^formatMoney: .*currency/i,
    );
    expect(renderError({ template: template('{{nope 1}}') }).reason).toBe('Missing helper: "nope"');
  });

  it('rejects templates over the size limit', () => {
    const err = renderError({ template: template('x'.repeat(MAX_TEMPLATE_BYTES + 1)) });
    expect(err.reason).toMatch(/over the 524288 byte limit/);
  });

  it('rejects params too deep or too large with ParamsTooLargeError', () => {
    let deep: Record<string, unknown> = { v: 1 };
    for (let i = 0; i < MAX_PARAMS_DEPTH; i++) deep = { deep };
    expect(() => shared.render({ template: template('x'), params: deep, list: RO })).toThrow(
      ParamsTooLargeError,
    );
    const big = { s: 'x'.repeat(300 * 1024) };
    expect(() => shared.render({ template: template('x'), params: big, list: RO })).toThrow(
      /over the 262144 byte limit/,
    );
  });
});

describe('security', () => {
  const RCE = (code: string) =>
    '{{#with "s" as |string|}}{{#with "e"}}{{#with split as |conslist|}}{{this.pop}}' +
    '{{this.push (lookup string.sub "constructor")}}{{this.pop}}{{#with string.split as |codelist|}}' +
    `{{this.pop}}{{this.push "${code}"}}{{this.pop}}{{#each conslist}}` +
    '{{#with (string.sub.apply 0 codelist)}}{{this}}{{/with}}{{/each}}{{/with}}{{/with}}{{/with}}{{/with}}';

  // [payload, expected output]: prototype members are not own properties, so they resolve to nothing.
  const payloads: [string, string][] = [
    ['{{constructor}}', ''],
    ['{{constructor.constructor}}', ''],
    ['{{constructor.constructor.name}}', ''],
    ['{{#with "s" as |string|}}{{#with string.constructor as |c|}}{{c.name}}{{/with}}{{/with}}', ''],
    [RCE("return process.mainModule.require('child_process').execSync('id');"), ''],
    [RCE('globalThis.hbsPwned = true; return 1;'), ''],
    ['{{lookup (lookup this "constructor") "prototype"}}', ''],
    ['{{__proto__}}', ''],
    ['{{__proto__.polluted}}', ''],
    ['{{this.__defineGetter__}}', ''],
    ['{{#with this as |t|}}{{t.__lookupGetter__}}{{t.constructor.name}}{{/with}}', ''],
    // Only the ordinary key survives sanitising; `a` itself is left without its "__proto__" key.
    ['{{#each this}}{{@key}}{{/each}}', 'a'],
  ];
  const pollution = JSON.parse(
    '{"__proto__":{"polluted":"yes"},"constructor":{"name":"x"},"a":{"__proto__":{"b":1}}}',
  );

  it.each(payloads.flatMap(([p, out]) => [[p, 'html', out] as const, [p, 'text', out] as const]))(
    '%s (%s) renders %j',
    (payload, contentType, expected) => {
      const output = render(payload, pollution, { contentType });
      expect(output).toBe(expected);
      expect(output).not.toContain('uid=');
      expect((globalThis as Record<string, unknown>).hbsPwned).toBeUndefined();
    },
  );

  it('drops __proto__, constructor and prototype keys from params, and does not pollute later renders', () => {
    const params = JSON.parse('{"__proto__":{"polluted":"yes"}}');
    expect(render('{{#each this}}{{@key}}{{/each}}', params)).toBe('');
    expect(render('[{{#each a}}{{@key}}={{this}};{{/each}}]', pollution)).toBe('[]');
    expect(render('{{polluted}}', {})).toBe('');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not call functions found in params', () => {
    let called = false;
    const fn = () => {
      called = true;
      return 'called';
    };
    expect(render('[{{fn}}][{{#with o}}{{g}}{{/with}}]', { fn, o: { g: fn } })).toBe('[][]');
    expect(called).toBe(false);
  });

  it('keeps rendering normally after the payloads', () => {
    expect(
      render('{{#each items}}{{@index}}:{{name}} {{/each}}', { items: [{ name: 'a' }, { name: 'b' }] }),
    ).toBe('0:a 1:b ');
    expect(render('{{lookup o "k"}}', { o: { k: 'v' } })).toBe('v');
  });

  it('{{log}} writes nothing and renders nothing', () => {
    expect(render('[{{log "hello" level="error"}}]')).toBe('[]');
  });
});

describe('checkParams (params rendered from their JSON text)', () => {
  it('takes plain JSON data as it is, with its JSON text', () => {
    const params = JSON.parse('{"a":1,"b":[{"c":"x"},null,true],"d":{"e":"ș"}}') as Record<string, unknown>;
    const checked = checkParams(params);
    expect(checked).toBe(params);
    expect(sanitizedJson(checked)).toBe(JSON.stringify(params));
    // Not marked as sanitized: an in-line render still copies it (and renders the same).
    expect(sanitizeParams(checked)).not.toBe(params);
    expect(shared.render({ template: template('{{a}} {{d.e}}'), params: checked, list: RO }).content).toBe(
      '1 ș',
    );
  });

  it('copies what is not plain JSON data, as sanitizeParams does', () => {
    const forbidden = JSON.parse('{"__proto__":{"polluted":"yes"},"a":{"constructor":1,"k":2}}') as object;
    const cases: unknown[] = [
      forbidden,
      { n: Number.NaN },
      { d: new Date(0) },
      { f: () => 1 },
      { holes: [1, , 3] }, // eslint-disable-line no-sparse-arrays
    ];
    for (const params of cases) {
      const checked = checkParams(params);
      expect(checked).not.toBe(params);
      expect(checked).toEqual(sanitizeParams(params));
      expect(JSON.parse(sanitizedJson(checked)!)).toEqual(JSON.parse(JSON.stringify(checked)));
    }
    expect(Object.keys(checkParams(forbidden))).toEqual(['a']);
    expect(sanitizedJson(checkParams(forbidden))).toBe('{"a":{"k":2}}');
  });

  it('rejects params too deep or too large with ParamsTooLargeError, as sanitizeParams does', () => {
    let deep: Record<string, unknown> = { v: 1 };
    for (let i = 0; i < MAX_PARAMS_DEPTH; i++) deep = { deep };
    expect(() => checkParams(deep)).toThrow(`params are nested deeper than ${MAX_PARAMS_DEPTH} levels`);
    expect(() => checkParams({ s: 'x'.repeat(300 * 1024) })).toThrow(/over the 262144 byte limit/);
    let fits: Record<string, unknown> = { v: 1 };
    for (let i = 0; i < MAX_PARAMS_DEPTH - 1; i++) fits = { fits };
    expect(checkParams(fits)).toBe(fits);
  });
});
