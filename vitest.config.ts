import { defineConfig } from 'vitest/config';

/**
 * Storage, ingest, API and fault files that also run against a real server.
 * `SERVER_ONLY` files run there only: they need a server of their own (the embedded engine cannot be
 * killed apart from its process).
 */
const SERVER_ONLY = [
  'test/integration/server-crash.test.ts',
  'test/integration/cluster-ddl.test.ts',
  'test/integration/lifecycle-server-backup.test.ts',
];
const FAULT_AND_STORAGE_SUITES = [
  ...SERVER_ONLY,
  ...[
    'kafka-crash',
    'lifecycle-import-kill',
    'lifecycle-erase-kill',
    'redating-kills',
    'redate-retry',
    'kill-property',
    'kafka-ingest',
    'dedup-ledger',
    'list-redating',
    'batch-scopes',
    'pipeline-slices',
    'migration-lock',
    'server-startup',
    'ingest-role',
    'catalog-skew',
    'catalog-ops',
    'production-start',
    'ops',
    'lifecycle-import',
    'kafka-broker-restart',
    'kafka-lifecycle',
    'kafka-commit-failure',
    'kafka-poison-catalog',
    'kafka-offsets-restart',
  ].map((name) => `test/integration/${name}.test.ts`),
];

/**
 * The integration files that run a second time against a real ClickHouse server (the `server` project):
 * the storage, ingest, API and fault suites. Each file says in its header which modes it covers; a file
 * not listed here is embedded-only and says why (docs/development.md, "Test modes").
 */
export const SERVER_SUITES = [
  'test/integration/api-contract.test.ts',
  'test/integration/ingest-route.test.ts',
  'test/integration/stats-correctness.test.ts',
  'test/integration/dashboard-stats-totals.test.ts',
  'test/integration/marketer-people.test.ts',
  'test/integration/marketer-share.test.ts',
  'test/integration/marketer-reports.test.ts',
  'test/server/replica-freshness.test.ts',
  'test/server/pipeline-dating.test.ts',
  'test/server/concurrent-claims.test.ts',
  'test/integration/day-recompute-reads.test.ts',
  // --- storage, ingest, API and fault suites ---
  ...FAULT_AND_STORAGE_SUITES,
  // --- end of storage, ingest, API and fault suites ---
];

const shared = {
  // chDB binds one data directory per process: every test file runs in its own process.
  pool: 'forks' as const,
  fileParallelism: true,
  maxWorkers: 2,
  testTimeout: 60_000,
  hookTimeout: 180_000,
};

// A real Kafka broker for the run (KAFKA_BROKERS, else Docker, else local jars via Maven).
const kafka = 'test/support/kafka-global-setup.ts';

export default defineConfig({
  test: {
    // The JSON report is what .ci/run counts (its closing "N passed, N failed" line).
    reporters: ['default', 'json'],
    outputFile: { json: '.cache/test-results.json' },
    projects: [
      // No broker, server or browser: seconds (npm run test:unit).
      { test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: SERVER_ONLY,
          globalSetup: [kafka],
        },
      },
      { test: { ...shared, name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
      {
        // The same files against a real ClickHouse 26.x server started by scripts/clickhouse-server.mjs;
        // every test service gets a database of its own there (test/support/service.ts).
        test: {
          ...shared,
          name: 'server',
          include: SERVER_SUITES,
          globalSetup: [kafka, 'test/support/clickhouse-global-setup.ts'],
          setupFiles: ['test/support/clickhouse-server-env.ts'],
        },
      },
    ],
  },
});
