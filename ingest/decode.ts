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
