#!/usr/bin/env node
// The production path, run for real (docs/deployment.md, "How the images are checked"): the image built
// with podman and run against a real ClickHouse server and Kafka broker; the compose stack brought up by
// a real Compose implementation against podman's Docker API, with local stand-ins for the third-party
// images; nginx in front of the API; every command of README "Containers" and of docs/deployment.md's
// container sections executed as written. As root (it installs what is missing with apt-get, writes
// /etc/containers/containers.conf, assembles the base image). CI runs it every time (.ci/run).
//
//   node scripts/container-check.mjs [image] [compose]    (default: both; nginx runs with compose)
//   writes .cache/container-check.json: { passed, failed, steps: [{ name, ok, ms, error? }] }
//
// Every step is printed as it ends; a failed step names what broke, and the steps that needed it fail
// too ("not run: …"), so a broken image can never pass as a skipped check.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startClickHouseServer, freePort } from './clickhouse-server.mjs';
import { startKafkaBroker } from './kafka/broker.mjs';
import { composeCheck } from './containers/compose-check.mjs';
import { docBlocks, fetchRetried, run, sh, until, waitHttp, CheckRun } from './containers/lib.mjs';

const root = resolve(import.meta.dirname, '..');
const IMAGE = 'mailstats:local';
const BASE = 'docker.io/library/node:26-bookworm-slim';
const PACKAGES = {
  podman: 'podman',
  runc: 'runc',
  debootstrap: 'debootstrap',
  'docker-compose': 'docker-compose',
  nginx: 'nginx',
};
const CONTAINERS_CONF = `# Written by scripts/container-check.mjs (docs/deployment.md, "Podman"): a container may not raise
# its limits here (no CAP_SYS_RESOURCE), so the defaults are ones it may set; host network unless a
# network is asked for (compose asks for its own); runc as the runtime.
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=4096:4096"]
netns = "host"

[engine]
runtime = "runc"
`;

const parts = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const want = (p) => parts.length === 0 || parts.includes(p);
const checks = new CheckRun(join(root, '.cache', 'container-check.json'));

// 1. The tools, from Debian, when missing; containers.conf.
await checks.step(
  'tools installed (podman, runc, debootstrap, docker-compose, nginx) and containers.conf',
  async () => {
    const missing = Object.entries(PACKAGES)
      .filter(([bin]) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status !== 0)
      .map(([, pkg]) => pkg);
    if (missing.length > 0) {
      if (process.getuid?.() !== 0)
        throw new Error(
          `missing ${missing.join(', ')}: run as root, or apt-get install -y ${missing.join(' ')}`,
        );
      console.log(`container-check: apt-get install -y ${missing.join(' ')}`);
      sh('apt-get', ['update'], { quiet: true });
      sh('apt-get', ['install', '-y', ...missing], {
        quiet: true,
        env: { DEBIAN_FRONTEND: 'noninteractive' },
      });
    }
    const conf = '/etc/containers/containers.conf';
    if (!existsSync(conf) || readFileSync(conf, 'utf8') !== CONTAINERS_CONF) {
      mkdirSync('/etc/containers', { recursive: true });
      writeFileSync(conf, CONTAINERS_CONF);
    }
  },
);

// 2. The base image the Dockerfile names, assembled here (no registry) and cached outside the clone.
await checks.step(`base image ${BASE} (scripts/containers/node-base.sh)`, async () => {
  sh('bash', [join(root, 'scripts/containers/node-base.sh'), BASE]);
});

// 3. The image, as docs/deployment.md tells podman users to build it.
await checks.step('podman build (docs/deployment.md, word for word)', async () => {
  const [build] = docBlocks(join(root, 'docs/deployment.md'), 'podman-build');
  if (!build) throw new Error('docs/deployment.md has no podman-build block');
  run(build, { cwd: root });
  const [image] = JSON.parse(sh('podman', ['image', 'inspect', IMAGE]));
  const healthcheck = JSON.stringify(image?.Config?.Healthcheck ?? image?.Healthcheck ?? null);
  if (!/healthz/.test(healthcheck))
    throw new Error(`the image has no HEALTHCHECK (built without --format docker?): ${healthcheck}`);
});

if (want('image')) await imageCheck();
// nginx runs in front of the compose stack's API, while it is up.
if (want('compose')) await composeCheck({ root, checks });

checks.close();
process.exit(checks.failed > 0 ? 1 : 0);

