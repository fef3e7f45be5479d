import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonAnswer } from '../../query-api/api12/json-answer.js';
import { api12Route } from '../../query-api/api12/router.js';
import { encodeResponse } from '../../query-api/xmlrpc/codec.js';
import {
  ParamsTooLargeError,
  TemplateRenderError,
  TemplateRenderer,
  sanitizeParams,
  sanitizedJson,
  type ListContext,
  type StoredTemplate,
} from '../../query-api/render/engine.js';
import {
  MAX_BLOCK_DEPTH,
  MAX_MUSTACHES,
  MAX_SUBEXPRESSION_DEPTH,
  templateLimitProblem,
} from '../../shared/template-limits.js';
import { RenderBusyError, RenderPool } from '../../query-api/render/pool.js';

const RO: ListContext = { locale: 'ro-RO', timeZone: 'Europe/Bucharest', currency: 'RON' };
const NBSP = '\u00a0';

let seq = 0;
function template(content: string, over: Partial<StoredTemplate> = {}): StoredTemplate {
  return {
    templateId: `p${++seq}`,
    accountId: 'acc1',
    version: 'v1',
    content,
    contentType: 'html',
    props: null,
    ...over,
  };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('templateLimitProblem (the cheap checks)', () => {
  it('passes realistic templates', () => {
    const order =
      '<h1>Hi {{default first_name "there"}}</h1>{{#each items}}<tr><td>{{name}}</td><td>{{formatMoney total}}</td>' +
      '{{#if (and (gt quantity 1) (not gift))}}x{{quantity}}{{/if}}</tr>{{/each}}{{! a comment {{#if}} }}' +
      '{{!-- {{#each}} {{#each}} --}}{{#unless paid}}due{{^}}paid{{/unless}}\\{{literal}}';
    expect(templateLimitProblem(order)).toBeUndefined();
    expect(
      templateLimitProblem({ content: order, props: { subject: 'Order {{id}}', n: 1 } }),
    ).toBeUndefined();
  });

  it('refuses too many mustaches, counting props too', () => {
    expect(templateLimitProblem('{{a}}'.repeat(MAX_MUSTACHES))).toBeUndefined();
    expect(templateLimitProblem('{{a}}'.repeat(MAX_MUSTACHES + 1))).toBe(
      `the template has ${MAX_MUSTACHES + 1} mustaches ({{…}}), over the ${MAX_MUSTACHES} limit`,
    );
    expect(
      templateLimitProblem({ content: '{{a}}'.repeat(MAX_MUSTACHES), props: { subject: '{{b}}' } }),
    ).toMatch(/has 5001 mustaches/);
  });

  it('refuses deep block nesting, with where it happens', () => {
    const nest = (n: number) => '{{#if a}}'.repeat(n) + 'x' + '{{/if}}'.repeat(n);
    expect(templateLimitProblem(nest(MAX_BLOCK_DEPTH))).toBeUndefined();
    expect(templateLimitProblem('line one\n  ' + nest(5000))).toBe(
      `blocks are nested 101 deep (line 2, column ${3 + 9 * 100}), over the ${MAX_BLOCK_DEPTH} limit`,
    );
    // Siblings do not add up: depth is what is open at once.
    expect(templateLimitProblem('{{#if a}}x{{/if}}'.repeat(1000))).toBeUndefined();
    // {{^}} is an else; {{^x}} an inverse block; {{#each}}, {{#with}}, {{#*inline}} all nest.
    expect(templateLimitProblem('{{#if a}}{{^}}'.repeat(101) + '{{/if}}'.repeat(101))).toMatch(/nested 101/);
    expect(templateLimitProblem('{{^a}}'.repeat(101))).toMatch(/nested 101/);
    expect(templateLimitProblem('{{#each a}}{{#with b}}'.repeat(51))).toMatch(/nested 101/);
  });

  it('refuses deep subexpressions and names the props field', () => {
    const sub = (n: number) => `{{x ${'(not '.repeat(n)}a${')'.repeat(n)}}}`;
    expect(templateLimitProblem(sub(MAX_SUBEXPRESSION_DEPTH))).toBeUndefined();
    expect(templateLimitProblem(sub(MAX_SUBEXPRESSION_DEPTH + 1))).toMatch(
      /^subexpressions are nested 21 deep \(line 1, column 1\), over the 20 limit$/,
    );
    expect(templateLimitProblem({ content: 'ok', props: { mail: { subject: sub(30) } } })).toMatch(
      /^props\.mail\.subject: subexpressions are nested 21 deep/,
    );
  });

  it('refuses oversized content and props', () => {
    expect(templateLimitProblem('x'.repeat(512 * 1024 + 1))).toMatch(/over the 524288 byte limit/);
    expect(templateLimitProblem({ content: 'x', props: { s: 'y'.repeat(70_000) } })).toMatch(
      /^props are \d+ bytes of JSON, over the 65536 byte limit$/,
    );
  });

  it('is cheap: 512 KiB of {{a}} is refused in milliseconds', () => {
    const flood = '{{a}}'.repeat(104_857);
    const t0 = process.hrtime.bigint();
    expect(templateLimitProblem(flood)).toMatch(/104857 mustaches/);
    // A loose bound, for a linear scan: the engine took 15-44 s on this template.
    expect(Number(process.hrtime.bigint() - t0) / 1e6).toBeLessThan(1_000);
  });
});

describe('RenderPool', () => {
  let pool: RenderPool;
  beforeAll(async () => {
    pool = new RenderPool({ size: 2 });
    expect(pool.started()).toBe(false); // the workers load the engine asynchronously
    await pool.ready();
    expect(pool.started()).toBe(true);
  }, 120_000);
  afterAll(() => pool?.close());

  it('renders as the engine does: escaping, props, helpers with the list context', async () => {
    const t = template('<b>{{name}}</b> {{formatMoney total}} {{formatDate d "d MMMM yyyy"}}', {
      props: { subject: 'For {{name}} & co', n: 3 },
    });
    const input = {
      template: t,
      params: { name: 'Ana & <Ion>', total: '1234.5', d: '2026-11-02T10:15:00Z' },
      list: RO,
    };
    const expected = new TemplateRenderer().render(input);
    expect(expected.content).toBe(`<b>Ana &amp; &lt;Ion&gt;</b> 1.234,50${NBSP}RON 2 noiembrie 2026`);
    expect(await pool.render(input)).toEqual(expected);
    // Text templates are not escaped.
    const text = await pool.render({
      template: template('{{x}}', { contentType: 'text' }),
      params: { x: '<&>' },
      list: RO,
    });
    expect(text).toEqual({ content: '<&>', engine: 'handlebars', type: 'text', props: null });
  });

  it('keeps errors: line and column for syntax, helper names, params too large', async () => {
    const err = await rejection(
      pool.render({ template: template('Hi\n{{#if x}}open'), params: {}, list: RO }),
    );
    expect(err).toBeInstanceOf(TemplateRenderError);
    expect((err as TemplateRenderError).reason).toBe(
      'Parse error (line 2, column 14): unexpected end of template (is a {{#block}} not closed?)',
    );
    const helper = await rejection(
      pool.render({ template: template('{{formatNumber n}}'), params: { n: 'abc' }, list: RO }),
    );
    expect((helper as TemplateRenderError).reason).toBe('formatNumber: "abc" is not a number');
    const big = await rejection(
      pool.render({ template: template('x'), params: { s: 'x'.repeat(300 * 1024) }, list: RO }),
    );
    expect(big).toBeInstanceOf(ParamsTooLargeError);
  });

  it('keeps prototype access closed in the worker', async () => {
    const out = await pool.render({
      template: template(
        '{{constructor.name}}|{{__proto__}}|{{#with this as |t|}}{{t.__lookupGetter__}}{{/with}}',
      ),
      params: JSON.parse('{"__proto__":{"polluted":"yes"},"a":1}') as Record<string, unknown>,
      list: RO,
    });
    expect(out.content).toBe('||');
  });

  it('refuses what fails the cheap checks without using a worker', async () => {
    const before = pool.stats();
    const err = await rejection(
      pool.render({ template: template('{{#if a}}'.repeat(5000)), params: {}, list: RO }),
    );
    expect(err).toBeInstanceOf(TemplateRenderError);
    expect(err.message).toMatch(/^The template could not be rendered: blocks are nested 101 deep/);
    const after = pool.stats();
    expect(after.cache.misses).toBe(before.cache.misses);
    expect(after.refusedVersions).toBe(before.refusedVersions + 1);
  });

  it('compiles a version once, and a new version once more', async () => {
    const v1 = template('one {{x}}', { props: { subject: 's {{x}}' } });
    const before = pool.stats().cache;
    for (const x of [1, 2, 3]) {
      expect((await pool.render({ template: v1, params: { x }, list: RO })).content).toBe(`one ${x}`);
    }
    const mid = pool.stats().cache;
    expect(mid.misses - before.misses).toBe(1);
    expect(mid.hits - before.hits).toBe(2);
    const v2 = { ...v1, version: 'v2', content: 'two {{x}}' };
    expect((await pool.render({ template: v2, params: { x: 4 }, list: RO })).content).toBe('two 4');
    expect((await pool.render({ template: v2, params: { x: 5 }, list: RO })).content).toBe('two 5');
    const after = pool.stats().cache;
    expect(after.misses - mid.misses).toBe(1);
    expect(after.hits - mid.hits).toBe(1);
    // The old version is gone from the cache: asking for it again compiles it again.
    expect((await pool.render({ template: v1, params: { x: 6 }, list: RO })).content).toBe('one 6');
    expect(pool.stats().cache.misses - after.misses).toBe(1);
  });

  it('ends a render that runs past the time limit, answers 17007, and replaces the worker', async () => {
    // One dot per outer item: the 200⁴ inner iterations burn CPU without growing the output, so only the
    // time limit can end it (a dot per inner iteration hit the 64 MiB limit first on a loaded machine).
    const loop = template(
      '{{#each items}}.{{#each @root.items}}{{#each @root.items}}{{#each @root.items}}{{/each}}{{/each}}{{/each}}{{/each}}',
    );
    const items = Array.from({ length: 200 }, (_, i) => i);
    const before = pool.stats();
    const t0 = Date.now();
    const err = await rejection(pool.render({ template: loop, params: { items }, list: RO }));
    expect(err).toBeInstanceOf(TemplateRenderError);
    expect(err.message).toBe(
      'The template could not be rendered: rendering the template took longer than the 1 s limit',
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    expect(pool.stats().killed.time).toBe(before.killed.time + 1);
    // Depends on params: the same version still renders with a small list.
    const small = { template: loop, params: { items: [1, 2] }, list: RO };
    const expected = new TemplateRenderer().render(small).content;
    expect(expected).toMatch(/^\.+$/);
    expect((await pool.render(small)).content).toBe(expected);
    // Both workers serve again (the replaced one included).
    await pool.ready();
    const many = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        pool.render({ template: template('n{{i}}'), params: { i }, list: RO }),
      ),
    );
    expect(many.map((r) => r.content)).toEqual(Array.from({ length: 8 }, (_, i) => `n${i}`));
    expect(pool.stats().workers).toBe(2);
  }, 60_000);
});

