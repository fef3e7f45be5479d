import type { Pipeline } from '../ingest/pipeline.js';
import { IngestWorker } from '../ingest/kafka/worker.js';
import { KafkaSink } from '../ingest/kafka/producer-sink.js';
import { createKafka, kafkaTopics } from '../ingest/kafka/topics.js';
import type { Db } from '../shared/clickhouse/client.js';
import { KafkaProgress } from '../shared/clickhouse/kafka-progress.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/log.js';

export interface KafkaWiring {
  /** Where POST /ingest sends records when KAFKA_BROKERS is set. */
  sink: KafkaSink;
  /** The consumer feeding the pipeline, in the roles that write (not `api`). */
  worker: IngestWorker | undefined;
}

/**
 * Kafka is reached beside the API, never before it (docs/operations.md "Start-up"): the producer connects and the
 * consumer joins its group in the background, retried while Kafka is away; POST /ingest answers 503
 * until the producer is ready. Undefined without KAFKA_BROKERS.
 */
export function wireKafka(config: Config, db: Db, pipeline: Pipeline, log: Logger): KafkaWiring | undefined {
  if (config.KAFKA_BROKERS.length === 0) return undefined;
  const kafka = createKafka(config, log);
  const sink = new KafkaSink(kafka, config, log);
  if (config.ROLE === 'api') return { sink, worker: undefined };
  const options = {
    groupId: config.KAFKA_GROUP_ID,
    topics: kafkaTopics(config),
    maxBatchRecords: config.KAFKA_BATCH_MAX_RECORDS,
    maxBatchMs: config.KAFKA_BATCH_MAX_MS,
    sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
    fetchMaxBytes: config.KAFKA_FETCH_MAX_BYTES,
  };
  const worker = new IngestWorker(
    kafka,
    pipeline,
    new KafkaProgress(db, config.KAFKA_GROUP_ID),
    options,
    log,
  );
  // The topics must exist before the consumer subscribes: the sink ensures them first.
  void sink.ready
    .then(() => worker.keepStarting())
    .catch((err: unknown) => log.error({ err }, 'kafka consumer not started'));
  return { sink, worker };
}
