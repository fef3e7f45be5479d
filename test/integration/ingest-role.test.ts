// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { metricValue, scrape, type Sample } from '../support/metrics.js';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * ROLE=ingest with a real broker: the process listens for /healthz, /readyz and /metrics only,
 * /readyz follows the consumer's group membership, and /metrics shows consumed records and lag.
 */
describe('ROLE=ingest HTTP listener', () => {
  const brokers = inject('kafkaBrokers');
  const env = kafkaEnv(brokers);
  const kafka = testKafka(brokers);
  let svc: TestService;
  const get = async (path: string, method = 'GET') => {
    const res = await fetch(svc.httpUrl + path, { method });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  const send = (i: number) => ({
    type: 'send',
    event_id: `role-${i}`,
    list_id: 91,
    workflow_id: 1,
    subscriber_id: i,
    timestamp: Date.now() - 60_000,
  });
  const eventsLag = (samples: Sample[]) =>
    samples.filter(
      (s) => s.name === 'mailstats_kafka_consumer_lag' && s.labels.topic === env.KAFKA_EVENTS_TOPIC,
    );

  beforeAll(async () => {
    svc = await startTestService({ ...env, ROLE: 'ingest' });
  });
  afterAll(() => svc?.stop());

  it('listens in the ingest role: /healthz at once, /readyz 200 once the consumer is in its group', async () => {
    expect(svc.url).toBeUndefined(); // no API here
    expect(await get('/healthz')).toEqual({ status: 200, body: { ok: true } });
    await vi.waitFor(
      async () =>
        expect(await get('/readyz')).toEqual({
          status: 200,
          body: { ready: true, checks: { clickhouse: 'ok', migrations: 'ok', kafka_consumer: 'ok' } },
        }),
      { timeout: 60_000, interval: 250 },
    );
  });

  it('serves no API, no /ingest, no docs: the 404 error object (docs/operations.md "Endpoints"), naming no path segment but the operation', async () => {
    const stats = await get('/api/1.2/rest/1/role-secret-key/automation.stats.json?list_id=1');
    expect(stats).toEqual({
      status: 404,
      body: { err: true, message: 'Unknown API method automation.stats.json', code: 404 },
    });
    // Not the API's shape: the same message as the API role's, quoting nothing of the path.
    expect((await get('/api/1.2/rest/1/role-secret-key')).body.message).toBe(
      'Unknown API method (the path is not /api/1.2/rest/{user_id}/{api_key}/{operation}.json)',
    );
    for (const [path, method] of [
      ['/ingest', 'POST'],
      ['/openapi.json', 'GET'],
      ['/docs', 'GET'],
      ['/schemas/records.json', 'GET'],
    ] as const)
      expect(await get(path, method)).toMatchObject({ status: 404, body: { err: true, code: 404 } });
  });

  it('/metrics counts consumed, dead-lettered records and shows the lag per partition', async () => {
    const before = await scrape(svc.httpUrl);
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, [...[1, 2, 3, 4, 5].map(send), 'not json']);
    await vi.waitFor(
      async () => {
        const now = await scrape(svc.httpUrl);
        const delta = (name: string, labels: Record<string, string> = {}) =>
          metricValue(now, name, labels) - metricValue(before, name, labels);
        expect(delta('mailstats_ingest_records_accepted_total', { source: 'kafka' })).toBe(5);
        expect(delta('mailstats_ingest_records_rejected_total', { source: 'kafka' })).toBe(1);
        expect(delta('mailstats_ingest_records_dead_lettered_total')).toBe(1);
        // Everything committed: one series per partition of the topic (3 by default), all at 0.
        expect(
          eventsLag(now)
            .map((s) => [s.labels.partition, s.value])
            .sort(),
        ).toEqual([
          ['0', 0],
          ['1', 0],
          ['2', 0],
        ]);
      },
      { timeout: 60_000, interval: 500 },
    );
  });

  it('/readyz is 503 once the consumer leaves its group, and the lag grows with what it does not read', async () => {
    await svc.worker!.stop();
    expect(await get('/readyz')).toMatchObject({
      status: 503,
      body: { ready: false, reason: 'kafka_consumer: not a member of its consumer group' },
    });
    await produce(kafka, env.KAFKA_EVENTS_TOPIC!, [6, 7, 8, 9].map(send));
    const lag = eventsLag(await scrape(svc.httpUrl));
    expect(lag).toHaveLength(3);
    expect(lag.reduce((sum, s) => sum + s.value, 0)).toBe(4);
  });
});
