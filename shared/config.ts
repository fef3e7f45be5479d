import { resolve } from 'node:path';
import express from 'express';
import { z } from 'zod';
import { tokenProblem } from './token-rules.js';

/** Optional string setting: unset and empty both mean "not configured". */
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const boolFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'yes'].includes(v)));

const int = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** `host:port`, host a name, an IPv4 address or a bracketed IPv6 address (as kafkajs takes them). */
const brokerAddress = z.string().superRefine((entry, ctx) => {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(entry);
  const host = match?.[1] ?? '';
  const port = Number(match?.[2]);
  const hostOk = host.startsWith('[')
    ? z.ipv6().safeParse(host.slice(1, -1)).success
    : z.hostname().safeParse(host).success;
  if (!match || !hostOk || !(port >= 1 && port <= 65535))
    ctx.addIssue({ code: 'custom', message: `"${entry}" is not host:port (e.g. kafka:9092)` });
});

/** A listen address: an IP address or a host name (default loopback; containers set 0.0.0.0). */
const listenHost = z.union([z.ipv4(), z.ipv6(), z.hostname()], { error: 'not an IP address or host name' });

const timeZone = z.string().refine(isValidTimeZone, 'not a known IANA time zone');

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** KAFKA_FETCH_MAX_BYTES unset (ingest/kafka/worker.ts). */
export const DEFAULT_FETCH_MAX_BYTES = 16 * 1024 * 1024;

