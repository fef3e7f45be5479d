import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm start`'s banner says where the ingest token is kept, never the token itself (docs/operations.md "Start-up"), and
 * the start-up log lines do not carry it either.
 */
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
    for (let i = 0; i < 1200 && !/ingest: .*\n/.test(output); i++) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return output;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('start-up banner', () => {
  it('a generated token: the banner names DATA_DIR/ingest-token, and the token appears nowhere', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-banner-'));
    try {
      const output = await startMain({ DATA_DIR: dir, LOG_LEVEL: 'debug' });
      expect(output).toMatch(/ingest: .*the token is in .*ingest-token/);
      const token = readFileSync(join(dir, 'ingest-token'), 'utf8').trim();
      expect(token.length).toBeGreaterThan(20);
      expect(output).not.toContain(token);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('a configured token: the banner names INGEST_TOKEN, not its value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-banner-'));
    try {
      const output = await startMain({
        DATA_DIR: dir,
        LOG_LEVEL: 'debug',
        INGEST_TOKEN: 'configured-token-3f9a1c',
      });
      expect(output).toMatch(/ingest: .*the token is INGEST_TOKEN/);
      expect(output).not.toContain('configured-token-3f9a1c');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
