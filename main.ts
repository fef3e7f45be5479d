import { DEMO } from './ingest/demo-seed.js';
import { ConfigError, loadConfig } from './shared/config.js';
import { startService } from './shared/service.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const service = await startService(config).catch((err: unknown) => {
    // A dependency that never answered, a server too old, no embedded engine: one clear line, exit 1.
    console.error(`mailstats could not start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
  const mode = config.CLICKHOUSE_URL
    ? `ClickHouse server ${config.CLICKHOUSE_URL}`
    : `embedded ClickHouse in ${config.DATA_DIR}`;
  console.log(`mailstats is running (${mode}, role ${config.ROLE})`);
  if (service.url)
    console.log(`  API:          ${service.url}/api/1.2/rest/{user_id}/{api_key}/{operation}.json`);
  if (service.url)
    // Where the token is, never the token itself (docs/operations.md "Start-up").
    console.log(
      `  ingest:       POST ${service.url}/ingest  (Authorization: Bearer <token>; the token is ${
        config.INGEST_TOKEN
          ? 'INGEST_TOKEN'
          : config.CLICKHOUSE_URL
            ? 'random for this run only: set INGEST_TOKEN to use /ingest'
            : `in ${config.DATA_DIR}/ingest-token`
      })`,
    );
  if (!config.CLICKHOUSE_URL && config.SEED_DEMO) {
    console.log(
      `  demo tenant:  user_id ${DEMO.userId}, api_key ${DEMO.apiKey}, lists ${DEMO.lists.map((l) => l.list_id).join(', ')}${service.seeded ? ' (just loaded)' : ''}`,
    );
    if (service.url)
      console.log(
        `  try:          curl '${service.url}/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/automation.stats.json?list_id=1&days=7'`,
      );
  }

  // Contract §6: stop within 10 s even when Kafka or ClickHouse do not answer. service.close() is
  // bounded step by step; the timer is the last resort, and a second signal exits at once.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      service.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    service.log.info({ signal }, 'shutting down');
    setTimeout(() => {
      service.log.error('shutdown took too long: exiting');
      process.exit(1);
    }, 9_000).unref();
    await service.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

await main();
