import { describe, expect, it } from 'vitest';
import { jsonProblem } from '../../dashboard/src/json-problem.js';

/** The params box's JSON problems name the line and column (counted from 1) and what is wrong. */
describe('jsonProblem', () => {
  it('is undefined for JSON and for an empty box', () => {
    expect(jsonProblem('{"a": 1}')).toBeUndefined();
    expect(jsonProblem('  \n')).toBeUndefined();
  });

  it('a trailing comma: the line and column of the character after it', () => {
    const text = '{\n  "order": {\n    "id": 5,\n  }\n}';
    // Line 4 is "  }": the "}" at column 3 is where a property name was expected.
    expect(jsonProblem(text)).toMatch(/^line 4, column 3: \S/);
  });

  it('a missing quote on line 2', () => {
    const text = '{\n  name: "Ana"\n}';
    expect(jsonProblem(text)).toMatch(/^line 2, column 3: \S/);
  });

  it('text cut short: at its end', () => {
    const text = '{"a": [1, 2';
    expect(jsonProblem(text)).toMatch(/^line 1, column 12: /);
  });

  it('says what, without repeating the position', () => {
    const problem = jsonProblem('{"a": 1 "b": 2}')!;
    expect(problem).toMatch(/^line 1, column 9: /);
    expect(problem).not.toMatch(/position/);
  });
});
