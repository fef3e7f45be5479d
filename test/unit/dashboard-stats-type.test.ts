import { describe, expectTypeOf, it } from 'vitest';
import type { StatsRecord as PageRecord } from '../../dashboard/src/stats.js';
import type { StatsRecord as ServerRecord } from '../../query-api/stats/answer.js';

/** The page keeps its own copy of the stats record (it imports no server code): the two must not drift. */
describe('dashboard stats record', () => {
  it('is the server’s automation.stats record, field for field', () => {
    expectTypeOf<PageRecord>().toEqualTypeOf<ServerRecord>();
  });
});
