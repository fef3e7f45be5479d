// Modes: embedded only — the permissions of DATA_DIR, which only the embedded store has
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { startService } from '../../service/start.js';

/**
 * docs/operations.md "Start-up": DATA_DIR holds the whole embedded store and the tokens; when mailstats creates
 * it, only its own user may enter it (0700), whatever the umask leaves to others.
 */
describe('DATA_DIR created by the service', () => {
  it('is 0700 (and so is every directory it creates on the way)', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'mailstats-mode-'));
    const dir = join(parent, 'a', 'data');
    const old = process.umask(0o022); // the usual umask: 755 directories unless asked otherwise
    try {
      const svc = await startService(
        loadConfig({ DATA_DIR: dir, SEED_DEMO: 'false', PORT: '0', LOG_LEVEL: 'silent' }),
      );
      await svc.close();
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(join(parent, 'a')).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(old);
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
