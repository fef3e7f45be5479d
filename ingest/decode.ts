import { checkRecord, type MailstatsRecord } from '../shared/records/index.js';

/** One item of an ingest body: where it stood (line, from 1) and its decoded JSON, or why not. */
export type DecodedItem = { line: number; value: unknown } | { line: number; error: string };

export class UnreadableBody extends Error {}

/**
 * A body is a JSON array of records, or NDJSON (one record per line, blank lines ignored). In an array
 * the "line" is the element's position; in NDJSON it is the physical line.
 */
export function decodeBody(text: string): DecodedItem[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      throw new UnreadableBody(`body is not valid JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new UnreadableBody('body must be a JSON array or NDJSON');
    return parsed.map((value, i) => ({ line: i + 1, value }));
  }
  const items: DecodedItem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      items.push({ line: i + 1, value: JSON.parse(line) });
    } catch (err) {
      items.push({ line: i + 1, error: `not valid JSON: ${(err as Error).message}` });
    }
  }
  if (items.length > 0 && items.every((it) => 'error' in it)) {
    throw new UnreadableBody('body is neither a JSON array nor NDJSON');
  }
  return items;
}

export interface Rejection {
  line: number;
  reason: string;
}

/** Validate decoded items: the records that pass (with their original JSON value), and why the rest fail. */
export function validateItems(items: DecodedItem[]): {
  valid: { record: MailstatsRecord; value: unknown }[];
  rejected: Rejection[];
} {
  const valid: { record: MailstatsRecord; value: unknown }[] = [];
  const rejected: Rejection[] = [];
  for (const item of items) {
    if ('error' in item) {
      rejected.push({ line: item.line, reason: item.error });
      continue;
    }
    const check = checkRecord(item.value);
    if (check.ok) valid.push({ record: check.record, value: item.value });
    else rejected.push({ line: item.line, reason: check.reason });
  }
  return { valid, rejected };
}
