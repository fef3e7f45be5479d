import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { loadConfig } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import { startService, type Service } from '../../service/start.js';

export interface TestService extends Service {
  /** Calls the API 1.2 surface; returns status and parsed JSON. */
  call(
    path: string,
    init?: { method?: string; body?: string; contentType?: string },
  ): Promise<{ status: number; body: any }>;
  /** POST /ingest with the service's token; returns status and parsed JSON. */
  ingest(body: unknown[] | string, token?: string | null): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/**
 * With CLICKHOUSE_URL (and CLICKHOUSE_USER/PASSWORD/CLUSTER) in the test environment, services run
 * against that server, each in a database of its own, instead of the embedded engine: a fresh one, or
 * the one named by `key` (the same key, the same database: a service started again on "the same data",
 * as a DATA_DIR is for the embedded engine). Empty without CLICKHOUSE_URL.
 */
export function serverEnv(key?: string): Record<string, string> {
  const url = process.env.CLICKHOUSE_URL;
  if (!url) return {};
  const keys = ['CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_CLUSTER'] as const;
  const id =
    key === undefined
      ? randomBytes(6).toString('hex')
      : createHash('sha256').update(key).digest('hex').slice(0, 12);
  return {
    CLICKHOUSE_URL: url,
    CLICKHOUSE_DATABASE: `mailstats_test_${id}`,
    // What a service holds is served only while its change poll is this recent: on a busy test machine
    // a poll can lag a second, and a test that expects answers from memory would then see the engine's
    // (a test of the bound itself sets its own).
    STATS_FRESHNESS_MS: '30000',
    ...Object.fromEntries(keys.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : []))),
  };
}

/**
 * The real service (embedded ClickHouse in a fresh temp dir, or CLICKHOUSE_URL; HTTP on a free port). `opts.log`: a logger
 * of the test's own (e.g. writing to a captured stream), instead of one at LOG_LEVEL.
 */
export async function startTestService(
  env: Record<string, string> = {},
  opts: { log?: Logger } = {},
): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-test-'));
  const config = loadConfig({
    DATA_DIR: dir,
    PORT: '0',
    SEED_DEMO: 'false',
    LOG_LEVEL: 'silent',
    INGEST_TOKEN: 'test-ingest-token-0123456789abcdef',
    ...serverEnv(),
    ...env,
  });
  const service = await startService(config, opts.log);
  const base = service.url!;
  return Object.assign(service, {
    async call(path: string, init: { method?: string; body?: string; contentType?: string } = {}) {
      const res = await fetch(base + path, {
        method: init.method ?? 'GET',
        body: init.body,
        headers: init.contentType ? { 'content-type': init.contentType } : {},
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async ingest(body: unknown[] | string, token: string | null = config.INGEST_TOKEN!) {
      const res = await fetch(`${base}/ingest`, {
        method: 'POST',
        body: typeof body === 'string' ? body : body.map((r) => JSON.stringify(r)).join('\n'),
        headers: {
          'content-type': 'application/x-ndjson',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async stop() {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Catalog records for a tenant: a user with a key and granted lists. */
export function tenant(opts: {
  userId: number;
  apiKey: string;
  lists: { list_id: number; timezone?: string; currency?: string }[];
}): unknown[] {
  return [
    { type: 'user', user_id: opts.userId, api_key_sha256: sha256(opts.apiKey) },
    ...opts.lists.map((l) => ({ type: 'list', name: `list ${l.list_id}`, ...l })),
    ...opts.lists.map((l) => ({
      type: 'list_access',
      user_id: opts.userId,
      list_id: l.list_id,
      granted: true,
    })),
  ];
}
