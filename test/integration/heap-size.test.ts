import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { sizeHeap } from '../../service/heap.js';

/**
 * HEAP_GROWTH_PERCENT (docs/operations.md "Memory"): set from inside the process, it bounds how far V8
 * lets the heap grow past what is live. A child holds ~40 MB live while allocating ~0.6 GB of garbage,
 * with and without it; the largest heap it reaches is compared.
 */
const CHURN = `
import { sizeHeap } from './service/heap.ts';
sizeHeap({ HEAP_GROWTH_PERCENT: Number(process.argv[1]), KAFKA_BROKERS: [], ROLE: 'all' });
const live = [];
let max = 0;
for (let i = 0; i < 800; i++) {
  live.push(Array.from({ length: 20000 }, (_, j) => ({ a: 'x' + j, b: j })));
  if (live.length > 20) live.shift();
  max = Math.max(max, process.memoryUsage().heapTotal);
  if (i % 20 === 0) await new Promise((r) => setImmediate(r));
}
console.log(Math.round(max / 2 ** 20));
`;

const maxHeapMb = (percent: number) =>
  Number(
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHURN, String(percent)], {
      encoding: 'utf8',
    }).trim(),
  );

describe('sizeHeap', () => {
  it('sizes a Kafka consumer by default, and nothing else unless asked', () => {
    // Each call only sets a V8 flag the test process never relies on.
    const kafka = ['127.0.0.1:9092'];
    expect(sizeHeap({ HEAP_GROWTH_PERCENT: undefined, KAFKA_BROKERS: kafka, ROLE: 'all' })).toBe(30);
    expect(sizeHeap({ HEAP_GROWTH_PERCENT: undefined, KAFKA_BROKERS: kafka, ROLE: 'ingest' })).toBe(30);
    expect(sizeHeap({ HEAP_GROWTH_PERCENT: undefined, KAFKA_BROKERS: kafka, ROLE: 'api' })).toBe(0);
    expect(sizeHeap({ HEAP_GROWTH_PERCENT: undefined, KAFKA_BROKERS: [], ROLE: 'all' })).toBe(0);
    expect(sizeHeap({ HEAP_GROWTH_PERCENT: 50, KAFKA_BROKERS: [], ROLE: 'all' })).toBe(50);
    expect(sizeHeap({ HEAP_GROWTH_PERCENT: 0, KAFKA_BROKERS: kafka, ROLE: 'all' })).toBe(0);
  });

  it('keeps the heap near the live set where V8 alone lets it grow far past it', () => {
    const own = maxHeapMb(0);
    const sized = maxHeapMb(30);
    console.log(`largest heap: ${own} MB by V8 alone, ${sized} MB sized`);
    expect(sized).toBeGreaterThan(0);
    expect(sized).toBeLessThan(own * 0.8);
  }, 120_000);
});
