import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import { backoffMs } from '../../shared/retry.js';
import { isActivity } from '../../shared/records/index.js';
import { ApiError } from '../../shared/errors.js';
import type { DecodedItem, IngestResult, Rejection } from '../sink.js';
import { validateItems } from '../validate.js';
import type { KafkaClient, KafkaProducer, OutgoingRecord } from './client.js';
import { byteBatches, MAX_REQUEST_BYTES, messageBytes, messageKey } from './messages.js';
import { ensureTopics, kafkaTopics, withTimeout } from './topics.js';

/** How long POST /ingest waits for Kafka's acknowledgement before answering 503. */
const SEND_TIMEOUT_MS = 30_000;
/** The largest record POST /ingest takes in Kafka mode (a request must still hold its key and headers). */
const MAX_RECORD_BYTES = MAX_REQUEST_BYTES - 4 * 1024;

/** POST /ingest answers this while the producer is not connected, or when Kafka does not acknowledge. */
export const kafkaUnavailable = (reason: string) =>
  new ApiError(503, 503, `Kafka is not available: ${reason}`);

/**
 * POST /ingest with KAFKA_BROKERS: validate, then produce with acks = all; "accepted" = acknowledged.
 * Creating it never waits for Kafka: the topics are ensured and the producer connected beside the
 * API, retried until they succeed (`ready`), and until then ingest answers 503.
 */
export class KafkaSink {
  private readonly producer: KafkaProducer;
  private readonly topics: ReturnType<typeof kafkaTopics>;
  private connected = false;
  private closed = false;
  /** Settles once the topics exist and the producer is connected; never rejects. */
  readonly ready: Promise<void>;

  constructor(
    kafka: KafkaClient,
    config: Config,
    private readonly log: Logger,
  ) {
    this.topics = kafkaTopics(config);
    this.producer = kafka.producer();
    this.ready = this.connect(kafka, config);
  }

  private async connect(kafka: KafkaClient, config: Config): Promise<void> {
    for (let attempt = 1; !this.closed; attempt++) {
      try {
        await ensureTopics(kafka, config);
        await this.producer.connect();
        this.connected = true;
        return;
      } catch (err) {
        const retryMs = backoffMs(attempt);
        this.log.warn(
          { err, attempt, retry_in_ms: retryMs },
          'waiting for Kafka (producer); POST /ingest answers 503 meanwhile',
        );
        await new Promise((r) => setTimeout(r, retryMs).unref());
      }
    }
  }

  async ingest(items: DecodedItem[]): Promise<IngestResult> {
    if (!this.connected) throw kafkaUnavailable('the producer is not connected yet');
    // A record alone over a request's size would be refused by the broker: that line's rejection.
    const tooLarge: Rejection[] = [];
    const fitting = items.filter((item) => {
      const fits = !('value' in item) || Buffer.byteLength(JSON.stringify(item.value)) <= MAX_RECORD_BYTES;
      if (!fits) tooLarge.push({ line: item.line, reason: `record larger than ${MAX_RECORD_BYTES} bytes` });
      return fits;
    });
    const { valid, rejected } = validateItems(fitting);
    if (tooLarge.length > 0) rejected.push(...tooLarge);
    rejected.sort((a, b) => a.line - b.line);
    const messages: { topic: string; message: OutgoingRecord }[] = valid.map(({ record, value }) => ({
      topic: isActivity(record) ? this.topics.events : this.topics.catalog,
      message: { key: messageKey(record), value: JSON.stringify(value) },
    }));
    // Catalog first (as before): a list's record reaches the worker before or with its activity.
    messages.sort((a, b) => Number(a.topic === this.topics.events) - Number(b.topic === this.topics.events));
    // Requests within the broker's limits, sent one after the other (order kept per key).
    for (const batch of byteBatches(messages, (m) => messageBytes(m.message))) {
      const byTopic = new Map<string, OutgoingRecord[]>();
      for (const { topic, message } of batch) {
        const list = byTopic.get(topic);
        if (list) list.push(message);
        else byTopic.set(topic, [message]);
      }
      const topicMessages = [...byTopic].map(([topic, msgs]) => ({ topic, messages: msgs }));
      try {
        await withTimeout(this.producer.send(topicMessages), SEND_TIMEOUT_MS, 'produce');
      } catch (err) {
        // Part of the body may be in Kafka already: resending it whole is safe (event_id dedup,
        // catalog versions), and that is what a 503 asks for.
        this.log.warn({ err }, 'kafka did not acknowledge an ingest batch');
        throw kafkaUnavailable((err as Error).message);
      }
    }
    return { accepted: messages.length, rejected };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.producer.disconnect();
  }
}
