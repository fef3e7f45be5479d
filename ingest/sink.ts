/**
 * The ingest side's interface, all a caller needs to hand records over: what goes in (decoded items),
 * what comes back (accepted count, per-line rejections) and who takes them. The only part of ingest/
 * that query-api/ may import (POST /ingest; ARCHITECTURE.md, "Layers").
 */

/** One item of an ingest body: where it stood (line, from 1) and its decoded JSON, or why not. */
export type DecodedItem = { line: number; value: unknown } | { line: number; error: string };

export interface Rejection {
  line: number;
  reason: string;
}

export interface IngestResult {
  accepted: number;
  rejected: Rejection[];
}

/** Where accepted records go: the pipeline (embedded) or Kafka (when KAFKA_BROKERS is set). */
export interface IngestSink {
  ingest(items: DecodedItem[]): Promise<IngestResult>;
}