const envSchema = z.object({
  PORT: int(8080, 0, 65535),
  HOST: optionalString.pipe(listenHost.optional()).transform((v) => v ?? '127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  CLICKHOUSE_URL: optionalString.pipe(z.url().optional()),
  CLICKHOUSE_USER: optionalString,
  CLICKHOUSE_PASSWORD: optionalString,
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('mailstats'),
  /** A ClickHouse cluster name (remote_servers): migrations run ON CLUSTER with Replicated engines. */
  CLICKHOUSE_CLUSTER: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, 'must be a cluster name (letters, digits, _ and -)')
      .optional(),
  ),
  /**
   * How long start-up waits for ClickHouse and Kafka (exponential backoff, one log line per attempt)
   * before giving up and exiting non-zero, so that a supervisor notices; 0 waits forever.
   */
  STARTUP_WAIT_SECONDS: int(300, 0, 86_400),
  KAFKA_BROKERS: optionalString
    .transform((v) =>
      v
        ? v
            .split(',')
            .map((b) => b.trim())
            .filter(Boolean)
        : [],
    )
    .pipe(z.array(brokerAddress)),
  KAFKA_CLIENT_ID: z.string().min(1).default('mailstats'),
  KAFKA_GROUP_ID: z.string().min(1).default('mailstats-ingest'),
  KAFKA_EVENTS_TOPIC: z.string().min(1).default('mailstats.events'),
  KAFKA_CATALOG_TOPIC: z.string().min(1).default('mailstats.catalog'),
  KAFKA_DLQ_TOPIC: z.string().min(1).default('mailstats.dlq'),
  /** TLS to the brokers; the CA, certificate and key files are optional (PEM; the system CAs otherwise). */
  KAFKA_SSL: boolFlag(false),
  KAFKA_SSL_CA_FILE: optionalString,
  KAFKA_SSL_CERT_FILE: optionalString,
  KAFKA_SSL_KEY_FILE: optionalString,
  /** SASL authentication to the brokers (with a user name and password); use it with KAFKA_SSL=true. */
  KAFKA_SASL_MECHANISM: optionalString.pipe(z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional()),
  KAFKA_SASL_USERNAME: optionalString,
  KAFKA_SASL_PASSWORD: optionalString,
  /** Partitions of topics the service creates. */
  KAFKA_PARTITIONS: int(3, 1, 1000),
  /** A worker batch is at most this many records… */
  KAFKA_BATCH_MAX_RECORDS: int(50_000, 1, 1_000_000),
  /** …gathered for at most this long by the broker's fetch. */
  KAFKA_BATCH_MAX_MS: int(500, 1, 60_000),
  /**
   * What one fetch of the worker may bring, all partitions together (at most half of it from one
   * partition). All of a fetch is held until its last write ends: this bounds the worker's memory, and
   * it must hold KAFKA_BATCH_MAX_RECORDS of your records for writes to be full.
   */
  KAFKA_FETCH_MAX_BYTES: int(DEFAULT_FETCH_MAX_BYTES, 1024 * 1024, 1024 * 1024 * 1024),
  /**
   * How long the group waits for a silent worker (e.g. one killed) before handing its partitions on; a
   * worker restarted after a SIGKILL waits that long for its first commit. 6 s: the broker's default
   * group.min.session.timeout.ms (docs/configuration.md).
   */
  KAFKA_SESSION_TIMEOUT_MS: int(6_000, 6_000, 300_000),
  /**
   * After each full garbage collection V8 lets the heap grow to (1 + N/100) × what is still live; left
   * to itself it grows up to 4× that on a large machine (a Kafka worker holding ~150 MB sat at ~620 MB).
   * Unset: 30 in a process that consumes Kafka, V8's own heuristics otherwise (service/heap.ts); 0: V8's.
   */
  HEAP_GROWTH_PERCENT: optionalString.pipe(z.coerce.number<string>().int().min(0).max(1000).optional()),
  INGEST_TOKEN: optionalString,
  /** Authorises the admin commands (docs/lifecycle.md); generated into DATA_DIR/admin-token when unset. */
  ADMIN_TOKEN: optionalString,
  /**
   * Where `backup` may write (an absolute directory; the engine's backups.allowed_path). Unset:
   * DATA_DIR/backups, a directory of the service's own (docs/lifecycle.md).
   */
  BACKUP_ROOT: optionalString.refine((p) => p === undefined || p.startsWith('/'), 'must be an absolute path'),
  /**
   * Signs each backup's manifest (HMAC-SHA256), and `restore` then refuses a backup not signed with it
   * (docs/lifecycle.md, "What a restore trusts"). Unset: backups are not signed.
   */
  BACKUP_HMAC_KEY: optionalString,
  ROLE: z.enum(['all', 'api', 'ingest']).default('all'),
  SEED_DEMO: boolFlag(true),
  DEFAULT_TIMEZONE: timeZone.default('Europe/Bucharest'),
  MAX_PERIOD_DAYS: int(731, 1, 36600),
  DEDUP_WINDOW_DAYS: int(7, 1, 3650),
  /** Raw events kept this many days, 0: all (docs/lifecycle.md "Retention"). */
  RAW_RETENTION_DAYS: int(0, 0, 36_500),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** auto: one human line per entry when stdout is a terminal, JSON lines otherwise (docs/operations.md "Logs"). */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** How often another process's catalog writes are noticed (ms). */
  CATALOG_POLL_MS: int(250, 10, 60_000),
  /**
   * With CLICKHOUSE_URL: what an API process holds of the catalog (users' keys, grants, lists, …) is
   * served only while its last successful catalog poll began less than this ago (ms); a read that finds
   * it older waits for one poll, and when that fails answers 503 (docs/operations.md, "Catalog changes
   * across processes").
   */
  CATALOG_FRESHNESS_MS: int(1_000, 100, 3_600_000),
  /**
   * The automation.stats answer cache. Unset: on without expiry, in either mode (exact: this process's
   * writes invalidate it at once; with CLICKHOUSE_URL, other processes' writes through the change
   * signal, STATS_CHANGE_POLL_MS). 0: off. N > 0: on, a cached answer also expires after N ms.
   */
  STATS_CACHE_MS: optionalString.pipe(z.coerce.number<string>().int().min(0).max(86_400_000).optional()),
  /**
   * Embedded: connections to the store that serve automation.stats reads beside the writer's (the engine
   * runs one statement at a time per connection, so reads neither queue behind writes nor behind each
   * other). 0: stats reads share the writer's connection. Ignored with CLICKHOUSE_URL (the HTTP client
   * keeps its own pool of connections to the server).
   */
  STATS_READ_CONNECTIONS: int(2, 0, 16),
  /**
   * With CLICKHOUSE_URL: how often an API process reads which lists other processes changed (the
   * change signal, one statement per interval), dropping what it holds of them.
   */
  STATS_CHANGE_POLL_MS: int(200, 10, 60_000),
  /**
   * With CLICKHOUSE_URL: what an API process holds (answers, day rows) is served only while its last
   * successful read of the change signal began less than this ago (ms); otherwise ClickHouse answers.
   * The bound of the freshness promise when the signal cannot be read in time (docs/deployment.md).
   */
  STATS_FRESHNESS_MS: int(1_000, 100, 3_600_000),
  /**
   * How many per-day answer rows (daily_scopes) of recently asked lists automation.stats holds
   * in memory to answer all-workflow and one-workflow requests without an engine read (a list of 50
   * workflows and 3 triggers over a year is ~75,000 rows, ~30 MB). 0: none held.
   */
  STATS_MEMORY_ROWS: int(300_000, 0, 10_000_000),
  /**
   * Template renders waiting for a render worker, over all users (one user may fill at most half); a
   * render that finds the queue full answers 503 with Retry-After (docs/configuration.md).
   */
  RENDER_QUEUE_LENGTH: int(200, 1, 100_000),
  /** How long a render may wait for a worker before it answers 503 with Retry-After (ms, at most 1 min). */
  RENDER_QUEUE_DEADLINE_MS: int(5_000, 10, 60_000),
  /** Records per ClickHouse write when a body or Kafka batch is larger. */
  INGEST_BATCH_SIZE: int(100_000, 1, 1_000_000),
  /**
   * API calls per second per user (docs/api.md, rate limits), burst twice that; 0: off. Calls with an
   * unknown user or a wrong key count against a bucket of their own per user id and peer address.
   */
  RATE_LIMIT_PER_KEY: int(0, 0, 1_000_000),
  /** How long a client may take to send a request's head (ms), then 408 and the connection is closed. */
  HTTP_HEADERS_TIMEOUT_MS: int(15_000, 1_000, 600_000),
  /** How long a client may take to send a whole request, head and body (ms), then 408. */
  HTTP_REQUEST_TIMEOUT_MS: int(30_000, 1_000, 600_000),
  /** Connections open at once; further ones are closed as they arrive. */
  HTTP_MAX_CONNECTIONS: int(1_000, 1, 1_000_000),
  /**
   * Connections open at once from one peer address (an IPv6 peer: its /64), so that one address cannot
   * take every connection; further ones from it are closed as they arrive. Unset: a quarter of
   * HTTP_MAX_CONNECTIONS (`maxConnectionsPerAddress`). Behind a balancer every caller is the balancer.
   */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: optionalString.pipe(
    z.coerce.number<string>().int().min(1).max(1_000_000).optional(),
  ),
  /**
   * How long a connection the service has answered and closed its side of (an error answer, a
   * `Connection: close` answer) stays open for the client to read the answer and close, once the answer
   * is handed to the system (ms); then it is destroyed, whether or not the client ever read.
   */
  HTTP_CLOSE_GRACE_MS: int(2_000, 100, 60_000),
  /** MiB that API request bodies in flight may hold together; over it a body is refused with 503. */
  HTTP_BODY_BUDGET_MB: int(64, 1, 65_536),
  /**
   * The proxies whose X-Forwarded-For is believed, as Express's `trust proxy` takes them: a hop count,
   * or addresses, CIDRs and the names `loopback`, `linklocal`, `uniquelocal`, comma-separated
   * (docs/configuration.md, "Behind a reverse proxy"). Unset: X-Forwarded-For is ignored.
   */
  TRUST_PROXY: optionalString,
  /**
   * Scheduled e-mail reports (docs/dashboard.md "Reports"): the SMTP server, as a URL
   * (`smtp://user:pass@host:587`, `smtps://…`); unset: no report is sent. The sender's address, and how
   * often the api role looks for a report that is due (ms).
   */
  SMTP_URL: optionalString.pipe(z.url({ protocol: /^smtps?$/ }).optional()),
  REPORT_FROM: z.string().default('mailstats <reports@localhost>'),
  REPORT_CHECK_MS: int(60_000, 100, 86_400_000),
});

