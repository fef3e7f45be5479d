/** A seeded pseudo-random generator in [0, 1) (a linear congruential one): reproducible test data. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}
