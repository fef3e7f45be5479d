import { setFlagsFromString } from 'node:v8';
import type { Config } from '../shared/config.js';

/** HEAP_GROWTH_PERCENT unset, in a process that consumes Kafka. */
const KAFKA_WORKER_GROWTH_PERCENT = 30;

/**
 * Heap sized by what the process holds (docs/operations.md "Memory"): after each full collection V8
 * may grow the heap to (1 + percent/100) × the live set, not the up to 4× its own heuristics allow on a
 * large machine. The flag is read at every collection, so setting it at start from inside the process
 * takes effect without a command-line flag. By default only a Kafka consumer is sized so: it holds a
 * steady working set, while the direct POST /ingest path allocates a whole body at once and collecting
 * that often cost it a fifth of its rate (BENCHMARKS.md).
 */
export function sizeHeap(config: Pick<Config, 'HEAP_GROWTH_PERCENT' | 'KAFKA_BROKERS' | 'ROLE'>): number {
  const consumesKafka = config.KAFKA_BROKERS.length > 0 && config.ROLE !== 'api';
  const percent = config.HEAP_GROWTH_PERCENT ?? (consumesKafka ? KAFKA_WORKER_GROWTH_PERCENT : 0);
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
