import { Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { isActivity } from '../../shared/records/index.js';
import { validateItems, type DecodedItem } from '../decode.js';
import type { IngestResult } from '../pipeline.js';
import { messageKey } from './messages.js';

/** POST /ingest with KAFKA_BROKERS: validate, then produce with acks = all; "accepted" = acknowledged. */
export class KafkaSink {
  private constructor(
    private readonly producer: Producer,
    private readonly topics: { events: string; catalog: string },
  ) {}

  static async connect(kafka: Kafka, topics: { events: string; catalog: string }): Promise<KafkaSink> {
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      // kafkajs 2's default (murmur2, as Java clients), named so that it does not warn at start.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    return new KafkaSink(producer, topics);
  }

  async ingest(items: DecodedItem[]): Promise<IngestResult> {
    const { valid, rejected } = validateItems(items);
    const events: Message[] = [];
    const catalog: Message[] = [];
    for (const { record, value } of valid) {
      (isActivity(record) ? events : catalog).push({ key: messageKey(record), value: JSON.stringify(value) });
    }
    const topicMessages = [
      { topic: this.topics.catalog, messages: catalog },
      { topic: this.topics.events, messages: events },
    ].filter((t) => t.messages.length > 0);
    if (topicMessages.length > 0) await this.producer.sendBatch({ acks: -1, topicMessages });
    return { accepted: events.length + catalog.length, rejected };
  }

  close(): Promise<void> {
    return this.producer.disconnect();
  }
}
