import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startupOutput } from '../support/startup-output.js';

/**
 * docs/operations.md "Start-up": the embedded store belongs to one process. A second `npm start` on the
 * same DATA_DIR says the directory is in use, by which process, and how to pick another, in place of
 * the engine's raw "Cannot lock file" exception.
 */
describe('a second start on a DATA_DIR in use', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-in-use-'));
  const first = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      SEED_DEMO: 'false',
      DATA_DIR: dir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let firstOutput = '';
  first.stdout.on('data', (c) => (firstOutput += String(c)));
  first.stderr.on('data', (c) => (firstOutput += String(c)));
  const firstExited = new Promise<void>((ok) => first.on('exit', () => ok()));

  afterAll(async () => {
    first.kill('SIGTERM');
    await firstExited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the directory, the process holding it and the setting to change, and exits 1', async () => {
    for (let i = 0; i < 1200 && !/mailstats is running/.test(firstOutput); i++) {
      if (first.exitCode !== null) throw new Error(`the first instance exited: ${firstOutput}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(firstOutput).toMatch(/mailstats is running/);

    const out = await startupOutput({ DATA_DIR: dir }, /mailstats could not start|mailstats is running/);
    expect(out).toContain(
      `mailstats could not start: DATA_DIR ${dir} is in use by another process (pid ${first.pid}`,
    );
    expect(out).toMatch(/main\.ts/); // the holder's command line
    expect(out).toContain('DATA_DIR=');
    expect(out).not.toMatch(/Cannot lock file|DB::Exception/);
    // The first instance is untouched and still answers.
    expect(first.exitCode).toBeNull();
  }, 240_000);
});