describe('RenderPool: memory', () => {
  it('ends a render that needs more than the memory limit, answers 17007, and replaces the worker', async () => {
    // A generous time limit, so that it is the heap cap that ends the render even on a busy machine
    // (V8 collects garbage harder and harder as the heap nears its cap before giving up).
    const pool = new RenderPool({ size: 1, timeLimitMs: 60_000 });
    try {
      await pool.ready();
      // Every iteration makes a new 200 KiB string (JSON of s) kept in the output: 10,000 × 200 KiB.
      const hog = template('{{#each items}}{{#each @root.items}}{{{json @root.s}}}{{/each}}{{/each}}');
      const params = { items: Array.from({ length: 100 }, (_, i) => i), s: 'x'.repeat(200 * 1024) };
      const err = await rejection(pool.render({ template: hog, params, list: RO }));
      expect(err).toBeInstanceOf(TemplateRenderError);
      expect(err.message).toBe(
        'The template could not be rendered: rendering the template needed more than 64 MiB of memory',
      );
      expect(pool.stats().killed).toEqual({ time: 0, memory: 1, other: 0 });
      // The same template with params that fit still renders, in the replacement worker.
      await pool.ready();
      const fits = { ...params, items: [1, 2], s: 'ok' };
      expect((await pool.render({ template: hog, params: fits, list: RO })).content).toBe('"ok"'.repeat(4));
    } finally {
      await pool.close();
    }
  }, 120_000);
});

