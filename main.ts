import { ConfigError, loadConfig } from './shared/config.js';
import { printBanner } from './service/banner.js';
import { startService } from './service/start.js';

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
  printBanner(config, service);

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
