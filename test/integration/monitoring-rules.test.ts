// Modes: embedded only — the Prometheus rules files, no store
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { alertRules, metricNames } from '../support/promql.js';

/**
 * The shipped Prometheus files through the real promtool (Debian's `prometheus` package; .ci/run
 * installs it): rules and scrape config are valid, and the rules' unit tests pass. Plus what promtool
 * does not check: every alert's `for`, severity and annotations, a runbook section per alert in
 * docs/monitoring.md, and a firing and a silent case per alert in the unit tests.
 */
const root = resolve(import.meta.dirname, '../..');
const dir = join(root, 'monitoring/prometheus');

function promtool(...args: string[]) {
  const bin = ['/usr/bin/promtool', 'promtool'].find(
    (b) => spawnSync(b, ['--version'], { stdio: 'ignore' }).status === 0,
  );
  if (!bin)
    throw new Error(
      'promtool is missing: apt-get install prometheus (Debian; .ci/run installs it when root)',
    );
  const r = spawnSync(bin, args, { cwd: root, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** GitHub's anchor of a markdown heading. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');

describe('Prometheus rules and config (promtool)', () => {
  it('promtool check rules: the alert rules are valid', () => {
    const r = promtool('check', 'rules', join(dir, 'rules/mailstats.rules.yml'));
    expect(r.out).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status, r.out).toBe(0);
  });

  it('promtool check config: the scrape config is valid and loads the rules', () => {
    const r = promtool('check', 'config', join(dir, 'prometheus.yml'));
    expect(r.out).toMatch(/SUCCESS: 1 rule files found/);
    expect(r.status, r.out).toBe(0);
  });

  it('promtool test rules: every alert fires when it should and stays silent when it should not', () => {
    const r = promtool('test', 'rules', join(dir, 'tests/mailstats.rules.test.yml'));
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status, r.out).toBe(0);
  });

  it('and the unit tests can fail: a rule with a changed threshold fails them', () => {
    // The same tests against a copy of the rules where the 5xx ratio threshold is 3% instead of 1%.
    const tmp = spawnSync('mktemp', ['-d'], { encoding: 'utf8' }).stdout.trim();
    const rules = readFileSync(join(dir, 'rules/mailstats.rules.yml'), 'utf8').replace(
      ') > 0.01',
      ') > 0.03',
    );
    spawnSync('mkdir', ['-p', join(tmp, 'rules'), join(tmp, 'tests')]);
    spawnSync('cp', [join(dir, 'tests/mailstats.rules.test.yml'), join(tmp, 'tests/')]);
    spawnSync('sh', ['-c', 'cat > "$1"', 'sh', join(tmp, 'rules/mailstats.rules.yml')], { input: rules });
    const r = promtool('test', 'rules', join(tmp, 'tests/mailstats.rules.test.yml'));
    spawnSync('rm', ['-rf', tmp]);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(/alertname: MailstatsApiErrorRate/);
  });

  it('every alert has `for`, a severity, a summary, a description and a runbook section in docs/monitoring.md', () => {
    const docs = readFileSync(join(root, 'docs/monitoring.md'), 'utf8');
    const anchors = new Set([...docs.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
    const rules = alertRules();
    expect(rules.length).toBeGreaterThanOrEqual(12);
    for (const rule of rules) {
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description?.length, rule.alert).toBeGreaterThan(80);
      const url = rule.annotations?.runbook_url ?? '';
      expect(url, rule.alert).toBe(`docs/monitoring.md#${rule.alert.toLowerCase()}`);
      expect(anchors.has(url.split('#')[1]!), `${rule.alert}: no section "${url}"`).toBe(true);
    }
  });

  it('the unit tests hold a firing and a silent evaluation for every alert', () => {
    const tests = parse(readFileSync(join(dir, 'tests/mailstats.rules.test.yml'), 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of alertRules()) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect(
        mine.some((c) => c.exp_alerts.length > 0),
        `${alert} never fires in a test`,
      ).toBe(true);
      expect(
        mine.some((c) => c.exp_alerts.length === 0),
        `${alert} is never silent in a test`,
      ).toBe(true);
    }
  });

  it('metric names are read out of PromQL (the live-metrics test relies on it)', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (job, le) (rate(a_seconds_bucket{operation="x.y", le!="1e3"}[$__rate_interval]))) > 0.25',
      ),
    ).toEqual(['a_seconds_bucket']);
    expect(
      metricNames(
        'sum by (job) (max by (job, topic) (lag)) > 0 and on (job) (time() - max by (job) (last_write)) > 300 unless b offset 5m',
      ),
    ).toEqual(['lag', 'last_write', 'b']);
    expect(metricNames('up{job=~"mailstats-.*"} == 0')).toEqual(['up']);
  });
});
