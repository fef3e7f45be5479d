import { inject } from 'vitest';

// The `server` project: services started by this file's tests (test/support/service.ts) and the
// processes they spawn run against the run's ClickHouse server, each in a database of its own.
process.env.CLICKHOUSE_URL = inject('clickhouseUrl');
