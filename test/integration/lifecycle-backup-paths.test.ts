import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Restartable } from '../support/restartable.js';

const ADMIN = 'paths-admin-token-0123456789-abcdef0123456789';

/** Every file and directory under `dir` (itself included) whose mode is not `dirs` / `files`. */
function wrongModes(dir: string, dirs: number, files: number): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== dirs) out.push(`${p} ${mode.toString(8)}`);
      for (const name of readdirSync(p)) walk(join(p, name));
    } else if (mode !== files) out.push(`${p} ${mode.toString(8)}`);
  };
  walk(dir);
  return out;
}

/**
 * Where `POST /admin/backup` may write (docs/lifecycle.md, "backup and restore"): BACKUP_ROOT, by default
 * a directory of the service's own; links resolved; the data directory's modes; a bad path is a 400.
 */
describe('backup paths', () => {
  const svc = new Restartable({ ADMIN_TOKEN: ADMIN });
  const outside = mkdtempSync(join(tmpdir(), 'mailstats-outside-'));

  const backup = async (dir: string) => {
    const res = await fetch(`${svc.svc!.url}/admin/backup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ dir }),
    });
    return { status: res.status, body: (await res.json()) as { error?: string; message?: string } };
  };
  const messageOf = (b: Record<string, unknown>) => JSON.stringify(b);

  beforeAll(async () => {
    await svc.start();
  }, 120_000);
  afterAll(async () => {
    await svc.destroy();
    rmSync(outside, { recursive: true, force: true });
  });

  it('by default backups go under DATA_DIR/backups, and nowhere else', async () => {
    const away = join(outside, 'not-under-the-root', 'b');
    const r = await backup(away);
    expect(r.status).toBe(400);
    expect(messageOf(r.body)).toMatch(/is outside BACKUP_ROOT \(.*\/backups\)/);
    expect(existsSync(join(outside, 'not-under-the-root'))).toBe(false);

    const inside = join(svc.dir, 'backups', 'first');
    const ok = await backup(inside);
    expect(ok.status, messageOf(ok.body)).toBe(200);
    expect(existsSync(join(inside, 'mailstats-backup.json'))).toBe(true);
  }, 120_000);

  it('a backup is written with the data directory modes: directories 0700, files 0600', async () => {
    const dir = join(svc.dir, 'backups', 'modes');
    const ok = await backup(dir);
    expect(ok.status, messageOf(ok.body)).toBe(200);
    expect(readdirSync(dir).length).toBeGreaterThan(2);
    expect(wrongModes(dir, 0o700, 0o600)).toEqual([]);
    expect(lstatSync(join(svc.dir, 'backups')).mode & 0o777).toBe(0o700);
  }, 120_000);

  it('a link inside the root that leads outside it is refused, and nothing is written there', async () => {
    symlinkSync(outside, join(svc.dir, 'backups', 'link'));
    const r = await backup(join(svc.dir, 'backups', 'link', 'escaped'));
    expect(r.status).toBe(400);
    expect(messageOf(r.body)).toMatch(/is outside BACKUP_ROOT .*it leads to/);
    expect(readdirSync(outside)).toEqual([]);
  }, 120_000);

  it('a path that is a file, or under a file, is a 400 naming it', async () => {
    const file = join(svc.dir, 'backups', 'a-file');
    writeFileSync(file, 'x');
    const r1 = await backup(file);
    expect(r1.status).toBe(400);
    expect(messageOf(r1.body)).toMatch(/a-file is not a directory/);
    const r2 = await backup(join(file, 'below'));
    expect(r2.status).toBe(400);
    expect(messageOf(r2.body)).toMatch(/a-file\/below cannot be used for a backup/);
    mkdirSync(join(svc.dir, 'backups', 'full'));
    writeFileSync(join(svc.dir, 'backups', 'full', 'x'), 'x');
    const r3 = await backup(join(svc.dir, 'backups', 'full'));
    expect(r3.status).toBe(400);
    expect(messageOf(r3.body)).toMatch(/is not empty/);
  }, 120_000);
});
