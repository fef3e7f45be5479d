// Modes: embedded only — backup and restore of a DATA_DIR kept under RAW_RETENTION_DAYS (server mode's
// restore is lifecycle-server-backup.test.ts)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addDays, localDate } from '../../shared/dates.js';
import { adminCli } from '../support/admin-cli.js';
import { Restartable } from '../support/restartable.js';
import { tenant } from '../support/service.js';

const ADMIN = 'retention-admin-token-0123456789-abcdef012345';
const USER = 5;
const KEY = 'retention-backup-key';
const LIST = 7;
const RETENTION = '30';

/**
 * A store kept under a raw-event retention (its events table carries a TTL the start sets) is backed up
 * and restored like any other (docs/lifecycle.md, "Retention"): the restore's tables take the backup's
 * TTL before the engine compares them, and the restored store answers every day as the source did,
 * the days whose raw records expired included.
 */
describe('backup and restore under a raw-event retention', () => {
  const work = mkdtempSync(join(tmpdir(), 'mailstats-retention-backup-'));
  const env = { ADMIN_TOKEN: ADMIN, BACKUP_ROOT: work, RAW_RETENTION_DAYS: RETENTION };
  const source = new Restartable(env);
  const restored = new Restartable(env);
  afterAll(async () => {
    await source.destroy();
    await restored.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  it('restores a retained store whose old raw records expired, answering every day the same', async () => {
    await source.start();
    expect(
      (await source.ingest(tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }))).status,
    ).toBe(200);
    // A send and an open a day over 120 days: the older 90 are past the retention.
    const now = Date.now();
    const recs = [];
    for (let d = 2; d <= 120; d++)
      for (const type of ['send', 'open'] as const)
        recs.push({
          type,
          event_id: `${type}-${d}`,
          list_id: LIST,
          subscriber_id: (d % 7) + 1,
          workflow_id: (d % 3) + 1,
          timestamp: now - d * 86_400_000,
        });
    expect((await source.ingest(recs)).body.rejected).toEqual([]);
    // What the engine does in its merges, now: the expired parts are dropped.
    await source.svc!.db.command('ALTER TABLE events MATERIALIZE TTL', {}, { mutations_sync: '2' });
    await source.svc!.db.command('OPTIMIZE TABLE events FINAL');
    const [left] = await source.svc!.db.query<{ n: number }>(
      'SELECT count() AS n FROM events',
      {},
      {
        output_format_json_quote_64bit_integers: 0,
      },
    );
    expect(left!.n).toBeLessThan(recs.length);

    const today = localDate(now, 'Europe/Bucharest');
    const path = `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=${addDays(today, -125)}&stop_date=${today}`;
    const before = await source.get(path);
    expect(before.length).toBeGreaterThanOrEqual(118);

    const dir = join(work, 'b1');
    const b = await adminCli(['backup', dir], { MAILSTATS_URL: source.svc!.url!, ADMIN_TOKEN: ADMIN });
    expect(b.code, b.err).toBe(0);
    await source.stop();
    const r = await adminCli(['restore', dir], { DATA_DIR: restored.dir });
    expect(r.code, r.err + r.out).toBe(0);
    await restored.start();
    expect(await restored.get(path)).toEqual(before);
  });
});
