import { readFileSync } from 'node:fs';
import { adminPost } from './admin-http.js';
import { UsageError } from './commands.js';

/** `erase --list N --subscriber S` or `--file F` (lines `list_id,subscriber_id`), docs/lifecycle.md. */

interface Pair {
  list_id: number;
  subscriber_id: number;
}
interface ErasedList {
  list_id: number;
  subscribers: number;
  deleted: number;
}

/** Pairs per request: one DELETE per list serves any number of subscribers at about the same cost. */
const PAIRS_PER_REQUEST = 10_000;

const positive = (text: string | undefined) => {
  const n = Number(text?.trim());
  return text !== undefined && /^\s*\d+\s*$/.test(text) && Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/** The pairs of a file: `list_id,subscriber_id` per line; blank lines and a header line are skipped. */
export function pairsOfFile(file: string): Pair[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--file ${file}: cannot be read (${(err as Error).message})`);
  }
  const pairs: Pair[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || (i === 0 && /^list_id\s*,\s*subscriber_id$/.test(line))) return;
    const [list, subscriber, extra] = line.split(',');
    const list_id = positive(list);
    const subscriber_id = positive(subscriber);
    if (list_id === undefined || subscriber_id === undefined || extra !== undefined)
      throw new UsageError(
        `--file ${file} line ${i + 1}: expected list_id,subscriber_id (two positive integers)`,
      );
    pairs.push({ list_id, subscriber_id });
  });
  if (pairs.length === 0) throw new UsageError(`--file ${file}: no list_id,subscriber_id lines`);
  return pairs;
}

export function erasePairs(o: { list?: string; subscriber?: string; file?: string }): Pair[] {
  if (o.file !== undefined) {
    if (o.list !== undefined || o.subscriber !== undefined)
      throw new UsageError('give either --file or --list and --subscriber, not both');
    return pairsOfFile(o.file);
  }
  const list_id = positive(o.list);
  const subscriber_id = positive(o.subscriber);
  if (list_id === undefined) throw new UsageError('--list must be a positive integer (or give --file)');
  if (subscriber_id === undefined)
    throw new UsageError('--subscriber must be a positive integer (or give --file)');
  return [{ list_id, subscriber_id }];
}

export async function erase(
  o: { list?: string; subscriber?: string; file?: string },
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
  for (const l of totals.values())
    console.log(
      `list ${l.list_id}: ${l.subscribers} subscriber${l.subscribers === 1 ? '' : 's'} erased, ${l.deleted} records deleted`,
    );
  return 0;
}