/** The image against a real ClickHouse server and Kafka broker: the api role and the ingest role. */
async function imageCheck() {
  const names = { api: 'mailstats-check-api', ingest: 'mailstats-check-ingest' };
  const token = 'container-check-ingest-token-0123456789abcdef';
  let clickhouse;
  let kafka;
  const ports = { api: await freePort(), ingest: await freePort() };
  const started = await checks.step('image: ClickHouse server and Kafka broker for it', async () => {
    // Side by side: each is a process the check only waits for (the stop below takes whichever
    // started); the bounds are against a hang, wide for two starts sharing a busy machine.
    const [c, k] = await Promise.allSettled([
      startClickHouseServer({ log: (m) => console.log(m), timeoutMs: 180_000 }),
      startKafkaBroker({ timeoutMs: 180_000 }),
    ]);
    clickhouse = c.status === 'fulfilled' ? c.value : undefined;
    kafka = k.status === 'fulfilled' ? k.value : undefined;
    for (const r of [c, k]) if (r.status === 'rejected') throw r.reason;
    console.log(`container-check: Kafka at ${kafka.brokers}`);
  });
  for (const name of Object.values(names))
    spawnSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' });
  try {
    const env = (role) => [
      '-e',
      `ROLE=${role}`,
      '-e',
      `PORT=${ports[role]}`,
      '-e',
      `CLICKHOUSE_URL=${clickhouse.url}`,
      '-e',
      `CLICKHOUSE_DATABASE=mailstats_container_check`,
      '-e',
      `KAFKA_BROKERS=${kafka.brokers}`,
      '-e',
      `KAFKA_PARTITIONS=3`,
      '-e',
      `INGEST_TOKEN=${role === 'api' ? token : ''}`,
    ];
    const base = (role) => `http://127.0.0.1:${ports[role]}`;
    const up = await checks.step('image: both roles start (/healthz, then /readyz 200)', async () => {
      if (!started) throw new Error('not run: no ClickHouse server or broker');
      // On the host network (containers.conf): the servers on loopback are reachable as they are.
      for (const role of ['api', 'ingest'])
        sh('podman', ['run', '-d', '--name', names[role], ...env(role), IMAGE]);
      for (const role of ['api', 'ingest']) {
        await waitHttp(`${base(role)}/healthz`, 120_000);
        await waitHttp(`${base(role)}/readyz`, 240_000);
      }
    });
    const dep = (what) => {
      if (!up) throw new Error(`not run: the containers did not start (${what})`);
    };
    await checks.step('image: runs as uid 1000 (not root)', async () => {
      dep('uid');
      const uid = sh('podman', ['exec', names.api, 'id', '-u']).trim();
      if (uid !== '1000') throw new Error(`id -u in the container: ${uid}`);
      const user = sh('podman', ['inspect', '--format', '{{.Config.User}}', names.api]).trim();
      if (user !== '1000:1000') throw new Error(`image user ${user}`);
    });
    await checks.step('image: its own HEALTHCHECK passes (podman healthcheck run)', async () => {
      dep('healthcheck');
      sh('podman', ['healthcheck', 'run', names.api]);
      sh('podman', ['healthcheck', 'run', names.ingest]);
    });
    await checks.step(
      'image: POST /ingest, through Kafka and the ingest role, counted by automation.stats',
      async () => {
        dep('ingest');
        const key = 'container-check-key';
        const sha = (await import('node:crypto')).createHash('sha256').update(key).digest('hex');
        const records = [
          { type: 'user', user_id: 7, api_key_sha256: sha },
          { type: 'list', list_id: 70, name: 'check', timezone: 'UTC' },
          { type: 'list_access', user_id: 7, list_id: 70, granted: true },
          ...Array.from({ length: 5 }, (_, i) => ({
            type: 'send',
            event_id: `container-check-${i}`,
            list_id: 70,
            workflow_id: 1,
            subscriber_id: 100 + i,
            timestamp: Date.parse('2026-03-10T12:00:00Z'),
          })),
        ];
        const res = await fetchRetried(`${base('api')}/ingest`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(records),
        });
        if (res.status !== 200 && res.status !== 202)
          throw new Error(`POST /ingest: ${res.status} ${await res.text()}`);
        const url = `${base('api')}/api/1.2/rest/7/${key}/automation.stats.json?list_id=70&start_date=2026-03-10&stop_date=2026-03-10`;
        await until('5 sends in automation.stats', 180_000, async () => {
          const r = await fetch(url);
          const body = r.ok ? await r.json() : [];
          return Array.isArray(body) && body.reduce((n, d) => n + d.sends_total, 0) === 5;
        });
      },
    );
    await checks.step('image: the admin CLI inside the container (README "Containers")', async () => {
      dep('admin');
      const cmds = docBlocks(join(root, 'README.md'), 'containers-admin')[0];
      if (!cmds) throw new Error('README.md has no containers-admin block');
      // README's commands name the compose service (`docker compose exec api`); the single container is
      // the same image, so the same command line after `exec`.
      let apiKey;
      for (const line of cmds.split('\n').filter((l) => l.startsWith('docker compose exec api '))) {
        const args = line.replace(/\s+#.*$/, '').replace('docker compose exec api ', '');
        const out = run(`podman exec ${names.api} ${args}`, { cwd: root, capture: true });
        if (/--generate-key/.test(args)) apiKey = out.match(/[A-Za-z0-9_-]{20,}/)?.[0];
      }
      if (!apiKey) throw new Error('user add --generate-key printed no key');
      // The grant reaches the API through Kafka and the ingest role: a moment later.
      const url = `${base('api')}/api/1.2/rest/1/${apiKey}/automation.stats.json?list_id=1&days=7`;
      await until(
        'automation.stats with the generated key',
        120_000,
        async () => (await fetch(url)).status === 200,
      );
    });
    await checks.step('image: stops on SIGTERM within 10 s, exit status 0', async () => {
      dep('stop');
      for (const role of ['api', 'ingest']) {
        const t0 = Date.now();
        sh('podman', ['stop', '-t', '10', names[role]]);
        const ms = Date.now() - t0;
        const code = sh('podman', ['inspect', '--format', '{{.State.ExitCode}}', names[role]]).trim();
        console.log(`container-check: ${role} stopped in ${ms} ms, exit status ${code}`);
        if (ms >= 10_000 || code !== '0')
          throw new Error(`${role}: stopped in ${ms} ms with exit status ${code}`);
      }
    });
  } finally {
    for (const name of Object.values(names)) {
      if (checks.failed > 0) spawnSync('podman', ['logs', '--tail', '30', name], { stdio: 'inherit' });
      spawnSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' });
    }
    await kafka?.stop().catch(() => undefined);
    await clickhouse?.stop().catch(() => undefined);
  }
}