describe('RenderPool: a version too heavy to compile', () => {
  it('is ended while compiling and refused from then on without a worker', async () => {
    // A 300 ms budget: 4,900 mustaches (under the cheap limit) take about 1 s to compile.
    const pool = new RenderPool({ size: 1, timeLimitMs: 300 });
    try {
      await pool.ready();
      const heavy = template('<p>{{a}}</p>'.repeat(4900));
      const first = await rejection(pool.render({ template: heavy, params: {}, list: RO }));
      expect(first.message).toBe(
        'The template could not be rendered: compiling the template took longer than the 0.3 s limit',
      );
      expect(pool.stats().killed.time).toBe(1);
      const again = await rejection(pool.render({ template: heavy, params: {}, list: RO }));
      expect(again.message).toBe(first.message);
      expect(pool.stats().killed.time).toBe(1);
      // A new version is tried again.
      await pool.ready();
      const light = { ...heavy, version: 'v2', content: 'light' };
      expect((await pool.render({ template: light, params: {}, list: RO })).content).toBe('light');
    } finally {
      await pool.close();
    }
  }, 120_000);
});

describe('RenderPool: the answer as JSON bytes (the REST route sends them as they are)', () => {
  let pool: RenderPool;
  beforeAll(async () => {
    pool = new RenderPool({ size: 1 });
    await pool.ready();
  }, 120_000);
  afterAll(() => pool?.close());

  it('renderAnswer() gives the bytes of JSON.stringify of what the engine renders, and the object', async () => {
    const input = {
      template: template('<p>{{name}} — {{formatMoney total}}</p>', {
        props: { subject: 'Pentru {{name}} "ș"', n: 3, list: ['{{name}}', null] },
      }),
      params: { name: 'Ană <&> \u2028 \ud83d\ude00', total: '12.5' },
      list: RO,
    };
    const expected = new TemplateRenderer().render(input);
    const answer = await pool.renderAnswer(input);
    expect(answer).toBeInstanceOf(JsonAnswer);
    expect(answer.bytes.equals(Buffer.from(JSON.stringify(expected), 'utf8'))).toBe(true);
    expect(answer.value()).toEqual(expected);
    expect(JSON.stringify(answer)).toBe(JSON.stringify(expected));
    // XML-RPC encodes the object form, through toJSON().
    expect(encodeResponse(answer)).toBe(encodeResponse(expected));
    expect(await pool.render(input)).toEqual(expected);
  });

  it('sanitizes params once: a second sanitizeParams() is the same object, its JSON text is kept', () => {
    const raw = JSON.parse('{"__proto__":{"x":1},"a":[1,{"constructor":2,"b":"c"}],"n":1}') as Record<
      string,
      unknown
    >;
    const once = sanitizeParams(raw);
    expect(once).not.toBe(raw);
    expect(sanitizedJson(once)).toBe('{"a":[1,{"b":"c"}],"n":1}');
    expect(sanitizeParams(once)).toBe(once);
    // Anything else is not taken as sanitized.
    expect(sanitizedJson(raw)).toBeUndefined();
    expect(sanitizeParams({ ...once })).not.toBe(once);
  });

  it('keeps prototype keys out when the worker parses the params text', async () => {
    const params = sanitizeParams(JSON.parse('{"__proto__":{"polluted":"yes"},"a":1}'));
    const out = await pool.render({
      template: template('{{a}}|{{polluted}}|{{__proto__.polluted}}'),
      params,
      list: RO,
    });
    expect(out.content).toBe('1||');
  });
});

