import { setFlagsFromString } from 'node:v8';

/**
 * Heap sized by what the process holds (docs/operations.md "Memory"): after each full collection V8
 * may grow the heap to (1 + percent/100) × the live set, not the up to 4× its own heuristics allow on a
 * large machine. The flag is read at every collection, so setting it at start from inside the process
 * takes effect without a command-line flag; 0 leaves V8's heuristics.
 */
export function sizeHeap(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
