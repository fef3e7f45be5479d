import type { TestProject } from 'vitest/node';
import { freePort, startKafkaBroker } from '../../scripts/kafka/broker.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string;
    kafkaBrokerSource: 'env' | 'docker' | 'local';
  }
}

const KAFKA_IMAGE = 'apache/kafka:3.9.1';

/** A Docker engine that answers within a few seconds, through testcontainers; else undefined. */
async function dockerBroker(): Promise<{ brokers: string; stop: () => Promise<unknown> } | undefined> {
  const tc = await import('testcontainers');
  try {
    await Promise.race([
      tc.getContainerRuntimeClient(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 5_000)),
    ]);
  } catch {
    return undefined;
  }
  const hostPort = await freePort();
  // The broker must advertise the port the host reaches it on, so that port is chosen up front.
  const container = await new tc.GenericContainer(KAFKA_IMAGE)
    .withExposedPorts({ container: 9092, host: hostPort })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${hostPort}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withWaitStrategy(tc.Wait.forLogMessage(/Kafka Server started/))
    .start();
  return { brokers: `127.0.0.1:${hostPort}`, stop: () => container.stop() };
}

/**
 * One Kafka broker for the whole run: KAFKA_BROKERS when set; else Docker (testcontainers) when an
 * engine answers; else a local broker from the Maven-fetched jars. Never skipped: with none of the
 * three the run fails, saying what to install.
 */
export default async function setup(project: TestProject) {
  let stop: (() => Promise<unknown>) | undefined;
  let brokers = process.env.KAFKA_BROKERS;
  let source: 'env' | 'docker' | 'local' = 'env';
  if (!brokers) {
    const docker = await dockerBroker().catch((err: Error) => {
      console.error(
        `kafka: Docker answered but the broker container failed (${err.message}); trying local jars`,
      );
      return undefined;
    });
    if (docker) {
      ({ brokers, stop } = docker);
      source = 'docker';
    } else {
      try {
        const local = await startKafkaBroker();
        brokers = local.brokers;
        stop = () => local.stop();
        source = 'local';
      } catch (err) {
        throw new Error(
          'No Kafka broker for the tests. Install Java 17+ and Maven (the harness fetches and starts Apache Kafka), ' +
            'or run a Docker engine, or set KAFKA_BROKERS=host:port.\n' +
            `Local broker failed: ${(err as Error).message}`,
          { cause: err },
        );
      }
    }
  }
  console.error(`kafka: using ${source} broker at ${brokers}`);
  project.provide('kafkaBrokers', brokers);
  project.provide('kafkaBrokerSource', source);
  return async () => {
    await stop?.();
  };
}
