import { Writable } from 'node:stream';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { chooseLogFormat, createLogger } from '../../shared/log.js';
import { requestLog } from '../../query-api/request-log.js';

/** LOG_FORMAT: a human line on a terminal, JSON otherwise (docs/operations.md "Logs"). */
describe('LOG_FORMAT', () => {
  it('defaults to auto and refuses anything but auto, json, pretty (naming the variable)', () => {
    expect(loadConfig({}).LOG_FORMAT).toBe('auto');
    for (const f of ['auto', 'json', 'pretty'] as const)
      expect(loadConfig({ LOG_FORMAT: f }).LOG_FORMAT).toBe(f);
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT: .*auto.*json.*pretty/);
  });

  it('auto is pretty on a terminal and JSON elsewhere; json and pretty are what they say', () => {
    expect(chooseLogFormat('auto', true)).toBe('pretty');
    expect(chooseLogFormat('auto', false)).toBe('json');
    expect(chooseLogFormat('auto', undefined)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });
});

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

/** One request through requestLog, answered by `handler`; the lines the logger wrote. */
async function oneRequest(level: string, format: 'json' | 'pretty', path: string, status = 200) {
  const { stream, lines } = sink();
  const app = express();
  app.use(requestLog(createLogger(level, stream, format)));
  app.get('/api/1.2/rest/:user_id/:api_key/:operation', (_req, res) => {
    res.locals.operation = 'automation.stats';
    res.status(status).json([]);
  });
  app.use('/dashboard', (_req, res) => void res.status(status).type('js').send('//'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((ok) => server.once('listening', ok));
  try {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    await res.text();
    // The line is written on 'finish', which may come a moment after the client has the answer.
    for (let i = 0; i < 50 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 20));
    return lines;
  } finally {
    server.close();
  }
}

describe('pretty log lines', () => {
  it('a request line: time, level, method, operation, status and ms; no path, no JSON', async () => {
    const lines = await oneRequest('info', 'pretty', '/api/1.2/rest/7/secret-key-123/automation.stats.json');
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET automation\.stats 200 \d+(\.\d)? ms\b/);
    expect(line).toMatch(/req_id=[0-9a-f-]{36}/);
    expect(line).not.toContain('secret-key-123');
    expect(line).not.toContain('{');
  });

  it('other lines: message then fields as key=value, an error with its stack below', () => {
    const { stream, lines } = sink();
    const log = createLogger('info', stream, 'pretty');
    log.warn({ topic: 'mailstats.events', lag: 3 }, 'consumer behind');
    log.error({ err: new Error('boom') }, 'write failed');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}consumer behind topic=mailstats\.events lag=3$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR write failed: Error: boom$/);
    expect(lines[2]).toMatch(/^\s+at /);
  });

  it('JSON stays JSON (LOG_FORMAT=json)', async () => {
    const lines = await oneRequest('info', 'json', '/api/1.2/rest/7/k/automation.stats.json');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      msg: 'request',
      operation: 'automation.stats',
      status: 200,
    });
  });
});

describe('static dashboard assets', () => {
  it('an asset answered successfully is a debug line, not info (a page load does not bury the banner)', async () => {
    expect(await oneRequest('info', 'json', '/dashboard/assets/index-abc.js')).toEqual([]);
    const debug = await oneRequest('debug', 'json', '/dashboard/assets/index-abc.js');
    expect(debug.map((l) => JSON.parse(l) as { level: number; msg: string })).toMatchObject([
      { level: 20, msg: 'request' },
    ]);
  });
  it('a failed asset request stays info', async () => {
    const lines = await oneRequest('info', 'json', '/dashboard/assets/missing.js', 404);
    expect(lines.map((l) => JSON.parse(l) as { level: number })).toMatchObject([{ level: 30 }]);
  });
});
