import { readFileSync, writeFileSync } from 'node:fs';
import { AdminError, adminFetch, adminPost } from './admin-http.js';
import { UsageError } from './commands.js';
import { parseErasureTime } from '../shared/erasure-time.js';

/**
 * `erase --list N --subscriber S [--at TIME]` or `--file F` (lines `list_id,subscriber_id[,erased_at]`),
 * and `erasures export [FILE]`, the erasure log those lines replay (docs/lifecycle.md).
 */

interface Pair {
  list_id: number;
  subscriber_id: number;
  /** RFC 3339: an earlier erasure replayed with its original time (absent: erased now). */
  erased_at?: string;
}
interface ErasedList {
  list_id: number;
  subscribers: number;
  deleted: number;
}

/** Pairs per request: one DELETE per list serves any number of subscribers at about the same cost. */
const PAIRS_PER_REQUEST = 10_000;
const HEADER = /^list_id\s*,\s*subscriber_id(\s*,\s*erased_at)?$/;

const positive = (text: string | undefined) => {
  const n = Number(text?.trim());
  return text !== undefined && /^\s*\d+\s*$/.test(text) && Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/**
 * An erasure time as the service takes it (shared/erasure-time.ts), as RFC 3339 UTC; throws a usage
 * error naming `what` and the problem (an ambiguous number among them). The future is the service's to say.
 */
export function erasureTime(text: string, what: string): string {
  const t = parseErasureTime(text);
  if ('problem' in t) throw new UsageError(`${what}: ${t.problem}`);
  return new Date(t.ms).toISOString();
}

/**
 * The pairs of a file: `list_id,subscriber_id` per line, optionally `,erased_at` (the file
 * `erasures export` writes); blank lines and a header line are skipped. `at`: the time of lines without one.
 */
export function pairsOfFile(file: string, at?: string): Pair[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--file ${file}: cannot be read (${(err as Error).message})`);
  }
  const pairs: Pair[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || (i === 0 && HEADER.test(line))) return;
    const [list, subscriber, time, extra] = line.split(',');
    const list_id = positive(list);
    const subscriber_id = positive(subscriber);
    if (list_id === undefined || subscriber_id === undefined || extra !== undefined)
      throw new UsageError(
        `--file ${file} line ${i + 1}: expected list_id,subscriber_id[,erased_at] (two positive integers, then optionally a time)`,
      );
    const erased_at =
      time === undefined || time.trim() === ''
        ? at
        : erasureTime(time, `--file ${file} line ${i + 1}: erased_at`);
    pairs.push({ list_id, subscriber_id, ...(erased_at === undefined ? {} : { erased_at }) });
  });
  if (pairs.length === 0) throw new UsageError(`--file ${file}: no list_id,subscriber_id lines`);
  return pairs;
}

export function erasePairs(o: { list?: string; subscriber?: string; file?: string; at?: string }): Pair[] {
  const at = o.at === undefined ? undefined : erasureTime(o.at, '--at');
  if (o.file !== undefined) {
    if (o.list !== undefined || o.subscriber !== undefined)
      throw new UsageError('give either --file or --list and --subscriber, not both');
    return pairsOfFile(o.file, at);
  }
  const list_id = positive(o.list);
  const subscriber_id = positive(o.subscriber);
  if (list_id === undefined) throw new UsageError('--list must be a positive integer (or give --file)');
  if (subscriber_id === undefined)
    throw new UsageError('--subscriber must be a positive integer (or give --file)');
  return [{ list_id, subscriber_id, ...(at === undefined ? {} : { erased_at: at }) }];
}

export async function erase(
  o: { list?: string; subscriber?: string; file?: string; at?: string },
  url: string,
): Promise<number> {
  const pairs = erasePairs(o);
  const totals = new Map<number, ErasedList>();
  for (let i = 0; i < pairs.length; i += PAIRS_PER_REQUEST) {
    const { lists } = await adminPost<{ lists: ErasedList[] }>(url, '/erase', {
      pairs: pairs.slice(i, i + PAIRS_PER_REQUEST),
    });
    for (const l of lists) {
      const t = totals.get(l.list_id) ?? { list_id: l.list_id, subscribers: 0, deleted: 0 };
      t.subscribers += l.subscribers;
      t.deleted += l.deleted;
      totals.set(l.list_id, t);
    }
  }
  for (const l of totals.values()) {
    const who = `${l.subscribers} subscriber${l.subscribers === 1 ? '' : 's'}`;
    // Nothing to delete is not an error (the erasure is recorded, and filters late copies), but it is
    // not "erased" either: often a wrong list, subscriber id or time.
    console.log(
      l.deleted === 0
        ? `list ${l.list_id}: no records matched (${who}, none with activity on this list up to the erasure time); ` +
            'the erasure is recorded: later copies of such activity are not counted'
        : `list ${l.list_id}: ${who} erased, ${l.deleted} records deleted`,
    );
  }
  return 0;
}

/**
 * `erasures export [FILE]`: the erasure log as CSV (`list_id,subscriber_id,erased_at`), to FILE or
 * stdout; `erase --file` replays it with the original times.
 */
export async function erasuresExport(file: string | undefined, url: string): Promise<number> {
  const res = await adminFetch(url, '/erasures/export');
  const lines = (await res.text()).split('\n').filter((l) => l.trim() !== '');
  const rows = lines.map((l) => {
    const e = JSON.parse(l) as { list_id: number; subscriber_id: number; erased_at: string };
    return `${e.list_id},${e.subscriber_id},${e.erased_at}\n`;
  });
  const text = 'list_id,subscriber_id,erased_at\n' + rows.join('');
  if (!file) {
    process.stdout.write(text);
    return 0;
  }
  try {
    writeFileSync(file, text);
  } catch (err) {
    throw new AdminError(`${file}: cannot be written (${(err as Error).message})`);
  }
  console.error(`${rows.length} erasure${rows.length === 1 ? '' : 's'} written to ${file}`);
  return 0;
}
