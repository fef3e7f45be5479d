// The compose stack of scripts/container-check.mjs: docker-compose.yml as it is, brought up by a real
// Compose implementation (Debian's docker-compose 1.29) against podman's Docker API, with stand-ins for
// the third-party images built here and tagged with the compose file's names (docs/deployment.md, "How
// the images are checked"); the commands of docs/deployment.md's "Containers" run as written.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureKafkaJars } from '../kafka/broker.mjs';
import { nginxCheck } from './nginx-check.mjs';
import { docBlocks, run, sh, until } from './lib.mjs';

const require = createRequire(import.meta.url);
const HEALTH_LOOP =
  'while sleep 5; do podman ps -q | xargs -rn1 podman healthcheck run > /dev/null 2>&1; done';
const HERE = import.meta.dirname;
/** The base image of the stand-ins (and of the Dockerfile), assembled by node-base.sh. */
const BASE = 'docker.io/library/node:26-bookworm-slim';
/** The label a stand-in carries: the digest of what it was built from (`standInInputs`). */
const LABEL = 'mailstats.check.inputs';

/** The stand-ins: the compose file's image name, its context folder here, extra files for the context. */
const STAND_INS = [
  {
    tag: 'docker.io/clickhouse/clickhouse-server:25.8',
    dir: 'clickhouse',
    extra: () => ({
      'libchdb.so': join(dirname(require.resolve('@chdb/lib-linux-x64-gnu/package.json')), 'libchdb.so'),
    }),
  },
  { tag: 'docker.io/apache/kafka:3.9.1', dir: 'kafka', extra: () => ({ libs: ensureKafkaJars() }) },
  { tag: 'docker.io/prom/prometheus:v2.55.1', dir: 'prometheus', extra: () => ({}) },
];

/** `src` (a file or a folder) at `dst`: hard links where the file system allows (the engine library is 540 MB). */
function place(src, dst) {
  if (statSync(src).isDirectory()) {
    mkdirSync(dst, { recursive: true });
    for (const name of readdirSync(src)) place(join(src, name), join(dst, name));
    return;
  }
  try {
    linkSync(src, dst);
  } catch {
    copyFileSync(src, dst);
  }
}

/** Every file under `path` (itself when it is a file), by its path relative to `path`, sorted. */
function filesOf(path, rel = '') {
  if (!statSync(path).isDirectory()) return [[rel, path]];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesOf(join(path, name), rel ? `${rel}/${name}` : name));
}

/**
 * What a stand-in is built from: the base image's id, its context folder's files and the extra files,
 * by content (a file over 16 MB — the engine library, jars — by its size and modification time, which a
 * new version changes). The built image carries it as a label: an image whose label is the same was
 * built from the same inputs and is used as it is (a rebuild would only have found every layer cached,
 * after copying and hashing the 540 MB engine library again).
 */
function standInInputs(s, baseId) {
  const h = createHash('sha256').update(`base ${baseId}\n`);
  const sources = [['', join(HERE, s.dir)], ...Object.entries(s.extra())];
  for (const [prefix, src] of sources)
    for (const [rel, file] of filesOf(src)) {
      const st = statSync(file);
      h.update(`${prefix}/${rel} ${st.size} `);
      h.update(st.size > 16 * 2 ** 20 ? `${st.mtimeMs}` : readFileSync(file));
      h.update('\n');
    }
  return h.digest('hex');
}

