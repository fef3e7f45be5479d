// Modes: embedded only — needs the demo tenant, which is seeded only embedded
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { DEMO, DEMO_ORDER_PARAMS } from '../../ingest/demo-seed.js';
import { metricValue, scrape, type Sample } from '../support/metrics.js';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';
import { alertRules, dashboardPanels, metricNames } from '../support/promql.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Every metric an alert rule or a dashboard panel names (monitoring/) is on /metrics of the real
 * service after ordinary traffic: a name missing there would make an alert that can never fire or a
 * panel that stays empty. The service runs with Kafka (ROLE all), the one mode where every metric has
 * samples (the consumer lag exists only with a consumer); traffic: stats, renders, POST /ingest with
 * bad lines, and bad messages straight into the events topic (dead letters).
 */
const BASE = `/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}`;
/** Made by Prometheus itself, not by the service. */
const FROM_PROMETHEUS = new Set(['up']);

describe('metrics named by the alert rules and the dashboard, on a running service with Kafka', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  let svc: TestService;
  let samples: Sample[];

  beforeAll(async () => {
    svc = await startTestService({ ...env, SEED_DEMO: 'true' });
    // The demo goes through Kafka: wait until its templates are consumed.
    const render = () =>
      svc.call(`${BASE}/transactional.templateRender.json`, {
        method: 'POST',
        contentType: 'application/json',
        body: JSON.stringify({
          list_id: 1,
          template_id: 'order-confirmation',
          params: DEMO_ORDER_PARAMS,
        }),
      });
    await vi.waitFor(async () => expect((await render()).status).toBe(200), {
      timeout: 120_000,
      interval: 500,
    });
    for (let i = 0; i < 3; i++) expect((await render()).status).toBe(200);
    for (let i = 0; i < 4; i++)
      expect((await svc.call(`${BASE}/automation.stats.json?list_id=1&days=7`)).status).toBe(200);
    // A client's mistake (an API error code) and a wrong key.
    expect((await svc.call(`${BASE}/automation.stats.json?list_id=abc`)).body).toMatchObject({ err: true });
    expect((await svc.call(`/api/1.2/rest/${DEMO.userId}/wrong-key/list.all.json`)).body).toMatchObject({
      err: true,
    });
    // POST /ingest: one good record, two bad lines.
    const good = { type: 'list', list_id: 901, name: 'monitoring list', timezone: 'UTC', currency: 'EUR' };
    const ingested = await svc.ingest(
      [JSON.stringify(good), '{"type": "send"', '{"type": "teleport"}'].join('\n'),
    );
    expect(ingested.body).toMatchObject({ accepted: 1 });
    expect(ingested.body.rejected).toHaveLength(2);
    // Bad messages straight into Kafka: the consumer dead-letters them.
    await produce(testKafka(brokers), env.KAFKA_EVENTS_TOPIC, [
      '{"type": "send", "event_id": ',
      { type: 'teleport' },
    ]);
    await vi.waitFor(
      async () =>
        expect(metricValue(await scrape(svc.httpUrl), 'mailstats_ingest_records_dead_lettered_total')).toBe(
          2,
        ),
      { timeout: 60_000, interval: 500 },
    );
    samples = await scrape(svc.httpUrl);
  });
  afterAll(() => svc?.stop());

  const named = () => {
    const names = new Map<string, string[]>();
    const add = (name: string, where: string) => names.set(name, [...(names.get(name) ?? []), where]);
    for (const rule of alertRules()) for (const n of metricNames(rule.expr)) add(n, `alert ${rule.alert}`);
    for (const panel of dashboardPanels())
      for (const t of panel.targets) for (const n of metricNames(t.expr)) add(n, `panel "${panel.title}"`);
    return names;
  };

  it('every name in a rule expr or a panel target has samples on /metrics', () => {
    const names = named();
    expect(names.size).toBeGreaterThanOrEqual(15);
    const exposed = new Set(samples.map((s) => s.name));
    const missing = [...names]
      .filter(([name]) => !FROM_PROMETHEUS.has(name) && !exposed.has(name))
      .map(([name, where]) => `${name} (${where.join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('and the series the alerts watch carry what they claim', async () => {
    // mailstats_ready is one exactly when every check is: on a machine busy enough, a check can fail for a
    // moment (a consumer rejoining its group, ClickHouse slower than the probe's 2 s), which the alert
    // rules wait out; so every scrape must agree with itself, and one within 30 s must be ready.
    const checks = ['clickhouse', 'migrations', 'render_workers', 'kafka_consumer'];
    const readiness = (s: Sample[]) => [
      metricValue(s, 'mailstats_ready'),
      ...checks.map((check) => metricValue(s, 'mailstats_readiness_check_ok', { check })),
    ];
    await vi.waitFor(
      async () => {
        const [ready, ...ok] = readiness(samples);
        expect(ready, `ready against its checks ${checks.join(', ')}: ${ok.join(', ')}`).toBe(
          ok.every((v) => v === 1) ? 1 : 0,
        );
        if (ready !== 1) samples = await scrape(svc.httpUrl);
        expect(readiness(samples)).toEqual([1, 1, 1, 1, 1]);
      },
      { timeout: 30_000, interval: 1_000 },
    );
    const lastWrite = metricValue(samples, 'mailstats_ingest_last_write_timestamp_seconds');
    expect(Math.abs(Date.now() / 1000 - lastWrite)).toBeLessThan(600);
    const lags = samples.filter((s) => s.name === 'mailstats_kafka_consumer_lag');
    expect(lags.map((s) => s.labels.topic)).toContain(env.KAFKA_EVENTS_TOPIC);
    expect(Object.keys(lags[0]!.labels).sort()).toEqual(['partition', 'topic']);
    expect(metricValue(samples, 'mailstats_ingest_records_rejected_total', { source: 'http' })).toBe(2);
    expect(
      metricValue(samples, 'mailstats_ingest_records_accepted_total', { source: 'kafka' }),
    ).toBeGreaterThan(0);
    expect(metricValue(samples, 'mailstats_template_cache_hits_total')).toBeGreaterThan(0);
    expect(metricValue(samples, 'mailstats_stats_cache_requests_total', { result: 'hit' })).toBeGreaterThan(
      0,
    );
  });

  it('mailstats_ready follows readiness at scrape time, without anything probing /readyz', async () => {
    // A reading younger than 5 s is reused (docs/monitoring.md): poll until the fault shows.
    const ready = async () => {
      const now = await scrape(svc.httpUrl);
      return [
        metricValue(now, 'mailstats_ready'),
        metricValue(now, 'mailstats_readiness_check_ok', { check: 'clickhouse' }),
        metricValue(now, 'mailstats_readiness_check_ok', { check: 'render_workers' }),
      ];
    };
    svc.db.faultInjector = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:8123'));
    try {
      await vi.waitFor(async () => expect(await ready()).toEqual([0, 0, 1]), {
        timeout: 20_000,
        interval: 500,
      });
    } finally {
      svc.db.faultInjector = undefined;
    }
    await vi.waitFor(async () => expect(await ready()).toEqual([1, 1, 1]), {
      timeout: 20_000,
      interval: 500,
    });
  });

  it('labels stay bounded: no id, key or path among label values', () => {
    for (const s of samples)
      for (const [k, v] of Object.entries(s.labels)) {
        expect(k, s.name).not.toMatch(/user|list_id|key|path|template/);
        expect(v, `${s.name}{${k}}`).not.toContain(DEMO.apiKey);
        expect(v, `${s.name}{${k}}`).not.toContain('/');
      }
  });
});
