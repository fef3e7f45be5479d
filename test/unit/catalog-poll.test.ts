import { describe, expect, it } from 'vitest';
import { Catalog } from '../../shared/catalog/catalog.js';
import type { Db } from '../../shared/clickhouse/client.js';
import { createLogger } from '../../shared/log.js';

describe('the catalog change poll', () => {
  it('stops for good, without a warning, when stopped while a poll is in flight', async () => {
    // A poll in flight at stopPolling() used to schedule the next one when it finished, so a closed
    // service kept polling its closed connection, logging "catalog poll failed" every interval.
    let reads = 0;
    let fail: ((err: Error) => void) | undefined;
    const db = {
      read: async () => {
        reads++;
        await new Promise<void>((_, r) => (fail = r));
      },
    } as unknown as Db;
    const lines: string[] = [];
    const catalog = new Catalog(
      db,
      'UTC',
      createLogger('warn', { write: (l: string) => void lines.push(l) }),
    );
    catalog.startPolling(10);
    await new Promise((r) => setTimeout(r, 20));
    expect(reads).toBe(1);
    catalog.stopPolling();
    fail!(new Error('ClickHouse connection is closing'));
    await new Promise((r) => setTimeout(r, 100));
    expect(reads).toBe(1);
    expect(lines).toEqual([]);
  });
});
