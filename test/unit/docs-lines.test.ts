import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Pages a reader scans in a terminal or an editor: no line over 160 characters, so tables keep short
 * cells and the long explanations go into prose under them (docs/development.md "Tests").
 */
const root = resolve(import.meta.dirname, '../..');
const MAX = 160;
const PAGES = ['docs/configuration.md'];

describe('line length of the reference pages', () => {
  it.each(PAGES)(`%s has no line over ${MAX} characters`, (page) => {
    const long = readFileSync(join(root, page), 'utf8')
      .split('\n')
      .map((line, i) => ({ line: i + 1, length: [...line].length }))
      .filter((l) => l.length > MAX);
    expect(long).toEqual([]);
  });
});
