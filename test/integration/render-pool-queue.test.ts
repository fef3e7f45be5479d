import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemplateRenderError, type ListContext, type StoredTemplate } from '../../query-api/render/engine.js';
import { RenderPool } from '../../query-api/render/pool.js';

/**
 * A worker may hold one task queued behind a cheap one it runs (pool.ts QUEUE_BEHIND_MS): the answers
 * stay each task's own, in order, through compiles (a `miss` holds the task behind it in the worker), and a
 * task queued behind one the time limit ends is sent again, not failed.
 */
const RO: ListContext = { locale: 'ro-RO', timeZone: 'Europe/Bucharest', currency: 'RON' };

let seq = 0;
function template(content: string, over: Partial<StoredTemplate> = {}): StoredTemplate {
  return {
    templateId: `q${++seq}`,
    accountId: 'acc-q',
    version: 'v1',
    content,
    contentType: 'html',
    props: null,
    ...over,
  };
}

describe('RenderPool: a task queued behind another in a worker', () => {
  let pool: RenderPool;
  beforeAll(async () => {
    pool = new RenderPool({ size: 2 });
    await pool.ready();
  });
  afterAll(() => pool.close());

  it('answers each task with its own params, many in flight, across compiles of new versions', async () => {
    const templates = [template('a{{i}}'), template('b{{i}}'), template('c{{i}}')];
    // Known to be cheap first: tasks are queued behind a running one only then.
    for (const t of templates) await pool.render({ template: t, params: { i: -1 }, list: RO, tenant: 'u' });
    // 90 in flight: one user may fill at most half of the pool's queue (100).
    const jobs = Array.from({ length: 90 }, (_, i) => {
      const t = templates[i % 3]!;
      // Every 30th task a new version of its template: a compile (and a `miss`) amid queued tasks.
      const version = `w${Math.floor(i / 30)}`;
      return { template: { ...t, version, content: `${version}:${t.content}` }, params: { i }, list: RO };
    });
    const answers = await Promise.all(jobs.map((j) => pool.render({ ...j, tenant: 'u' })));
    expect(answers.map((a) => a.content)).toEqual(
      jobs.map((j) => j.template.content.replace('{{i}}', String(j.params.i))),
    );
    const other = await Promise.all(
      jobs.slice(0, 60).map((j) => pool.render({ ...j, tenant: `t${j.params.i % 4}` })),
    );
    expect(other.map((a) => a.content)).toEqual(
      jobs.slice(0, 60).map((j) => j.template.content.replace('{{i}}', String(j.params.i))),
    );
    expect(pool.stats()).toMatchObject({ busy: 0, queued: 0, killed: { time: 0, memory: 0, other: 0 } });
  }, 60_000);
});

describe('RenderPool: the task queued behind a render the time limit ends', () => {
  it('is sent again to the replacement worker and answers, and the runaway one answers 17007', async () => {
    const pool = new RenderPool({ size: 1, timeLimitMs: 200 });
    try {
      await pool.ready();
      // Cheap with a short list, runaway with a long one: the same version, so it is known as cheap.
      const loop = template(
        '{{#each items}}.{{#each @root.items}}{{#each @root.items}}{{#each @root.items}}{{/each}}{{/each}}{{/each}}{{/each}}',
      );
      // Twice: the first render's time includes the compile.
      for (let i = 0; i < 2; i++) {
        expect((await pool.render({ template: loop, params: { items: [1] }, list: RO })).content).toBe('.');
      }
      const items = Array.from({ length: 200 }, (_, i) => i);
      const runaway = pool.render({ template: loop, params: { items }, list: RO }).then(
        () => undefined,
        (e: Error) => e,
      );
      const behind = pool.render({ template: loop, params: { items: [1, 2] }, list: RO });
      // Sent to the worker at once, behind the running one: not waiting in the pool's queue.
      expect(pool.stats()).toMatchObject({ busy: 1, queued: 0 });
      const err = await runaway;
      expect(err).toBeInstanceOf(TemplateRenderError);
      expect(err!.message).toBe(
        'The template could not be rendered: rendering the template took longer than the 0.2 s limit',
      );
      expect((await behind).content).toBe('..');
      expect(pool.stats().killed.time).toBe(1);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