const configSchema = envSchema
  .superRefine((c, ctx) => {
    const need = (path: keyof Config, message: string) =>
      ctx.addIssue({ code: 'custom', path: [path], message });
    for (const file of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const) {
      if (c[file] && !c.KAFKA_SSL) need(file, 'needs KAFKA_SSL=true');
    }
    if (c.KAFKA_SSL_CERT_FILE && !c.KAFKA_SSL_KEY_FILE)
      need('KAFKA_SSL_KEY_FILE', 'needed with KAFKA_SSL_CERT_FILE');
    if (c.KAFKA_SSL_KEY_FILE && !c.KAFKA_SSL_CERT_FILE)
      need('KAFKA_SSL_CERT_FILE', 'needed with KAFKA_SSL_KEY_FILE');
    if (c.KAFKA_SASL_MECHANISM) {
      if (!c.KAFKA_SASL_USERNAME) need('KAFKA_SASL_USERNAME', 'needed with KAFKA_SASL_MECHANISM');
      if (!c.KAFKA_SASL_PASSWORD) need('KAFKA_SASL_PASSWORD', 'needed with KAFKA_SASL_MECHANISM');
      // PLAIN sends the password as it is: over a connection without TLS anyone on the path reads it.
      if (c.KAFKA_SASL_MECHANISM === 'plain' && !c.KAFKA_SSL)
        need(
          'KAFKA_SASL_MECHANISM',
          'plain sends the password in clear without TLS: set KAFKA_SSL=true, or use scram-sha-256 or scram-sha-512',
        );
    } else if (c.KAFKA_SASL_USERNAME || c.KAFKA_SASL_PASSWORD) {
      need(
        'KAFKA_SASL_MECHANISM',
        `needed with ${c.KAFKA_SASL_USERNAME ? 'KAFKA_SASL_USERNAME' : 'KAFKA_SASL_PASSWORD'} (plain, scram-sha-256 or scram-sha-512)`,
      );
    }
    for (const name of ['INGEST_TOKEN', 'ADMIN_TOKEN', 'BACKUP_HMAC_KEY'] as const) {
      const problem = c[name] === undefined ? undefined : tokenProblem(c[name]);
      if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    }
    if (c.ADMIN_TOKEN && c.ADMIN_TOKEN === c.INGEST_TOKEN)
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_TOKEN'],
        message: 'must differ from INGEST_TOKEN (the ingest token must not run admin commands)',
      });
    if (c.CLICKHOUSE_CLUSTER && !c.CLICKHOUSE_URL)
      ctx.addIssue({
        code: 'custom',
        path: ['CLICKHOUSE_CLUSTER'],
        message: 'needs CLICKHOUSE_URL (a cluster is a ClickHouse server setting)',
      });
    if (
      c.HTTP_MAX_CONNECTIONS_PER_ADDRESS !== undefined &&
      c.HTTP_MAX_CONNECTIONS_PER_ADDRESS > c.HTTP_MAX_CONNECTIONS
    )
      ctx.addIssue({
        code: 'custom',
        path: ['HTTP_MAX_CONNECTIONS_PER_ADDRESS'],
        message: `must not exceed HTTP_MAX_CONNECTIONS (${c.HTTP_MAX_CONNECTIONS})`,
      });
    if (c.TRUST_PROXY !== undefined) {
      const problem = trustProxyProblem(c.TRUST_PROXY);
      if (problem) ctx.addIssue({ code: 'custom', path: ['TRUST_PROXY'], message: problem });
    }
    // Node requires the head's deadline to fall within the whole request's.
    if (c.HTTP_HEADERS_TIMEOUT_MS > c.HTTP_REQUEST_TIMEOUT_MS)
      ctx.addIssue({
        code: 'custom',
        path: ['HTTP_HEADERS_TIMEOUT_MS'],
        message: `must not exceed HTTP_REQUEST_TIMEOUT_MS (${c.HTTP_REQUEST_TIMEOUT_MS})`,
      });
  })
  // BACKUP_ROOT unset: a directory of the service's own, beside the store (created 0700 at the first backup).
  .transform((c) => ({ ...c, BACKUP_ROOT: c.BACKUP_ROOT ?? resolve(c.DATA_DIR, 'backups') }));

