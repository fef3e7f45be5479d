import type { DecodedItem } from '../ingest/sink.js';

export class UnreadableBody extends Error {}

/**
 * A body is a JSON array of records when it parses as one as a whole; otherwise it is NDJSON, one
 * record per line (blank lines ignored), and a line that is not valid JSON is that line's rejection
 * (docs/records.md "Ingest over HTTP"). A line that is valid JSON but not a record object (`[]`, `5`) is rejected by
 * validation, also only for its line. In an array the "line" is the element's position; in NDJSON it
 * is the physical line. Only a body of which no line is JSON at all cannot be read.
 */
export function decodeBody(text: string): DecodedItem[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const whole = parseJson(trimmed);
    if (whole.ok && Array.isArray(whole.value))
      return whole.value.map((value, i) => ({ line: i + 1, value }));
  }
  const items: DecodedItem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const parsed = parseJson(line);
    items.push(
      parsed.ok
        ? { line: i + 1, value: parsed.value }
        : { line: i + 1, error: `not valid JSON: ${parsed.error}` },
    );
  }
  if (items.length > 0 && items.every((it) => 'error' in it)) {
    throw new UnreadableBody('body is neither a JSON array nor NDJSON');
  }
  return items;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}
