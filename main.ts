import { ConfigError, loadConfig } from './shared/config.js';
import { createLogger } from './shared/log.js';
import { printBanner } from './service/banner.js';
import { sizeHeap } from './service/heap.js';
import { launchService, type Launch } from './service/start.js';

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
  sizeHeap(config);
  // The listener first (docs/operations.md "Start-up"): a taken PORT ends the process here, at once.
  const fail = (err: unknown) => {
    // A dependency that never answered, a server too old, no embedded engine, a taken port: one line, exit 1.
    console.error(`mailstats could not start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  };
  const log = createLogger(config.LOG_LEVEL, undefined, config.LOG_FORMAT);
  const launch: Launch = await launchService(config, log).catch(fail);

  // docs/operations.md "Shutdown": stop within 10 s even when Kafka or ClickHouse do not answer, also while
  // start-up still waits for them. close() is bounded step by step; the timer is the last resort, and a
  // second signal exits at once.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown took too long: exiting');
      process.exit(1);
    }, 9_000).unref();
    await launch.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const service = await launch.service.catch(fail);
  if (!stopping) printBanner(config, service);
}

await main();
