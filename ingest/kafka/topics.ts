import { readFileSync } from 'node:fs';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import type { KafkaClient, KafkaSecurity } from './client.js';
import { kafkajsClient } from './kafkajs.js';

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
 * TLS and SASL from KAFKA_SSL* and KAFKA_SASL_* (docs/configuration.md): TLS with the system CAs, or
 * with the given CA (and a client certificate and key for mutual TLS); SASL PLAIN or SCRAM with a user
 * name and password. Nothing when neither is configured (a plaintext listener).
 */
export function kafkaSecurity(c: Config): KafkaSecurity {
  const out: KafkaSecurity = {};
  if (c.KAFKA_SSL) {
    const files = {
      ...(c.KAFKA_SSL_CA_FILE && { ca: [pem('KAFKA_SSL_CA_FILE', c.KAFKA_SSL_CA_FILE)] }),
      ...(c.KAFKA_SSL_CERT_FILE && { cert: pem('KAFKA_SSL_CERT_FILE', c.KAFKA_SSL_CERT_FILE) }),
      ...(c.KAFKA_SSL_KEY_FILE && { key: pem('KAFKA_SSL_KEY_FILE', c.KAFKA_SSL_KEY_FILE) }),
    };
    out.ssl = Object.keys(files).length > 0 ? files : true;
  }
  if (c.KAFKA_SASL_MECHANISM && c.KAFKA_SASL_USERNAME && c.KAFKA_SASL_PASSWORD) {
    const {
      KAFKA_SASL_MECHANISM: mechanism,
      KAFKA_SASL_USERNAME: username,
      KAFKA_SASL_PASSWORD: password,
    } = c;
    out.sasl = { mechanism, username, password };
  }
  return out;
}

/**
 * The service's Kafka client (kafkajs, through the seam: client.ts), logging to `log` (none: quiet). A
 * broker restart is ridden out: requests are retried 50 times (kafkajs' default is 5) unless
 * `options.retries` says otherwise (the lag reader's scrape must not hang: 1).
 */
export function createKafka(
  c: Config,
  log?: Logger,
  options?: { retries: number; initialRetryMs?: number; clientId?: string; connectionTimeoutMs?: number },
): KafkaClient {
  return kafkajsClient(
    {
      clientId: options?.clientId ?? c.KAFKA_CLIENT_ID,
      brokers: c.KAFKA_BROKERS,
      ...kafkaSecurity(c),
      retries: options?.retries ?? 50,
      ...(options?.initialRetryMs !== undefined && { initialRetryMs: options.initialRetryMs }),
      ...(options?.connectionTimeoutMs !== undefined && { connectionTimeoutMs: options.connectionTimeoutMs }),
    },
    log,
  );
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
export async function ensureTopics(kafka: KafkaClient, c: Config): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = Object.values(kafkaTopics(c)).filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics(missing.map((topic) => ({ topic, numPartitions: c.KAFKA_PARTITIONS })));
    }
  } finally {
    await admin.disconnect();
  }
}
