// Modes: embedded only — backup and restore of DATA_DIR; server mode: lifecycle-server-backup.test.ts
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  existsSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import type { RawActivity } from '../support/expected-stats.js';
import { activityStream, STREAM_LISTS, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import { Restartable } from '../support/restartable.js';
import { tenant } from '../support/service.js';

const ADMIN = 'backup-admin-token-0123456789-abcdef0123456789';
const USER = 6;
const KEY = 'backup-key';
const LISTS = STREAM_LISTS;
const SHAPES = ['', '&workflow_ids=2', '&workflow_ids=1,3,4', '&workflow_ids=2,3'];

/** backup during a continuous ingest, restore into an empty DATA_DIR: the same answers (docs/lifecycle.md). */
describe('backup and restore', () => {
  const work = mkdtempSync(join(tmpdir(), 'mailstats-backup-'));
  const source = new Restartable({ ADMIN_TOKEN: ADMIN, BACKUP_ROOT: work });
  const restored = new Restartable({ ADMIN_TOKEN: ADMIN, BACKUP_ROOT: work });
  const backupDir = join(work, 'b1');
  let model: RawActivity[] = [];

  beforeAll(async () => {
    await source.start();
    expect((await source.ingest(tenant({ userId: USER, apiKey: KEY, lists: LISTS }))).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await source.destroy();
    await restored.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const statsOf = (svc: Restartable, listId: number, extra: string) =>
    svc.get(`/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${listId}${STREAM_PERIOD}${extra}`);

  it('a backup taken while ingest goes on restores to a store that answers exactly as at the backup', async () => {
    // Continuous ingest: batches of 400 records, one POST each, until told to stop.
    const { wire, model: all } = activityStream(40_000, 41);
    const batches: { ids: Set<string>; sentAt: number; ackedAt?: number }[] = [];
    let stop = false;
    const ingesting = (async () => {
      for (let i = 0; i < wire.length && !stop; i += 400) {
        const batch = {
          ids: new Set(wire.slice(i, i + 400).map((w) => String(w.event_id))),
          sentAt: Date.now(),
        } as (typeof batches)[number];
        batches.push(batch);
        const r = await source.ingest(wire.slice(i, i + 400));
        expect(r.body.rejected).toEqual([]);
        batch.ackedAt = Date.now();
      }
    })();
    await new Promise((r) => setTimeout(r, 1_500));
    const asked = Date.now();
    const env = { MAILSTATS_URL: source.svc!.url!, ADMIN_TOKEN: ADMIN };
    const b = await adminCli(['backup', backupDir], env);
    const answered = Date.now();
    expect(b.code, b.err).toBe(0);
    expect(b.out).toMatch(new RegExp(`backup written to ${backupDir} \\(schema version \\d+, [\\d.]+ s\\)`));
    await new Promise((r) => setTimeout(r, 1_000));
    stop = true;
    await ingesting;
    expect(JSON.parse(readFileSync(join(backupDir, 'mailstats-backup.json'), 'utf8'))).toMatchObject({
      format: 'mailstats-backup',
      database: 'mailstats',
    });

    // The engine binds one data directory per process: the source stops before the restored one starts.
    await source.stop();
    // Restore (service stopped: a DATA_DIR of its own, empty) and start on it.
    const r = await adminCli(['restore', backupDir], { DATA_DIR: restored.dir });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/restored .* into /);
    await restored.start();

    // What the restored store holds, batch by batch: whole batches only, every batch acknowledged
    // before the backup was asked for, none sent after it answered.
    const [row] = (await restored.svc!.db.query<{ ids: string[] }>(
      'SELECT groupArray(event_id) AS ids FROM events',
    ))!;
    const held = new Set(row!.ids);
    for (const batch of batches) {
      const inside = [...batch.ids].filter((id) => held.has(id)).length;
      expect([0, batch.ids.size]).toContain(inside);
      if (batch.ackedAt !== undefined && batch.ackedAt < asked) expect(inside).toBe(batch.ids.size);
      if (batch.sentAt > answered) expect(inside).toBe(0);
    }
    expect(held.size).toBeGreaterThan(0);
    expect(held.size).toBeLessThan(all.length); // ingest went on after the backup
    model = all.filter((m) => held.has(m.event_id));
    for (const list of LISTS)
      for (const shape of SHAPES) {
        expect(await statsOf(restored, list.list_id, shape)).toEqual(streamStats(model, list, shape));
      }
  }, 600_000);

  it('refuses a non-empty DATA_DIR, a directory that is not a backup, a newer schema, a used backup directory', async () => {
    const env = { MAILSTATS_URL: restored.svc!.url!, ADMIN_TOKEN: ADMIN };
    const used = await adminCli(['backup', backupDir], env);
    expect(used.code).toBe(1);
    expect(used.err).toMatch(/is not empty: a backup goes into a new or empty directory/);

    const nonEmpty = await adminCli(['restore', backupDir], { DATA_DIR: source.dir });
    expect(nonEmpty.code).toBe(2);
    expect(nonEmpty.err).toMatch(/DATA_DIR .* is not empty; restore fills an empty data directory/);

    const empty = join(work, 'target');
    const notBackup = join(work, 'not-a-backup');
    mkdirSync(notBackup);
    writeFileSync(join(notBackup, 'x.txt'), 'hello');
    const r1 = await adminCli(['restore', notBackup], { DATA_DIR: empty });
    expect(r1.code).toBe(2);
    expect(r1.err).toMatch(/is not a mailstats backup \(no mailstats-backup\.json/);
    expect(existsSync(empty)).toBe(false); // nothing half-done

    const newer = join(work, 'newer');
    mkdirSync(newer);
    writeFileSync(
      join(newer, 'mailstats-backup.json'),
      JSON.stringify({
        format: 'mailstats-backup',
        schema_version: 999,
        database: 'mailstats',
        created_at: '',
      }),
    );
    const r2 = await adminCli(['restore', newer], { DATA_DIR: empty });
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(/is from a newer mailstats \(schema version 999/);
    expect(existsSync(empty) ? readdirSync(empty) : []).toEqual([]);

    const missing = await adminCli(['restore', join(work, 'nowhere')], { DATA_DIR: empty });
    expect(missing.err).toMatch(/does not exist/);
    const relative = await adminCli(['backup'], env);
    expect(relative.code).toBe(2);
  }, 300_000);
});
