import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkaSecurity } from '../../ingest/kafka/topics.js';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { statsCacheOptions } from '../../query-api/stats/cache.js';

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return undefined;
};

describe('HOST', () => {
  it('defaults to loopback', () => {
    expect(loadConfig({}).HOST).toBe('127.0.0.1');
  });
  it('takes IPv4, IPv6 and host names', () => {
    expect(loadConfig({ HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::' }).HOST).toBe('::');
    expect(loadConfig({ HOST: 'localhost' }).HOST).toBe('localhost');
  });
  it('names a bad HOST', () => {
    expect(problems({ HOST: 'not a host' })).toMatch(/HOST: not an IP address or host name/);
  });
});

describe('KAFKA_BROKERS', () => {
  it('is a host:port list (names, IPv4, bracketed IPv6), spaces trimmed', () => {
    expect(loadConfig({ KAFKA_BROKERS: 'kafka:9092, 10.0.0.2:19092 ,[::1]:9093' }).KAFKA_BROKERS).toEqual([
      'kafka:9092',
      '10.0.0.2:19092',
      '[::1]:9093',
    ]);
    expect(loadConfig({ KAFKA_BROKERS: '' }).KAFKA_BROKERS).toEqual([]);
  });
  it.each([
    'kafka',
    'kafka:',
    'kafka:0',
    'kafka:65536',
    'ka fka:9092',
    'http://kafka:9092',
    '::1:9092',
    '[zz]:1',
  ])('refuses %j naming the entry', (entry) => {
    expect(problems({ KAFKA_BROKERS: `good:9092,${entry}` })).toContain(
      `KAFKA_BROKERS.1: "${entry}" is not host:port`,
    );
  });
});

describe('CLICKHOUSE_CLUSTER and STARTUP_WAIT_SECONDS', () => {
  it('a cluster needs a server', () => {
    expect(problems({ CLICKHOUSE_CLUSTER: 'c1' })).toMatch(/CLICKHOUSE_CLUSTER: needs CLICKHOUSE_URL/);
    const c = loadConfig({ CLICKHOUSE_CLUSTER: 'c1', CLICKHOUSE_URL: 'http://ch:8123' });
    expect(c.CLICKHOUSE_CLUSTER).toBe('c1');
  });
  it('a cluster name is an identifier (it is written into DDL)', () => {
    expect(problems({ CLICKHOUSE_CLUSTER: "c1' --", CLICKHOUSE_URL: 'http://ch:8123' })).toMatch(
      /CLICKHOUSE_CLUSTER: must be a cluster name/,
    );
  });
  it('start-up waits 300 s by default; 0 means forever; negative is refused', () => {
    expect(loadConfig({}).STARTUP_WAIT_SECONDS).toBe(300);
    expect(loadConfig({ STARTUP_WAIT_SECONDS: '0' }).STARTUP_WAIT_SECONDS).toBe(0);
    expect(problems({ STARTUP_WAIT_SECONDS: '-1' })).toMatch(/STARTUP_WAIT_SECONDS/);
  });
});

describe('STATS_CACHE_MS', () => {
  it('unset: the stats cache is on (no expiry) in either mode (server mode: kept current by the change signal)', () => {
    expect(statsCacheOptions(loadConfig({}))).toEqual({ enabled: true, ttlMs: 0 });
    expect(statsCacheOptions(loadConfig({ STATS_CACHE_MS: '' }))).toEqual({ enabled: true, ttlMs: 0 });
    expect(statsCacheOptions(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123' }))).toEqual({
      enabled: true,
      ttlMs: 0,
    });
  });
  it('0 is off in any mode; N > 0 is on with N ms expiry, also with CLICKHOUSE_URL', () => {
    expect(statsCacheOptions(loadConfig({ STATS_CACHE_MS: '0' })).enabled).toBe(false);
    expect(
      statsCacheOptions(loadConfig({ STATS_CACHE_MS: '2000', CLICKHOUSE_URL: 'http://ch:8123' })),
    ).toEqual({ enabled: true, ttlMs: 2000 });
  });
  it('names a bad value', () => {
    expect(problems({ STATS_CACHE_MS: 'soon' })).toMatch(/STATS_CACHE_MS/);
    expect(problems({ STATS_CACHE_MS: '-1' })).toMatch(/STATS_CACHE_MS/);
  });
});

describe('RENDER_QUEUE_LENGTH and RENDER_QUEUE_DEADLINE_MS', () => {
  it('default to 200 waiting renders and 5 s', () => {
    const c = loadConfig({});
    expect(c.RENDER_QUEUE_LENGTH).toBe(200);
    expect(c.RENDER_QUEUE_DEADLINE_MS).toBe(5_000);
    expect(loadConfig({ RENDER_QUEUE_LENGTH: '8', RENDER_QUEUE_DEADLINE_MS: '1500' })).toMatchObject({
      RENDER_QUEUE_LENGTH: 8,
      RENDER_QUEUE_DEADLINE_MS: 1500,
    });
  });
  it('names a bad value: not a whole number, zero, or a deadline over a minute', () => {
    expect(problems({ RENDER_QUEUE_LENGTH: 'many' })).toMatch(/RENDER_QUEUE_LENGTH/);
    expect(problems({ RENDER_QUEUE_LENGTH: '0' })).toMatch(/RENDER_QUEUE_LENGTH/);
    expect(problems({ RENDER_QUEUE_DEADLINE_MS: '2.5' })).toMatch(/RENDER_QUEUE_DEADLINE_MS/);
    expect(problems({ RENDER_QUEUE_DEADLINE_MS: '0' })).toMatch(/RENDER_QUEUE_DEADLINE_MS/);
    expect(problems({ RENDER_QUEUE_DEADLINE_MS: '600000' })).toMatch(/RENDER_QUEUE_DEADLINE_MS/);
  });
});

describe('Kafka TLS and SASL (KAFKA_SSL*, KAFKA_SASL_*)', () => {
  it('default to neither', () => {
    const c = loadConfig({});
    expect(c.KAFKA_SSL).toBe(false);
    expect(c.KAFKA_SASL_MECHANISM).toBeUndefined();
    expect(kafkaSecurity(c)).toEqual({});
  });

  it('KAFKA_SSL=true turns TLS on; CA, certificate and key are read from their files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kafka-tls-'));
    try {
      for (const f of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(dir, f), `${f} contents`);
      expect(kafkaSecurity(loadConfig({ KAFKA_SSL: 'true' }))).toEqual({ ssl: true });
      const c = loadConfig({
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: join(dir, 'ca.pem'),
        KAFKA_SSL_CERT_FILE: join(dir, 'cert.pem'),
        KAFKA_SSL_KEY_FILE: join(dir, 'key.pem'),
      });
      expect(kafkaSecurity(c)).toEqual({
        ssl: { ca: ['ca.pem contents'], cert: 'cert.pem contents', key: 'key.pem contents' },
      });
      // A file that cannot be read is named.
      expect(() =>
        kafkaSecurity(loadConfig({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: join(dir, 'missing.pem') })),
      ).toThrow(/KAFKA_SSL_CA_FILE: cannot read .*missing\.pem/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SASL: a mechanism with a user name and a password', () => {
    const c = loadConfig({
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'mailstats',
      KAFKA_SASL_PASSWORD: 's3cret',
    });
    expect(kafkaSecurity(c)).toEqual({
      ssl: true,
      sasl: { mechanism: 'scram-sha-512', username: 'mailstats', password: 's3cret' },
    });
    for (const m of ['plain', 'scram-sha-256']) {
      expect(
        loadConfig({
          KAFKA_SASL_MECHANISM: m,
          KAFKA_SASL_USERNAME: 'u',
          KAFKA_SASL_PASSWORD: 'p',
          KAFKA_SSL: 'true',
        }).KAFKA_SASL_MECHANISM,
      ).toBe(m);
    }
    // Without TLS only a mechanism that does not send the password itself.
    expect(
      loadConfig({
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
      }).KAFKA_SASL_MECHANISM,
    ).toBe('scram-sha-512');
  });

  it('refuses SASL plain without KAFKA_SSL: the password would cross the network in clear', () => {
    expect(() =>
      loadConfig({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 's3cret' }),
    ).toThrow(/KAFKA_SASL_MECHANISM: plain sends the password in clear without TLS: set KAFKA_SSL=true/);
  });

  it('names what is wrong or missing, never the password', () => {
    expect(problems({ KAFKA_SSL: 'maybe' })).toMatch(/KAFKA_SSL/);
    expect(problems({ KAFKA_SASL_MECHANISM: 'kerberos' })).toMatch(/KAFKA_SASL_MECHANISM/);
    expect(problems({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_PASSWORD: 'p' })).toMatch(
      /KAFKA_SASL_USERNAME: needed with KAFKA_SASL_MECHANISM/,
    );
    const noMechanism = problems({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'hunter2' });
    expect(noMechanism).toMatch(/KAFKA_SASL_MECHANISM: needed with KAFKA_SASL_USERNAME/);
    expect(noMechanism).not.toContain('hunter2');
    expect(problems({ KAFKA_SSL_CA_FILE: '/etc/ca.pem' })).toMatch(/KAFKA_SSL_CA_FILE: needs KAFKA_SSL=true/);
    expect(problems({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: '/c.pem' })).toMatch(
      /KAFKA_SSL_KEY_FILE: needed with KAFKA_SSL_CERT_FILE/,
    );
  });
});
