import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** Words that look like metric names in PromQL but are not. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects (enough PromQL for our rules and panels): strings,
 * label matchers, range and subquery brackets (which may hold Grafana's $__rate_interval) and grouping
 * clauses are dropped first; then every identifier that is not a function call, a keyword, or part of
 * a number is a metric name.
 */
export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = m[0];
    const at = m.index;
    if (/^\s*\(/.test(s.slice(at + word.length))) continue; // a function or an aggregation
    if (KEYWORDS.has(word.toLowerCase())) continue;
    if (at > 0 && /[0-9.]/.test(s[at - 1]!)) continue; // 1e3, 5m
    names.add(word);
  }
  return [...names];
}

const root = join(import.meta.dirname, '../..');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The alert rules shipped in monitoring/prometheus/rules/. */
export function alertRules(): AlertRule[] {
  const file = parse(readFileSync(join(root, 'monitoring/prometheus/rules/mailstats.rules.yml'), 'utf8')) as {
    groups: { name: string; rules: AlertRule[] }[];
  };
  return file.groups.flatMap((g) => g.rules);
}

export interface DashboardPanel {
  title: string;
  targets: { expr: string; legendFormat?: string }[];
}

/** The panels of the shipped Grafana dashboard. */
export function dashboardPanels(): DashboardPanel[] {
  return (
    JSON.parse(readFileSync(join(root, 'monitoring/grafana/dashboards/mailstats.json'), 'utf8')) as {
      panels: DashboardPanel[];
    }
  ).panels;
}