describe('api12Route: a JsonAnswer is sent byte for byte as res.json would send its object', () => {
  it('same status, headers and body as res.json, for GET and HEAD', async () => {
    const value = { content: '<p>ș "q" \u2028 😀</p>', engine: 'handlebars', type: 'html', props: { n: 1 } };
    const app = express();
    app.set('etag', false);
    app.all(
      '/api/:userId/:apiKey/:operation',
      api12Route({
        'plain.op': () => Promise.resolve(value),
        'bytes.op': () => Promise.resolve(JsonAnswer.from(value)),
        'worker.op': () => Promise.resolve(JsonAnswer.of(new TextEncoder().encode(JSON.stringify(value)))),
      }),
    );
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/1/k`;
    try {
      const get = async (op: string, method = 'GET') => {
        const res = await fetch(`${base}/${op}.json`, { method });
        return {
          status: res.status,
          type: res.headers.get('content-type'),
          length: res.headers.get('content-length'),
          body: Buffer.from(await res.arrayBuffer()).toString('hex'),
        };
      };
      const plain = await get('plain.op');
      expect(plain.type).toBe('application/json; charset=utf-8');
      expect(await get('bytes.op')).toEqual(plain);
      expect(await get('worker.op')).toEqual(plain);
      const head = await get('plain.op', 'HEAD');
      expect(head.body).toBe('');
      expect(await get('bytes.op', 'HEAD')).toEqual(head);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('RenderPool: queue bounds and per-user shares (docs/api.md, render limits)', () => {
  /**
   * ≥ 1 s on a worker: a render loop the time limit ends (17007). It writes nothing, so it is the CPU
   * limit that ends it, never the memory limit (which could end it sooner).
   */
  const busy = () =>
    template(
      '{{#each items}}{{#each @root.items}}{{#each @root.items}}{{#each @root.items}}{{/each}}{{/each}}{{/each}}{{/each}}',
    );
  const items = Array.from({ length: 200 }, (_, i) => i);
  const heavy = (user: string) => ({ template: busy(), params: { items }, list: RO, tenant: user });
  const light = (user: string, i = 0) => ({
    template: template('light {{i}}'),
    params: { i },
    list: RO,
    tenant: user,
  });
  const settle = (p: Promise<unknown>) =>
    p.then(
      (v) => ({ ok: true as const, v, at: performance.now() }),
      (e: Error) => ({ ok: false as const, e, at: performance.now() }),
    );

  it('one user holds at most half of the workers; another user is served at once', async () => {
    const pool = new RenderPool({ size: 2 });
    try {
      await pool.ready();
      const a = [1, 2, 3].map(() => settle(pool.render(heavy('a'))));
      // Two workers, but user a may hold only one: one runs, two wait although a worker is free.
      expect(pool.stats()).toMatchObject({ busy: 1, queued: 2 });
      const b = await settle(pool.render(light('b')));
      expect(b.ok && (b.v as { content: string }).content).toBe('light 0');
      const [a1] = await Promise.all(a);
      // b did not wait for a's first render (which the 1 s limit ends).
      expect(b.at).toBeLessThan(a1!.at);
      expect(a1!.ok).toBe(false);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('takes the next task round-robin across users, not first-come', async () => {
    const pool = new RenderPool({ size: 2 });
    try {
      await pool.ready();
      const order: string[] = [];
      const track = (p: Promise<unknown>, name: string) => p.then(() => order.push(name));
      // a holds one worker with a heavy task; b queues four light ones, then c one.
      const a = settle(pool.render(heavy('a')));
      const bs = [0, 1, 2, 3].map((i) => track(pool.render(light('b', i)), `b${i}`));
      const c = track(pool.render(light('c')), 'c');
      await Promise.all([...bs, c]);
      // b's cap is one worker, so b and c alternate on the free one: c is not last behind all of b.
      expect(order.indexOf('c')).toBeLessThan(order.indexOf('b3'));
      await a;
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a full queue refuses at once with reason queue_full; another user still finds room', async () => {
    const pool = new RenderPool({ size: 2, queueLength: 4, queueDeadlineMs: 60_000 });
    try {
      await pool.ready();
      // a: one running, then at most half the queue (2) waiting; the next is refused.
      const a = [1, 2, 3].map(() => settle(pool.render(heavy('a'))));
      const refused = await settle(pool.render(heavy('a')));
      expect(refused.ok).toBe(false);
      const err = (refused as { e: Error }).e;
      expect(err).toBeInstanceOf(RenderBusyError);
      expect((err as RenderBusyError).reason).toBe('queue_full');
      expect((err as RenderBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(pool.stats().rejected).toEqual({ queue_full: 1, deadline: 0 });
      const b = await settle(pool.render(light('b')));
      expect(b.ok).toBe(true);
      await pool.close();
      await Promise.all(a);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a task that waited past the queue deadline is refused with reason deadline', async () => {
    const pool = new RenderPool({ size: 2, queueDeadlineMs: 200 });
    try {
      await pool.ready();
      const first = settle(pool.render(heavy('a')));
      const second = await settle(pool.render(heavy('a')));
      expect(second.ok).toBe(false);
      const err = (second as { e: Error }).e as RenderBusyError;
      expect(err).toBeInstanceOf(RenderBusyError);
      expect(err.reason).toBe('deadline');
      expect(err.message).toBe('Service unavailable: render workers busy');
      // Refused while the first still ran (it runs ≥ 1 s): the deadline, not the first's end, decided.
      const done = await first;
      expect(second.at).toBeLessThan(done.at);
      expect(pool.stats().rejected).toEqual({ queue_full: 0, deadline: 1 });
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a render waits for the replacement of a killed worker past the queue deadline, never refused as busy', async () => {
    // One worker, a 20 ms deadline: a fresh worker takes far longer than that to load the engine, so the
    // next render waits on the replacement longer than the deadline. The pool's own replacement is not load.
    const pool = new RenderPool({ size: 1, timeLimitMs: 200, queueDeadlineMs: 20 });
    try {
      await pool.ready();
      const killed = await rejection(pool.render(heavy('a')));
      expect(killed).toBeInstanceOf(TemplateRenderError);
      expect(pool.stats().killed.time).toBe(1);
      const next = await settle(pool.render(light('a', 7)));
      expect(next.ok, next.ok ? '' : (next as { e: Error }).e.message).toBe(true);
      expect((next as { v: { content: string } }).v.content).toBe('light 7');
      expect(pool.stats().rejected).toEqual({ queue_full: 0, deadline: 0 });
    } finally {
      await pool.close();
    }
  }, 60_000);
});
