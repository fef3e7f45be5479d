import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../shared/clickhouse/migrations.js';
import { checkReadiness } from '../../query-api/ops/readiness.js';

const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));
/** Answers SELECT 1 and the migrations query as a fully migrated store would. */
const db = { query: async () => [{ v: LATEST }] } as never;

describe('readiness', () => {
  it('is 503 while the render workers are starting, naming them, and ready once they have', async () => {
    let started = false;
    const renderer = { started: () => started };
    expect(await checkReadiness({ db, renderer })).toEqual({
      ready: false,
      reason: 'render_workers: starting',
      checks: { clickhouse: 'ok', migrations: 'ok', render_workers: 'starting' },
    });
    started = true;
    expect(await checkReadiness({ db, renderer })).toEqual({
      ready: true,
      checks: { clickhouse: 'ok', migrations: 'ok', render_workers: 'ok' },
    });
  });

  it('has no render check where no API is served (the ingest role)', async () => {
    expect((await checkReadiness({ db })).checks).toEqual({ clickhouse: 'ok', migrations: 'ok' });
  });
});
