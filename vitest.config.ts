import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A real Kafka broker for the run (KAFKA_BROKERS, else Docker, else local jars via Maven).
    globalSetup: ['test/support/kafka-global-setup.ts'],
    // chDB binds one data directory per process: every test file runs in its own process.
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // The JSON report is what .ci/run counts (its closing "N passed, N failed" line).
    reporters: ['default', 'json'],
    outputFile: { json: '.cache/test-results.json' },
  },
});
