import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, withLogContext } from '../../shared/log.js';

/** A logger writing into an array of parsed JSON lines. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('debug', stream), lines };
}

describe('log context (withLogContext)', () => {
  it("adds the request fields to each line, and one line's own fields do not leak into the next", async () => {
    const { log, lines } = capture();
    const fields = { req_id: 'r1' };
    withLogContext(fields, () => {
      log.info({ list_id: 7, template_id: 't1' }, 'first');
      log.info('second');
      log.warn({ reason: 'x' }, 'third');
      log.info('fourth');
    });
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l.msg)).toEqual(['first', 'second', 'third', 'fourth']);
    expect(lines.every((l) => l.req_id === 'r1')).toBe(true);
    expect(lines[0]).toMatchObject({ list_id: 7, template_id: 't1' });
    expect(lines[1]).not.toHaveProperty('list_id');
    expect(lines[1]).not.toHaveProperty('template_id');
    expect(lines[3]).not.toHaveProperty('reason');
    // The caller's context object is left as it was.
    expect(fields).toEqual({ req_id: 'r1' });
  });
});
