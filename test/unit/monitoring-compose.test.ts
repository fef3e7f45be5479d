import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

/** The monitoring profile of docker-compose.yml and the files it provisions (docs/monitoring.md). */
const root = resolve(import.meta.dirname, '../..');
const read = (f: string) => readFileSync(join(root, f), 'utf8');

interface Service {
  image?: string;
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
}
const { services } = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
};

/** `./host/path:/container/path[:ro]` → the host path, checked to exist in the repository. */
const mounts = (s: Service) =>
  (s.volumes ?? []).map((v) => {
    const [host, container, mode] = v.split(':');
    return { host: host!, container: container!, mode };
  });

describe('docker compose --profile monitoring', () => {
  it('adds Prometheus and Grafana only under the monitoring profile', () => {
    const monitoring = Object.keys(services).filter((n) => services[n]!.profiles?.includes('monitoring'));
    expect(monitoring.sort()).toEqual(['grafana', 'prometheus']);
    expect(services.prometheus!.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(services.grafana!.image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
  });

  it('publishes them on loopback only', () => {
    expect(services.prometheus!.ports).toEqual(['127.0.0.1:${PROMETHEUS_PORT:-9090}:9090']);
    expect(services.grafana!.ports).toEqual(['127.0.0.1:${GRAFANA_PORT:-3000}:3000']);
  });

  it('Grafana: an anonymous read-only viewer, and no login at all', () => {
    const env = services.grafana!.environment!;
    expect(env.GF_AUTH_ANONYMOUS_ENABLED).toBe('true');
    expect(env.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe('Viewer');
    expect(env.GF_AUTH_DISABLE_LOGIN_FORM).toBe('true');
    expect(env.GF_AUTH_BASIC_ENABLED).toBe('false');
    expect(Object.keys(env).some((k) => /PASSWORD/.test(k))).toBe(false);
  });

  it('mounts the repository’s config, rules, provisioning and dashboards read-only, all of which exist', () => {
    const all = [...mounts(services.prometheus!), ...mounts(services.grafana!)];
    for (const m of all) {
      expect(m.mode).toBe('ro');
      expect(existsSync(join(root, m.host)), m.host).toBe(true);
    }
    const at = (c: string) => all.find((m) => m.container === c)?.host;
    expect(at('/etc/prometheus/prometheus.yml')).toBe('./monitoring/prometheus/prometheus.yml');
    expect(at('/etc/prometheus/rules')).toBe('./monitoring/prometheus/rules');
    expect(at('/etc/grafana/provisioning')).toBe('./monitoring/grafana/provisioning');
    expect(at('/etc/grafana/dashboards')).toBe('./monitoring/grafana/dashboards');
    expect(services.prometheus!.command).toContain('--config.file=/etc/prometheus/prometheus.yml');
  });

  it('Prometheus scrapes both roles by their compose service names, on the port they listen on', () => {
    const config = parse(read('monitoring/prometheus/prometheus.yml')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; port: number }[] }[];
    };
    const job = (name: string) => config.scrape_configs.find((c) => c.job_name === name);
    expect(job('mailstats-api')?.dns_sd_configs?.[0]).toMatchObject({ names: ['api'], port: 8080 });
    expect(job('mailstats-ingest')?.dns_sd_configs?.[0]).toMatchObject({ names: ['ingest'], port: 8080 });
    for (const role of ['api', 'ingest']) expect(services[role]!.environment).toMatchObject({ PORT: '8080' });
    expect(config.rule_files).toEqual(['rules/*.yml']);
  });

  it('Grafana provisions the Prometheus datasource the dashboard names, and the dashboards folder', () => {
    const ds = parse(read('monitoring/grafana/provisioning/datasources/prometheus.yml')) as {
      datasources: { uid: string; type: string; url: string }[];
    };
    expect(ds.datasources).toEqual([
      expect.objectContaining({
        uid: 'mailstats-prometheus',
        type: 'prometheus',
        url: 'http://prometheus:9090',
      }),
    ]);
    const provider = parse(read('monitoring/grafana/provisioning/dashboards/mailstats.yml')) as {
      providers: { type: string; options: { path: string } }[];
    };
    expect(provider.providers[0]).toMatchObject({
      type: 'file',
      options: { path: '/etc/grafana/dashboards' },
    });

    const dashboard = JSON.parse(read('monitoring/grafana/dashboards/mailstats.json')) as {
      uid: string;
      panels: { title: string; datasource: { uid: string }; targets: { expr: string }[] }[];
    };
    expect(dashboard.uid).toBe('mailstats-overview');
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(8);
    for (const p of dashboard.panels) {
      expect(p.datasource.uid, p.title).toBe('mailstats-prometheus');
      expect(p.targets.length, p.title).toBeGreaterThan(0);
    }
    const titles = dashboard.panels.map((p) => p.title);
    for (const t of [
      'Request rate by operation',
      'Errors by operation and status',
      'Latency quantiles',
      'Ingest rate by outcome',
      'Kafka consumer lag',
      'Batch write duration',
      'Cache hit ratios',
      'ClickHouse errors',
      'Process memory',
      'Event-loop lag',
    ])
      expect(titles).toContain(t);
  });
});
