import { readFileSync } from 'node:fs';
import { Kafka, Partitioners, logLevel, type Admin, type KafkaConfig, type Producer } from 'kafkajs';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';

export const kafkaTopics = (c: Config) => ({
  events: c.KAFKA_EVENTS_TOPIC,
  catalog: c.KAFKA_CATALOG_TOPIC,
  dlq: c.KAFKA_DLQ_TOPIC,
});

/** One PEM file of a KAFKA_SSL_*_FILE setting; a file that cannot be read names the setting. */
function pem(setting: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: err,
    });
  }
}

/**
 * TLS and SASL options for kafkajs from KAFKA_SSL* and KAFKA_SASL_* (docs/configuration.md): TLS with
 * the system CAs, or with the given CA (and a client certificate and key for mutual TLS); SASL PLAIN or
 * SCRAM with a user name and password. Nothing when neither is configured (a plaintext listener).
 */
export function kafkaSecurity(c: Config): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const out: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (c.KAFKA_SSL) {
    const files = {
      ...(c.KAFKA_SSL_CA_FILE && { ca: [pem('KAFKA_SSL_CA_FILE', c.KAFKA_SSL_CA_FILE)] }),
      ...(c.KAFKA_SSL_CERT_FILE && { cert: pem('KAFKA_SSL_CERT_FILE', c.KAFKA_SSL_CERT_FILE) }),
      ...(c.KAFKA_SSL_KEY_FILE && { key: pem('KAFKA_SSL_KEY_FILE', c.KAFKA_SSL_KEY_FILE) }),
    };
    out.ssl = Object.keys(files).length > 0 ? files : true;
  }
  if (c.KAFKA_SASL_MECHANISM && c.KAFKA_SASL_USERNAME && c.KAFKA_SASL_PASSWORD) {
    const { KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = c;
    out.sasl =
      c.KAFKA_SASL_MECHANISM === 'plain'
        ? { mechanism: 'plain', username, password }
        : c.KAFKA_SASL_MECHANISM === 'scram-sha-256'
          ? { mechanism: 'scram-sha-256', username, password }
          : { mechanism: 'scram-sha-512', username, password };
  }
  return out;
}

export function createKafka(c: Config, log: Logger, probe?: { retries: number; quiet: boolean }): Kafka {
  return new Kafka({
    clientId: c.KAFKA_CLIENT_ID,
    brokers: c.KAFKA_BROKERS,
    ...kafkaSecurity(c),
    // A broker restart is ridden out: keep retrying instead of giving up after kafkajs' default 5.
    retry: { retries: probe?.retries ?? 50, initialRetryTime: 200, maxRetryTime: 5_000 },
    logLevel: probe?.quiet ? logLevel.NOTHING : logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }) => {
        const { message, ...rest } = entry;
        if (level <= logLevel.ERROR) log.error(rest, `kafka: ${message}`);
        else log.warn(rest, `kafka: ${message}`);
      },
  });
}

/**
 * The service's producers (ingest, dead letters, publish CLI). Idempotent with one request in flight:
 * a request resent after a lost answer is dropped by the broker, so Kafka holds each message once.
 * kafkajs keeps that guarantee only with unlimited retries (it warns "Limiting retries for the
 * idempotent producer may invalidate EoS guarantees" otherwise): a retry that gave up would leave a
 * sequence gap the next send cannot close. So retries are unlimited here and callers bound the wait
 * instead (an answer after the bound is a 503 or a retried batch, never a lost record).
 */
export function idempotentProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 5_000 },
    // kafkajs 2's default (murmur2, as Java clients), named so that it does not warn at start.
    createPartitioner: Partitioners.DefaultPartitioner,
  });
}

/** Reject with `what` timed out after `ms` when `task` has not settled by then (it keeps running). */
export function withTimeout<T>(task: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    task,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Create the service's topics when missing. */
export async function ensureTopics(kafka: Kafka, c: Config): Promise<void> {
  const admin: Admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = Object.values(kafkaTopics(c)).filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions: c.KAFKA_PARTITIONS })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}
