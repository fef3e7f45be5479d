import type { Kafka } from 'kafkajs';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { KafkaProgress } from '../../shared/clickhouse/kafka-progress.js';
import { loadConfig } from '../../shared/config.js';
import type { Pipeline } from '../../ingest/pipeline.js';
import { wrapKafkajs } from '../../ingest/kafka/kafkajs.js';
import { IngestWorker } from '../../ingest/kafka/worker.js';

/**
 * docs/operations.md "Start-up": after a SIGKILL the group keeps the dead member's partitions until its
 * session times out, and a restarted worker's join (hence its first commit) waits for that. The default
 * session is short enough for the first commit to come within 10 s of a restart, no shorter than the
 * broker's default group.min.session.timeout.ms (6 s), with a heartbeat well inside it.
 */
describe('the consumer group session', () => {
  it('defaults to a session a restarted worker waits out within 10 s, with heartbeats inside it', () => {
    const config = loadConfig({
      KAFKA_BROKERS: 'localhost:9092',
      INGEST_TOKEN: 'session-test-token-0123456789abcdef',
    });
    let asked: { sessionTimeout?: number; heartbeatInterval?: number } | undefined;
    const consumer = { events: {}, on: () => {} };
    const kafka = {
      consumer: (o: typeof asked) => ((asked = o), consumer),
      producer: () => ({}),
    } as unknown as Kafka;
    new IngestWorker(
      wrapKafkajs(kafka),
      {} as Pipeline,
      {} as KafkaProgress,
      {
        groupId: 'g',
        topics: { events: 'e', catalog: 'c', dlq: 'd' },
        maxBatchRecords: 10,
        maxBatchMs: 10,
        sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      },
      pino({ level: 'silent' }),
    );
    expect(asked?.sessionTimeout).toBe(6_000);
    expect(asked!.heartbeatInterval!).toBeLessThanOrEqual(asked!.sessionTimeout! / 3);
  });

  it('refuses a session shorter than the broker’s default minimum', () => {
    expect(() =>
      loadConfig({
        KAFKA_BROKERS: 'localhost:9092',
        INGEST_TOKEN: 'session-test-token-0123456789abcdef',
        KAFKA_SESSION_TIMEOUT_MS: '5000',
      }),
    ).toThrow(/KAFKA_SESSION_TIMEOUT_MS/);
  });
});
