#!/usr/bin/env node
// A real single-node Apache Kafka broker (KRaft) on loopback, from jars fetched off Maven Central with
// Maven and cached outside the repo. Used by the test harness, the benchmarks and CI.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';

const HERE = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_VERSION = '3.9.1';

const cacheDir = (version) =>
  join(process.env.MAILSTATS_CACHE_DIR || join(homedir(), '.cache', 'mailstats'), `kafka-${version}`);

/** Fetch the broker jars once (about a minute); later calls return the cached folder at once. */
export function ensureKafkaJars({ version = DEFAULT_VERSION } = {}) {
  const libs = join(cacheDir(version), 'libs');
  const marker = join(cacheDir(version), '.complete');
  if (existsSync(marker)) return libs;
  for (const tool of ['java', 'mvn']) {
    if (spawnSync(tool, ['-version'], { stdio: 'ignore' }).error) {
      throw new Error(
        `${tool} not found: the local Kafka broker needs Java 17+ and Maven (or set KAFKA_BROKERS, or run Docker)`,
      );
    }
  }
  process.stderr.write(`kafka: fetching Apache Kafka ${version} jars from Maven Central into ${libs}…\n`);
  const mvn = spawnSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      join(HERE, 'pom.xml'),
      `-Dkafka.version=${version}`,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${libs}`,
      '-DincludeScope=runtime',
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (mvn.status !== 0) throw new Error(`mvn could not fetch the Kafka ${version} jars (exit ${mvn.status})`);
  writeFileSync(marker, new Date().toISOString());
  return libs;
}

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitUntilServing(brokers, timeoutMs, logFile, alive = () => true) {
  const kafka = new kafkajs.Kafka({
    brokers: [brokers],
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 0 },
  });
  const deadline = Date.now() + timeoutMs;
  while (alive()) {
    const admin = kafka.admin();
    try {
      await admin.connect();
      // Serving is not enough after a restart: until every partition has a leader again, a produce can
      // fail half-way and be resent whole by the client (duplicates).
      const topics = await admin.listTopics();
      if (topics.length > 0) {
        const { topics: meta } = await admin.fetchTopicMetadata({ topics });
        if (meta.some((t) => t.partitions.some((p) => p.leader < 0)))
          throw new Error('partitions without a leader');
      }
      await admin.disconnect();
      return;
    } catch {
      await admin.disconnect().catch(() => {});
      if (Date.now() > deadline) {
        const tail = existsSync(logFile)
          ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n')
          : '(no log)';
        throw new Error(`Kafka broker did not start within ${timeoutMs / 1000} s. Log tail:\n${tail}`);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

/**
 * Start a broker on free loopback ports with a fresh log dir. `restart()` stops the JVM and starts it
 * again on the same ports and data (to test riding out a broker restart); `stop()` removes everything.
 */
export async function startKafkaBroker({ version = DEFAULT_VERSION, timeoutMs = 90_000 } = {}) {
  // A free port can be taken by another process between the probe and the JVM's bind (seen in CI:
  // "Address already in use" for the controller listener): such a start is tried again on new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(version, timeoutMs);
    } catch (err) {
      if (attempt >= 3 || !/Address already in use/.test(String(err?.message))) throw err;
    }
  }
}

async function startOnce(version, timeoutMs) {
  const libs = ensureKafkaJars({ version });
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-kafka-'));
  const [port, controllerPort] = [await freePort(), await freePort()];
  const brokers = `127.0.0.1:${port}`;
  const props = join(dir, 'server.properties');
  writeFileSync(
    props,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://${brokers}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${join(dir, 'data')}`,
      'auto.create.topics.enable=true',
      'num.partitions=1',
      'offsets.topic.replication.factor=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
    ].join('\n'),
  );
  const log4j = join(dir, 'log4j.properties');
  writeFileSync(
    log4j,
    'log4j.rootLogger=WARN, stdout\nlog4j.appender.stdout=org.apache.log4j.ConsoleAppender\n' +
      'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\nlog4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n\n',
  );
  const logFile = join(dir, 'broker.log');
  const java = (args, opts) =>
    spawn(
      'java',
      ['-Xms256m', '-Xmx512m', '-cp', `${libs}/*`, `-Dlog4j.configuration=file:${log4j}`, ...args],
      opts,
    );

  // A cluster id starting with '-' would be read by StorageTool as an option: draw again.
  let clusterId;
  do clusterId = randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-'));
  await new Promise((resolve, reject) => {
    const fmt = java(['kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', props], {
      stdio: 'ignore',
    });
    fmt.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`kafka storage format failed (exit ${code})`)),
    );
  });

  let proc;
  const launch = async () => {
    const { openSync } = await import('node:fs');
    const out = openSync(logFile, 'a');
    proc = java(['kafka.Kafka', props], { stdio: ['ignore', out, out] });
    const exited = new Promise((_, reject) =>
      proc.once('exit', (code) => {
        const tail = existsSync(logFile)
          ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n')
          : '';
        reject(new Error(`Kafka broker exited (code ${code}) before serving. Log tail:\n${tail}`));
      }),
    );
    exited.catch(() => {}); // only raced below; an exit after serving is halt()'s business
    const alive = () => proc.exitCode === null && proc.signalCode === null;
    await Promise.race([waitUntilServing(brokers, timeoutMs, logFile, alive), exited]);
  };
  const halt = () =>
    new Promise((resolve) => {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      const kill = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      proc.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      proc.kill('SIGTERM');
    });

  try {
    await launch();
  } catch (err) {
    // A broker that did not come up in time must not outlive the caller (it would hold CPU and ports).
    await halt();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    brokers,
    get pid() {
      return proc.pid;
    },
    async restart() {
      await halt();
      try {
        await launch();
      } catch (err) {
        await halt();
        throw err;
      }
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const HELP = `Usage: node scripts/kafka/broker.mjs <fetch|start> [--version X]

  fetch   fetch the Apache Kafka broker jars from Maven Central (cached in
          $MAILSTATS_CACHE_DIR or ~/.cache/mailstats)
  start   start a single-node KRaft broker on loopback, print KAFKA_BROKERS=…,
          run until Ctrl-C

Needs Java 17+ and Maven. Default version ${DEFAULT_VERSION}.`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const vi = args.indexOf('--version');
  const version = vi >= 0 ? args[vi + 1] : DEFAULT_VERSION;
  const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '--version');
  if (command === 'fetch') {
    console.log(ensureKafkaJars({ version }));
  } else if (command === 'start') {
    const broker = await startKafkaBroker({ version });
    console.log(`KAFKA_BROKERS=${broker.brokers}`);
    const stop = async () => {
      await broker.stop();
      process.exit(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  } else {
    console.log(HELP);
    process.exit(command ? 1 : 0);
  }
}
