import { rawRequest } from './raw-http.js';

/** One sample of a Prometheus text exposition: `name{a="x",b="y"} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parse the text format (enough of it for our own metrics: no escaped quotes in label values). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[k!] = v!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the sample with this name whose labels include `labels` (0 when there is none). */
export function metricValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const hits = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return hits.reduce((sum, s) => sum + s.value, 0);
}

/**
 * On a connection of its own: fetch() reused an idle keep-alive connection that the server was closing
 * at that moment once under load (ECONNRESET in a CI run), as a scraper with its own connection does not.
 */
export async function scrape(baseUrl: string): Promise<Sample[]> {
  const res = await rawRequest(baseUrl, { target: '/metrics' });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  if (!res.headers['content-type']?.startsWith('text/plain')) throw new Error('not text/plain');
  return parseMetrics(res.text);
}
