import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirHolder } from '../../shared/clickhouse/data-dir-holder.js';

/** A store's status file left behind is not a holder: only a live process with the file open is. */
describe('dataDirHolder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-holder-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const status = (pid: number) =>
    writeFileSync(join(dir, 'status'), `PID: ${pid}\nStarted at: 2026-11-27 05:05:08\nRevision: 54513\n`);

  it('none without a status file', () => {
    expect(dataDirHolder(dir)).toBeUndefined();
  });

  it('none when the pid in the file has ended (a run that was killed)', () => {
    const ended = spawnSync(process.execPath, ['-e', '']).pid!;
    status(ended);
    expect(dataDirHolder(dir)).toBeUndefined();
  });

  it('none when the pid is alive but does not have the file open (a reused pid), or is this process', () => {
    status(process.ppid);
    expect(dataDirHolder(dir)).toBeUndefined();
    status(process.pid);
    expect(dataDirHolder(dir)).toBeUndefined();
  });
});
