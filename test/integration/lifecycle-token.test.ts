import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';

/** The admin token (docs/lifecycle.md): generated into DATA_DIR/admin-token, 0600, never printed or logged. */
async function startMain(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      SEED_DEMO: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += String(c)));
  child.stderr.on('data', (c) => (output += String(c)));
  const exited = new Promise<void>((ok) => child.on('exit', () => ok()));
  try {
    for (let i = 0; i < 1200 && !/admin: .*\n/.test(output); i++) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return output;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('admin token', () => {
  it('generated: kept in DATA_DIR/admin-token (0600), the banner says where, the token appears nowhere', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-admin-token-'));
    try {
      const output = await startMain({ DATA_DIR: dir, LOG_LEVEL: 'debug' });
      expect(output).toMatch(
        /admin: {8}npm run admin -- <command> {2}\(the admin token is in .*admin-token\)/,
      );
      const file = join(dir, 'admin-token');
      const token = readFileSync(file, 'utf8').trim();
      expect(token).toMatch(/^[0-9a-f]{48}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(output).not.toContain(token);
      expect(token).not.toBe(readFileSync(join(dir, 'ingest-token'), 'utf8').trim());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('configured: the banner names ADMIN_TOKEN, not its value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-admin-token-'));
    try {
      const output = await startMain({
        DATA_DIR: dir,
        LOG_LEVEL: 'debug',
        ADMIN_TOKEN: 'configured-admin-7d1e',
      });
      expect(output).toMatch(/admin: .*the admin token is ADMIN_TOKEN/);
      expect(output).not.toContain('configured-admin-7d1e');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('configuration: ADMIN_TOKEN must differ from INGEST_TOKEN; BACKUP_ROOT must be absolute', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'same-token', INGEST_TOKEN: 'same-token' })).toThrow(
      /ADMIN_TOKEN: must differ from INGEST_TOKEN/,
    );
    expect(() => loadConfig({ BACKUP_ROOT: 'backups' })).toThrow(/BACKUP_ROOT: must be an absolute path/);
    expect(loadConfig({}).BACKUP_ROOT).toBe('/');
  });
});
