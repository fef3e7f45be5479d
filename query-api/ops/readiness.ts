import type { Db } from '../../shared/clickhouse/client.js';
import { MIGRATIONS } from '../../shared/clickhouse/migrations.js';
import { setReadiness } from '../../shared/metrics.js';

/** A readiness probe must answer even when ClickHouse hangs. */
const CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessDeps {
  db: Pick<Db, 'query'>;
  /** Present in a process that runs the Kafka consumer (ROLE all or ingest with KAFKA_BROKERS). */
  consumer?: { isMember(): boolean };
  /** Present in a process that serves the API: its template render workers. */
  renderer?: { started(): boolean };
}

export interface Readiness {
  ready: boolean;
  /** Each failing check as "name: why", joined with "; " (absent when ready). */
  reason?: string;
  checks: Record<string, 'ok' | string>;
}

const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * ClickHouse answers a trivial query, every migration is recorded, the consumer is in its group, the render
 * workers have started.
 */
export async function checkReadiness({ db, consumer, renderer }: ReadinessDeps): Promise<Readiness> {
  const checks: Record<string, string> = {};
  try {
    await withTimeout(db.query('SELECT 1'), 'ClickHouse');
    checks.clickhouse = 'ok';
    const [row] = await withTimeout(
      db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations'),
      'ClickHouse',
    );
    const applied = Number(row?.v ?? 0);
    checks.migrations = applied >= LATEST ? 'ok' : `schema at version ${applied}, this build needs ${LATEST}`;
  } catch {
    // /readyz answers anyone: the reason names the dependency, never its error text, which can hold
    // host names, addresses or credentials (the process's own log has the details of its queries).
    if (checks.clickhouse === 'ok') checks.migrations = 'not readable';
    else {
      checks.clickhouse = 'not answering';
      checks.migrations = 'not checked (ClickHouse is not answering)';
    }
  }
  if (renderer) checks.render_workers = renderer.started() ? 'ok' : 'starting';
  if (consumer) checks.kafka_consumer = consumer.isMember() ? 'ok' : 'not a member of its consumer group';
  const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
  setReadiness(failing.length === 0, checks);
  return failing.length === 0
    ? { ready: true, checks }
    : { ready: false, reason: failing.map(([k, v]) => `${k}: ${v}`).join('; '), checks };
}
