/**
 * What is wrong with the params box's JSON, and where: "line 3, column 14: Expected ',' or '}' after
 * property value". The browser's JSON.parse names a character position (V8: "… in JSON at position 42",
 * newer ones add "(line 3 column 14)"); the line and column are counted here from that position, so the
 * place is given whatever the browser's wording. Undefined when the text is JSON (or empty: no params).
 */
export function jsonProblem(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /at position (\d+)/.exec(message);
    // No position: the text ended too soon ("Unexpected end of JSON input"), i.e. at its end.
    const position = at ? Number(at[1]) : text.length;
    const what = message
      .replace(/\s*\(line \d+ column \d+\)/, '')
      .replace(/\s*in JSON at position \d+/, '')
      .replace(/^JSON\.parse: /, '')
      .replace(/\s*of the JSON data$/, '');
    return `${where(text, position)}: ${what}`;
  }
}

/** "line L, column C" (both from 1) of the character at `position`. */
function where(text: string, position: number): string {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}`;
}
