import { z } from 'zod';

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

const timeZone = z.string().refine(isValidTimeZone, 'not a known IANA time zone');

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const envSchema = z.object({
  PORT: int(8080, 0, 65535),
  DATA_DIR: z.string().min(1).default('./data'),
  CLICKHOUSE_URL: optionalString.pipe(z.url().optional()),
  CLICKHOUSE_USER: optionalString,
  CLICKHOUSE_PASSWORD: optionalString,
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('mailstats'),
  KAFKA_BROKERS: optionalString.transform((v) =>
    v
      ? v
          .split(',')
          .map((b) => b.trim())
          .filter(Boolean)
      : [],
  ),
  KAFKA_CLIENT_ID: z.string().min(1).default('mailstats'),
  KAFKA_GROUP_ID: z.string().min(1).default('mailstats-ingest'),
  KAFKA_EVENTS_TOPIC: z.string().min(1).default('mailstats.events'),
  KAFKA_CATALOG_TOPIC: z.string().min(1).default('mailstats.catalog'),
  KAFKA_DLQ_TOPIC: z.string().min(1).default('mailstats.dlq'),
  /** Partitions of topics the service creates. */
  KAFKA_PARTITIONS: int(3, 1, 1000),
  /** A worker batch is at most this many records… */
  KAFKA_BATCH_MAX_RECORDS: int(50_000, 1, 1_000_000),
  /** …gathered for at most this long by the broker's fetch. */
  KAFKA_BATCH_MAX_MS: int(500, 1, 60_000),
  /** How long the group waits for a silent worker (e.g. one killed) before handing its partitions on. */
  KAFKA_SESSION_TIMEOUT_MS: int(30_000, 6_000, 300_000),
  INGEST_TOKEN: optionalString,
  ROLE: z.enum(['all', 'api', 'ingest']).default('all'),
  SEED_DEMO: boolFlag(true),
  DEFAULT_TIMEZONE: timeZone.default('Europe/Bucharest'),
  MAX_PERIOD_DAYS: int(731, 1, 36600),
  DEDUP_WINDOW_DAYS: int(7, 1, 3650),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** How often another process's catalog writes are noticed (ms). */
  CATALOG_POLL_MS: int(250, 10, 60_000),
  /** Records per ClickHouse write when a body or Kafka batch is larger. */
  INGEST_BATCH_SIZE: int(100_000, 1, 1_000_000),
});

export type Config = z.infer<typeof envSchema>;

export class ConfigError extends Error {}

/** The only reader of process.env: validates everything once, naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}
