// Modes: embedded only — token files and rules of DATA_DIR
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { startService } from '../../service/start.js';

/**
 * docs/configuration.md (INGEST_TOKEN, ADMIN_TOKEN): a bearer token is at least 32 characters and not a
 * published placeholder; a token file that is empty or short stops the start naming the file (it would
 * otherwise let requests without credentials in); token files are written whole (temp file + rename, 0600).
 */
const root = resolve(import.meta.dirname, '../..');

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return undefined;
};

describe('INGEST_TOKEN and ADMIN_TOKEN', () => {
  it.each(['INGEST_TOKEN', 'ADMIN_TOKEN'])('%s: a short token is refused, naming the rule', (name) => {
    expect(problems({ [name]: 'a' })).toMatch(new RegExp(`${name}: .*at least 32 characters`));
  });
  it('the .env.example placeholder is refused even when padded to length', () => {
    const example = readFileSync(join(root, '.env.example'), 'utf8');
    const placeholder = /^INGEST_TOKEN=(.*)$/m.exec(example)![1]!;
    expect(problems({ INGEST_TOKEN: placeholder })).toMatch(/INGEST_TOKEN: .*placeholder/);
    expect(problems({ INGEST_TOKEN: `${placeholder}-0000000000000000` })).toMatch(
      /INGEST_TOKEN: .*placeholder/,
    );
  });
  it('a generated-looking token of 32+ characters is taken', () => {
    expect(problems({ INGEST_TOKEN: 'k3J9xq2Lm8Rv0pT5wZ7yB1nC4dF6gH2s' })).toBeUndefined();
  });
});

describe('DATA_DIR token files', () => {
  it.each([
    ['ingest-token', ''],
    ['ingest-token', '\n'],
    ['ingest-token', 'short'],
    ['admin-token', ''],
  ])('%s holding %j: the start is refused, naming the file', async (file, content) => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-token-'));
    try {
      writeFileSync(join(dir, file), content, { mode: 0o600 });
      const err = await startService(
        loadConfig({ DATA_DIR: dir, SEED_DEMO: 'false', PORT: '0', LOG_LEVEL: 'silent' }),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(join(dir, file));
      expect((err as Error).message).toMatch(/empty|at least 32 characters/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('admin token rotate', () => {
  it('writes DATA_DIR/ingest-token whole, 0600, no temporary file left, a token the service accepts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-rotate-'));
    try {
      writeFileSync(join(dir, 'ingest-token'), 'old', { mode: 0o644 });
      await new Promise<void>((ok, fail) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', 'admin/cli.ts', 'token', 'rotate'],
          { cwd: root, env: { PATH: process.env.PATH, DATA_DIR: dir } },
          (err) => (err ? fail(err) : ok()),
        ),
      );
      const token = readFileSync(join(dir, 'ingest-token'), 'utf8');
      expect(token.length).toBeGreaterThanOrEqual(32);
      expect(statSync(join(dir, 'ingest-token')).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['ingest-token']);
      expect(problems({ INGEST_TOKEN: token })).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
