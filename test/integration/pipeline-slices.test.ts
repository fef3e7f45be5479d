// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * A batch the caller can re-form after a crash (it carries a token: Kafka's recorded range) is written
 * in one slice whatever INGEST_BATCH_SIZE says, so a retry after a change of that setting re-forms the
 * very same insert (same token) instead of slices with other tokens.
 */
const records = (prefix: string, n: number): MailstatsRecord[] =>
  Array.from({ length: n }, (_, i) => {
    const check = checkRecord({
      type: 'send',
      event_id: `${prefix}-${i}`,
      list_id: 5,
      workflow_id: 1,
      subscriber_id: i + 1,
      timestamp: '2026-11-10T10:00:00Z',
    });
    if (!check.ok) throw new Error(check.reason);
    return check.record;
  });

describe('pipeline slices', () => {
  let svc: TestService;
  const inserts: string[] = [];
  beforeAll(async () => {
    svc = await startTestService({ INGEST_BATCH_SIZE: '10' });
    svc.db.faultInjector = async (what) => {
      if (what === 'INSERT INTO events') inserts.push(what);
    };
  });
  afterAll(() => svc?.stop());

  it('a batch with a token is one insert; without, INGEST_BATCH_SIZE slices it', async () => {
    await svc.pipeline.write(records('tok', 25), 'group:topic:0:0-24:digest');
    expect(inserts).toHaveLength(1);
    inserts.length = 0;
    await svc.pipeline.write(records('http', 25));
    expect(inserts).toHaveLength(3);
  });
});
