/**
 * A dead letter as read back from the dead-letter topic and as `dlq export` writes it (docs/lifecycle.md,
 * "dlq export"): the original value and where it came from. Here, below both the Kafka reader (ingest/)
 * and the admin route (query-api/), which must not import each other.
 */
export interface DeadLetter {
  value: string | null;
  reason: string;
  topic: string;
  partition: number;
  offset: string;
  time: string;
}
