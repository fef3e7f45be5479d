import { describe, expect, it } from 'vitest';
import { JsonAnswer } from '../../query-api/api12/json-answer.js';

describe('JsonAnswer.fromArray', () => {
  it.each([
    ['no element', []],
    ['one', [{ date: '2026-01-02', n: 1 }]],
    ['several, with text past ASCII', [{ a: 'ăîșț €', b: null }, { c: [1, 2, { d: '"q"\n' }] }, 3, 'x']],
  ])('%s: the bytes of JSON.stringify, and the value it was made from', (_, items: unknown[]) => {
    const answer = JsonAnswer.fromArray(items);
    expect(answer.bytes.equals(Buffer.from(JSON.stringify(items), 'utf8'))).toBe(true);
    expect(answer.value()).toBe(items);
  });
});
