import type { DestinationStream } from 'pino';

/** pino's numeric levels, as a terminal reader knows them. */
const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Local wall-clock time to the millisecond: a terminal reader compares it with their own clock. */
function clock(epochMs: unknown): string {
  const d = new Date(typeof epochMs === 'number' ? epochMs : Date.now());
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A field value on one line: plain when it has no space or quote, else JSON-quoted. */
function value(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : (s ?? String(v));
}

const fields = (entries: [string, unknown][]) =>
  entries
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}=${value(v)}`)
    .join('');

/**
 * A request line reads as `GET automation.stats 200 12.3 ms`: the operation when there is one, else
 * the route's pattern (never the path: it may hold an api key), then the status ("-" when the client
 * went away first) and the time taken.
 */
function requestText(e: Record<string, unknown>): string {
  const { method, route, operation, status, ms, req_id, ...rest } = e;
  const what = typeof operation === 'string' ? operation : typeof route === 'string' ? route : '(no route)';
  const took = typeof ms === 'number' ? `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms` : '';
  return `${String(method)} ${what} ${status === null ? '-' : String(status)} ${took}${fields([
    ['req_id', req_id],
    ...Object.entries(rest),
  ])}`;
}

/** One pino JSON entry as one line (plus an error's stack, indented, below it). */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { level, time, msg, err, ...rest } = entry;
  const label = (LEVELS[level as number] ?? String(level)).padEnd(5);
  let text =
    msg === 'request' && 'method' in rest
      ? requestText(rest)
      : `${String(msg ?? '')}${fields(Object.entries(rest))}`;
  let stack = '';
  if (err && typeof err === 'object') {
    const e = err as { type?: string; message?: string; stack?: string; code?: unknown };
    text += `: ${e.type ?? 'Error'}: ${e.message ?? ''}${e.code !== undefined ? ` (${String(e.code)})` : ''}`;
    // The stack's first line repeats the message already shown.
    const frames = (e.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
    if (frames.length) stack = `\n${frames.join('\n')}`;
  } else if (err !== undefined) text += fields([['err', err]]);
  return `${clock(time)} ${label} ${text}${stack}\n`;
}

/** A pino destination that writes each entry to `out` as a human line instead of JSON. */
export function prettyDestination(out: { write(s: string): unknown }): DestinationStream {
  return {
    write(chunk: string) {
      // pino writes one entry per call, newline-terminated.
      out.write(
        chunk
          .split('\n')
          .filter((l) => l !== '')
          .map(prettyLine)
          .join(''),
      );
    },
  };
}