export type Config = z.output<typeof configSchema>;

/** HTTP_MAX_CONNECTIONS_PER_ADDRESS, or its default: a quarter of HTTP_MAX_CONNECTIONS (at least 1). */
export function maxConnectionsPerAddress(c: Config): number {
  return c.HTTP_MAX_CONNECTIONS_PER_ADDRESS ?? Math.max(1, Math.floor(c.HTTP_MAX_CONNECTIONS / 4));
}

/** Whether a peer is a trusted proxy at this hop (0: the peer of the connection), as Express asks it. */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY compiled by Express itself (its `trust proxy` setting, through proxy-addr): digits are a
 * hop count, anything else a comma-separated list of addresses, CIDRs and names. Undefined when unset
 * (or 0 hops): then no proxy is trusted and X-Forwarded-For is ignored.
 */
export function trustProxy(value: string | undefined): TrustProxy | undefined {
  if (value === undefined) return undefined;
  const setting = /^\d+$/.test(value) ? Number(value) : value;
  if (setting === 0) return undefined;
  return express().set('trust proxy', setting).get('trust proxy fn') as TrustProxy;
}

function trustProxyProblem(value: string): string | undefined {
  if (/^(true|false)$/i.test(value))
    return "give a hop count or the proxies' addresses (true would believe any client's X-Forwarded-For)";
  try {
    trustProxy(value);
    return undefined;
  } catch (err) {
    return `${err instanceof Error ? err.message : String(err)} (a hop count, or addresses, CIDRs, loopback, linklocal, uniquelocal)`;
  }
}

export class ConfigError extends Error {}

/** The only reader of process.env: validates everything once, naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}
