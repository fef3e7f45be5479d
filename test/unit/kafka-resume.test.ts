import { describe, expect, it } from 'vitest';
import { resumeOffset } from '../../ingest/kafka/ranges.js';

/** The store recorded offsets 100–199 of a partition last (docs/lifecycle.md, "backup and restore"). */
const range = { first: '100', last: '199', firstHash: 'f', lastHash: 'l' };

describe('where a partition is read from when the group committed past the store', () => {
  it('changes nothing while the committed offset is at most the recorded range’s end + 1', () => {
    for (const committed of ['-1', '0', '100', '150', '200'])
      expect(resumeOffset(range, committed, '0')).toBe(undefined);
  });

  it('goes back to the recorded range’s first offset when the group committed past it', () => {
    expect(resumeOffset(range, '201', '0')).toEqual({ offset: '100' });
    expect(resumeOffset(range, '5000', '100')).toEqual({ offset: '100' });
  });

  it('reads from the log start, naming the lost offsets, when the broker deleted what the store lacks', () => {
    // The range's end + 1 (200) to the log start − 1 (299) are gone; 300–399 are read again.
    expect(resumeOffset(range, '400', '300')).toEqual({ offset: '300', lost: { from: '200', to: '299' } });
    // Nothing left to read again: all the store lacks is gone.
    expect(resumeOffset(range, '400', '400')).toEqual({ lost: { from: '200', to: '399' } });
    // The range itself can no longer be re-formed, but nothing after it is gone.
    expect(resumeOffset(range, '400', '150')).toEqual({ offset: '150' });
  });

  it('reads a partition the store never recorded from the log start when the group committed in it', () => {
    expect(resumeOffset(undefined, '-1', '0')).toBe(undefined);
    expect(resumeOffset(undefined, '0', '0')).toBe(undefined);
    expect(resumeOffset(undefined, '50', '50')).toBe(undefined);
    expect(resumeOffset(undefined, '50', '0')).toEqual({ offset: '0' });
    expect(resumeOffset(undefined, '50', '20')).toEqual({ offset: '20' });
  });
});
