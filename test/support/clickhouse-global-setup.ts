import type { TestProject } from 'vitest/node';
import { startClickHouseServer } from '../../scripts/clickhouse-server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    clickhouseUrl: string;
  }
}

/**
 * One real ClickHouse server for the `server` project's run (CLICKHOUSE_URL when set, else one started
 * from the engine library chdb installs). Never skipped: a server that does not start fails the run,
 * saying why.
 */
export default async function setup(project: TestProject) {
  let url = process.env.CLICKHOUSE_URL;
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    const server = await startClickHouseServer({ log: (m) => console.error(m) });
    url = server.url;
    stop = () => server.stop();
  }
  project.provide('clickhouseUrl', url);
  return async () => {
    await stop?.();
  };
}