export async function composeCheck({ root, checks }) {
  const work = mkdtempSync(join(tmpdir(), 'mailstats-compose-check-'));
  const socket = join(work, 'podman.sock');
  const env = {
    DOCKER_HOST: `unix://${socket}`,
    DOCKER_CONFIG: join(work, 'docker'),
    // docker-compose 1.29 builds through the API (podman's), not by running `docker build` (BuildKit).
    COMPOSE_DOCKER_CLI_BUILD: '0',
    DOCKER_BUILDKIT: '0',
    COMPOSE_PROJECT_NAME: 'mailstatscheck',
    COMPOSE_HTTP_TIMEOUT: '600',
  };
  const compose = (args, opts = {}) => sh('docker-compose', args, { cwd: root, env, ...opts });
  let service;
  let healthLoop;
  let envMoved = false;
  const envFile = join(root, '.env');
  const envBackup = join(root, '.env.container-check-backup');
  const override = join(root, 'docker-compose.override.yml');
  let overrideWritten = false;

  const healthy = async (svc) => {
    const ids = compose(['ps', '-q', svc], { quiet: true }).split('\n').filter(Boolean);
    if (ids.length === 0) throw new Error(`no ${svc} container`);
    for (const id of ids)
      await until(
        `${svc} healthy`,
        300_000,
        async () =>
          sh('podman', ['inspect', '--format', '{{.State.Health.Status}}', id]).trim() === 'healthy',
      );
    return ids;
  };

  const standIns = await checks.step(
    'compose: stand-in images (ClickHouse, Kafka, Prometheus) built here',
    async () => {
      const baseId = sh('podman', ['image', 'inspect', '--format', '{{.Id}}', BASE], { quiet: true }).trim();
      for (const s of STAND_INS) {
        const inputs = standInInputs(s, baseId);
        const built = spawnSync(
          'podman',
          ['image', 'inspect', '--format', `{{index .Labels "${LABEL}"}}`, s.tag],
          {
            encoding: 'utf8',
          },
        );
        if (built.status === 0 && built.stdout.trim() === inputs) {
          console.log(`container-check: ${s.tag} is built from the same inputs (${LABEL}): kept`);
          continue;
        }
        const ctx = join(work, `ctx-${s.dir}`);
        cpSync(join(HERE, s.dir), ctx, { recursive: true });
        for (const [name, src] of Object.entries(s.extra())) place(src, join(ctx, name));
        const t0 = Date.now();
        sh(
          'podman',
          [
            'build',
            '--format',
            'docker',
            '--network',
            'host',
            '--label',
            `${LABEL}=${inputs}`,
            '-t',
            s.tag,
            '-f',
            join(ctx, 'Containerfile'),
            ctx,
          ],
          { quiet: true },
        );
        console.log(`container-check: built ${s.tag} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        rmSync(ctx, { recursive: true, force: true });
      }
    },
  );

  const up = await checks.step(
    'compose: docker compose up (docs/deployment.md "First run", word for word)',
    async () => {
      if (!standIns) throw new Error('not run: the stand-in images were not built');
      // `docker compose`: the docker CLI with a compose plugin that hands its arguments to docker-compose.
      const plugins = join(env.DOCKER_CONFIG, 'cli-plugins');
      mkdirSync(plugins, { recursive: true });
      writeFileSync(
        join(plugins, 'docker-compose'),
        `#!/bin/sh
if [ "$1" = docker-cli-plugin-metadata ]; then
  echo '{"SchemaVersion":"0.1.0","Vendor":"mailstats container check","Version":"1.29.2","ShortDescription":"docker-compose 1.29"}'
  exit 0
fi
shift
exec docker-compose "$@"
`,
      );
      chmodSync(join(plugins, 'docker-compose'), 0o755);
      service = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], { stdio: 'ignore' });
      await until('podman system service', 30_000, async () => existsSync(socket));
      // Podman without systemd runs no periodic healthchecks: the loop docs/deployment.md ("Podman")
      // gives podman users runs them, word for word (a process of its own: the commands below block this one).
      if (!readFileSync(join(root, 'docs/deployment.md'), 'utf8').includes(`\`${HEALTH_LOOP} &\``))
        throw new Error('docs/deployment.md no longer gives the healthcheck loop the check runs');
      healthLoop = spawn('bash', ['-c', HEALTH_LOOP], { stdio: 'ignore' });
      spawnSync('docker-compose', ['down', '-v', '--remove-orphans'], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: 'ignore',
      });
      if (existsSync(envFile)) {
        renameSync(envFile, envBackup);
        envMoved = true;
      }
      // ClickHouse's nofile limit (262144) is above what this machine lets root give a container (no
      // CAP_SYS_RESOURCE: the hard limit of the check's own process): an override file, which `docker
      // compose up` reads by itself, lowers it to that (docs/deployment.md, "Podman").
      const hard = Number(sh('sh', ['-c', 'ulimit -Hn']).trim());
      if (Number.isFinite(hard) && hard < 262_144) {
        if (existsSync(override)) throw new Error(`${override} exists: the check would replace it`);
        writeFileSync(
          override,
          `# Written by scripts/container-check.mjs: this machine cannot raise limits above ${hard}.\n` +
            `services:\n  clickhouse:\n    ulimits:\n      nofile: { soft: ${hard}, hard: ${hard} }\n      nproc: { soft: 4096, hard: 4096 }\n`,
        );
        overrideWritten = true;
        console.log(
          `container-check: docker-compose.override.yml: ClickHouse nofile ${hard} (the machine's hard limit)`,
        );
      }
      const [firstRun] = docBlocks(join(root, 'docs/deployment.md'), 'compose-first-run');
      if (!firstRun) throw new Error('docs/deployment.md has no compose-first-run block');
      run(firstRun, { cwd: root, env });
      for (const svc of ['api', 'ingest']) await healthy(svc);
    },
  );

  const dep = (what) => {
    if (!up) throw new Error(`not run: the stack did not come up (${what})`);
  };

  let apiKey;
  const stats = async () => {
    const r = await fetch(
      `http://127.0.0.1:8080/api/1.2/rest/1/${apiKey}/automation.stats.json?list_id=1&start_date=2026-03-10&stop_date=2026-03-10`,
    );
    if (r.status !== 200) throw new Error(`automation.stats: ${r.status} ${await r.text()}`);
    return (await r.json()).reduce((n, d) => n + d.sends_total, 0);
  };
  let seq = 0;
  const publish = (n) => {
    const file = join(work, `records-${seq}.ndjson`);
    const lines = Array.from({ length: n }, () => {
      seq += 1;
      return JSON.stringify({
        type: 'send',
        event_id: `compose-check-${seq}`,
        list_id: 1,
        workflow_id: 1,
        subscriber_id: seq,
        timestamp: Date.parse('2026-03-10T12:00:00Z'),
      });
    });
    writeFileSync(file, lines.join('\n') + '\n');
    // docs/deployment.md: "KAFKA_BROKERS=127.0.0.1:19092 npm run publish -- records.ndjson".
    run(`KAFKA_BROKERS=127.0.0.1:19092 npm run publish -- ${file}`, { cwd: root });
  };

  try {
    await checks.step(
      'compose: the admin CLI and automation.stats (docs/deployment.md, word for word)',
      async () => {
        dep('admin');
        const [block] = docBlocks(join(root, 'docs/deployment.md'), 'compose-admin');
        if (!block) throw new Error('docs/deployment.md has no compose-admin block');
        // README "Containers" gives the same admin commands: each of its lines is run here too.
        const [readme] = docBlocks(join(root, 'README.md'), 'containers-admin');
        const missing = (readme ?? '').split('\n').filter((l) => l && !block.split('\n').includes(l));
        if (!readme || missing.length > 0)
          throw new Error(`README "Containers" lines not in the check: ${missing.join('; ')}`);
        for (const line of block.split('\n')) {
          if (line.startsWith('curl ')) {
            if (!apiKey) throw new Error('user add --generate-key printed no key');
            // The one placeholder of the block: the key printed above.
            // The grant reaches the API through Kafka and the ingest role: run again until it answers.
            await until('curl answering with the list', 120_000, async () =>
              run(line.replace('<api key>', apiKey), { cwd: root, env, capture: true })
                .trim()
                .startsWith('['),
            );
          } else {
            const out = run(line, { cwd: root, env, capture: true, tty: true });
            if (/--generate-key/.test(line)) apiKey = out.match(/[A-Za-z0-9_-]{20,}/)?.[0];
          }
        }
      },
    );

    await checks.step('compose: a record published to Kafka counted in the API answer', async () => {
      dep('kafka');
      publish(3);
      await until('3 sends', 180_000, async () => (await stats()) === 3);
    });

    await checks.step('compose: --scale ingest=3 (word for word), each record consumed once', async () => {
      dep('scale');
      const [block] = docBlocks(join(root, 'docs/deployment.md'), 'compose-scale');
      if (!block) throw new Error('docs/deployment.md has no compose-scale block');
      run(block, { cwd: root, env });
      const ids = await healthy('ingest');
      if (ids.length !== 3) throw new Error(`${ids.length} ingest containers`);
      publish(30);
      await until('33 sends', 180_000, async () => (await stats()) === 33);
      // Still 33 once every worker had its turn (a record consumed twice would show here).
      await new Promise((r) => setTimeout(r, 10_000));
      const n = await stats();
      if (n !== 33) throw new Error(`${n} sends after the scale-up, 33 published`);
    });

    await checks.step('compose: the api container restarted answers the same', async () => {
      dep('restart');
      const before = await stats();
      compose(['restart', 'api']);
      await healthy('api');
      await until('the same answer after the restart', 120_000, async () => (await stats()) === before);
    });

    await checks.step(
      'compose: the monitoring profile: Prometheus scrapes both roles (Grafana: no stand-in)',
      async () => {
        dep('monitoring');
        // Grafana is not in Debian and no registry has its image: only Prometheus is started (by name).
        compose(['--profile', 'monitoring', 'up', '-d', 'prometheus']);
        await until('both roles scraped and up', 180_000, async () => {
          const r = await fetch('http://127.0.0.1:9090/api/v1/targets');
          const targets = (await r.json()).data.activeTargets;
          const up = (job) => targets.some((t) => t.labels.job === job && t.health === 'up');
          return up('mailstats-api') && up('mailstats-ingest');
        });
        const rules = await (await fetch('http://127.0.0.1:9090/api/v1/rules')).json();
        if (!(rules.data?.groups?.length > 0))
          throw new Error(`no alert rules loaded: ${JSON.stringify(rules)}`);
      },
    );

    if (up) await nginxCheck({ root, checks, apiKey, env, healthy });
  } finally {
    if (checks.failed > 0 && up)
      spawnSync('docker-compose', ['logs', '--tail', '30'], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: 'inherit',
      });
    if (service)
      spawnSync('docker-compose', ['down', '-v', '--remove-orphans'], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: 'ignore',
      });
    healthLoop?.kill('SIGTERM');
    service?.kill('SIGTERM');
    rmSync(envFile, { force: true });
    if (overrideWritten) rmSync(override, { force: true });
    if (envMoved) renameSync(envBackup, envFile);
    rmSync(work, { recursive: true, force: true });
  }
}
