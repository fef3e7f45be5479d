// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../shared/clickhouse/migrations.js';
import { metricValue, scrape } from '../support/metrics.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/** /healthz, /readyz, /metrics and /docs of the real service (docs/operations.md "Endpoints"). */
const USER = 51;
const KEY = 'ops-secret-key-51';
const LIST = 61;
const STATS = `/api/1.2/rest/${USER}/${KEY}/automation.stats.json`;
const RENDER = `/api/1.2/rest/${USER}/${KEY}/transactional.templateRender.json`;
const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

const activity = (i: number) => ({
  type: 'send',
  event_id: `ops-${i}`,
  list_id: LIST,
  workflow_id: 1,
  subscriber_id: i,
  timestamp: Date.now() - 3_600_000,
});

describe('operations endpoints', () => {
  let svc: TestService;
  const get = async (path: string) => {
    const res = await fetch(svc.httpUrl + path);
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  beforeAll(async () => {
    svc = await startTestService();
    const catalog = [
      ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }),
      { type: 'smtp_account', account_id: 'ops-acc', list_id: LIST, active: true, is_default: true },
      { type: 'template', template_id: 'ops-tpl', account_id: 'ops-acc', content: 'Hi {{name}}' },
    ];
    expect((await svc.ingest(catalog)).body).toEqual({ accepted: catalog.length, rejected: [] });
    // The service answers before its render workers have started; the cache counts below assume they have
    // (until then a template's own worker may be missing and another one compiles it too).
    for (let t = Date.now(); (await get('/readyz')).status !== 200;) {
      if (Date.now() - t > 60_000)
        throw new Error(`/readyz not 200 within 60 s: ${(await get('/readyz')).text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(() => svc?.stop());

  it('/healthz (and the old /health) answer 200; /readyz is 200 with every check ok', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200, text: '{"ok":true}' });
    expect(await get('/health')).toMatchObject({ status: 200, text: '{"ok":true}' });
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    // Without KAFKA_BROKERS there is no consumer, so no consumer check.
    expect(JSON.parse(ready.text)).toEqual({
      ready: true,
      checks: { clickhouse: 'ok', migrations: 'ok', render_workers: 'ok' },
    });
  });

  it('/readyz is 503 naming ClickHouse while it fails, /healthz stays 200, and it recovers', async () => {
    const errorsBefore = metricValue(await scrape(svc.httpUrl), 'mailstats_clickhouse_errors_total');
    svc.db.faultInjector = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:8123'));
    try {
      const ready = await get('/readyz');
      expect(ready.status).toBe(503);
      const body = JSON.parse(ready.text);
      expect(body.ready).toBe(false);
      // Short, without the error's text (issue 19: /readyz answers anyone; the text can name hosts).
      expect(body.reason).toContain('clickhouse: not answering');
      expect(body.reason).not.toContain('127.0.0.1');
      expect(body.reason).toContain('migrations: not checked');
      expect((await get('/healthz')).status).toBe(200);
    } finally {
      svc.db.faultInjector = undefined;
    }
    // The failed readiness query counts as a ClickHouse error (the catalog poller may add more).
    expect(metricValue(await scrape(svc.httpUrl), 'mailstats_clickhouse_errors_total')).toBeGreaterThan(
      errorsBefore,
    );
    expect((await get('/readyz')).status).toBe(200);
  });

  it('/readyz is 503 naming the migrations while the latest one is not recorded', async () => {
    await svc.db.command(
      'ALTER TABLE schema_migrations DELETE WHERE version = {v:UInt32}',
      { v: LATEST },
      { mutations_sync: '2' },
    );
    try {
      const ready = await get('/readyz');
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.text)).toMatchObject({
        ready: false,
        reason: `migrations: schema at version ${LATEST - 1}, this build needs ${LATEST}`,
        checks: { clickhouse: 'ok' },
      });
    } finally {
      await svc.db.insert('schema_migrations', ['version', 'name'], [[LATEST, 'restored by test']]);
    }
    expect((await get('/readyz')).status).toBe(200);
  });

  it('/metrics counts requests per operation, status and code, and times them', async () => {
    const before = await scrape(svc.httpUrl);
    const n = 3;
    for (let i = 0; i < n; i++) expect((await svc.call(`${STATS}?list_id=${LIST}`)).status).toBe(200);
    expect((await svc.call(STATS)).body.code).toBe(407);
    expect(
      (await svc.call(`/api/1.2/rest/${USER}/wrong-key/automation.stats.json?list_id=${LIST}`)).status,
    ).toBe(403);
    expect((await svc.call(`/api/1.2/rest/${USER}/${KEY}/no.such.op.json`)).status).toBe(404);
    const after = await scrape(svc.httpUrl);
    const delta = (name: string, labels: Record<string, string>) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);

    const requests = 'mailstats_http_requests_total';
    const op = 'automation.stats';
    expect(delta(requests, { operation: op, status: '200', code: '0' })).toBe(n);
    expect(delta(requests, { operation: op, status: '400', code: '407' })).toBe(1);
    expect(delta(requests, { operation: op, status: '403', code: '101' })).toBe(1);
    expect(delta(requests, { operation: 'unknown', status: '404', code: '404' })).toBe(1);
    expect(delta('mailstats_http_request_duration_seconds_count', { operation: op, status: '200' })).toBe(n);
    expect(
      delta('mailstats_http_request_duration_seconds_sum', { operation: op, status: '200' }),
    ).toBeGreaterThan(0);
    // Labels never carry a path segment: the api keys used above appear nowhere.
    const text = await (await fetch(`${svc.httpUrl}/metrics`)).text();
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('wrong-key');
    expect(text).not.toContain('no.such.op');
  });

  it('/metrics counts ingested records: accepted, rejected, deduplicated, and batch writes', async () => {
    const before = await scrape(svc.httpUrl);
    const valid = [1, 2, 3, 4].map(activity);
    const invalid = [{ ...activity(5), event_id: '' }, { type: 'nope' }];
    expect((await svc.ingest([...valid, ...invalid])).body).toMatchObject({ accepted: 4 });
    expect((await svc.ingest(valid)).body).toEqual({ accepted: 4, rejected: [] }); // a producer's retry
    const after = await scrape(svc.httpUrl);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);

    expect(delta('mailstats_ingest_records_accepted_total', { source: 'http' })).toBe(8);
    expect(delta('mailstats_ingest_records_rejected_total', { source: 'http' })).toBe(2);
    expect(delta('mailstats_ingest_records_deduplicated_total')).toBe(4);
    expect(delta('mailstats_ingest_batch_write_duration_seconds_count')).toBe(2);
    expect(delta('mailstats_ingest_records_dead_lettered_total')).toBe(0);
    expect(delta('mailstats_ingest_records_accepted_total', { source: 'kafka' })).toBe(0);
    // The retry changed nothing: still 4 sends today.
    const [today] = (await svc.call(`${STATS}?list_id=${LIST}&days=2`)).body.slice(-1);
    expect(today.sends_total).toBe(4);
  });

  it('/metrics counts template cache misses and hits', async () => {
    const before = await scrape(svc.httpUrl);
    for (const name of ['Ana', 'Ion', 'Eva']) {
      const res = await svc.call(`${RENDER}?list_id=${LIST}&template_id=ops-tpl&params[name]=${name}`);
      expect(res.body).toMatchObject({ content: `Hi ${name}` });
    }
    const after = await scrape(svc.httpUrl);
    const delta = (name: string) => metricValue(after, name) - metricValue(before, name);
    expect(delta('mailstats_template_cache_misses_total')).toBe(1);
    expect(delta('mailstats_template_cache_hits_total')).toBe(2);
    expect(
      metricValue(after, 'mailstats_http_requests_total', {
        operation: 'transactional.templateRender',
        status: '200',
      }) -
        metricValue(before, 'mailstats_http_requests_total', {
          operation: 'transactional.templateRender',
          status: '200',
        }),
    ).toBe(3);
  });

  it('/metrics counts templates stored beyond the render limits (stored all the same)', async () => {
    const before = await scrape(svc.httpUrl);
    const heavy = '{{a}}'.repeat(6_000); // over the 5,000-mustache limit
    const records = [{ type: 'template', template_id: 'ops-heavy', account_id: 'ops-acc', content: heavy }];
    expect((await svc.ingest(records)).body).toEqual({ accepted: 1, rejected: [] });
    const after = await scrape(svc.httpUrl);
    const delta = (name: string) => metricValue(after, name) - metricValue(before, name);
    expect(delta('mailstats_templates_over_limits_total')).toBe(1);
    const res = await svc.call(`${RENDER}?list_id=${LIST}&template_id=ops-heavy`);
    expect(res.body).toMatchObject({ err: true, code: 17007 });
  });

  it('/metrics lists every documented metric name', async () => {
    const text = await (await fetch(`${svc.httpUrl}/metrics`)).text();
    for (const name of [
      'mailstats_http_requests_total',
      'mailstats_http_request_duration_seconds',
      'mailstats_ingest_records_accepted_total',
      'mailstats_ingest_records_rejected_total',
      'mailstats_ingest_records_dead_lettered_total',
      'mailstats_ingest_records_deduplicated_total',
      'mailstats_ingest_batch_write_duration_seconds',
      'mailstats_kafka_consumer_lag',
      'mailstats_template_cache_hits_total',
      'mailstats_template_cache_misses_total',
      'mailstats_templates_over_limits_total',
      'mailstats_stats_cache_requests_total',
      'mailstats_stats_memory_rows',
      'mailstats_stats_memory_reads',
      'mailstats_clickhouse_errors_total',
      'process_cpu_seconds_total',
    ])
      expect(text).toContain(`# TYPE ${name} `);
  });

  it('/docs renders the spec from local files only: no URL to another origin', async () => {
    const page = await get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).not.toMatch(/https?:\/\/|\/\/[a-z]/i);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('content-security-policy')).not.toMatch(/https?:/);
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.sort()).toEqual([
      'docs/favicon-32x32.png',
      'docs/init.js',
      'docs/swagger-ui-bundle.js',
      'docs/swagger-ui.css',
    ]);
    for (const asset of assets) expect((await get(`/${asset}`)).status).toBe(200);
    const init = (await get('/docs/init.js')).text;
    expect(init).toContain("url: 'openapi.json'");
    expect(init).toContain('validatorUrl: null'); // else swagger-ui calls validator.swagger.io
    expect((await get('/docs/swagger-ui.css')).text).not.toMatch(/@import|url\(\s*['"]?https?:/);
    const slash = await fetch(`${svc.httpUrl}/docs/`, { redirect: 'manual' });
    expect([slash.status, slash.headers.get('location')]).toEqual([301, '../docs']);
  });
});
