import { DEMO } from '../ingest/demo-seed.js';
import type { Config } from '../shared/config.js';
import type { Service } from './start.js';

/**
 * What `npm start` prints once the service listens: where the API, POST /ingest and the demo tenant are.
 * The demo's key is printed only while the demo is in the store: once the first record of an operator's own
 * has removed it (docs/records.md "The demo tenant"), the banner says so instead of a key that answers 403.
 */
export function printBanner(config: Config, service: Pick<Service, 'url' | 'seeded' | 'demoPresent'>): void {
  const seeding = !config.CLICKHOUSE_URL && config.SEED_DEMO;
  const demo = seeding && (service.seeded || service.demoPresent);
  const mode = config.CLICKHOUSE_URL
    ? `ClickHouse server ${withoutUserInfo(config.CLICKHOUSE_URL)}`
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
  if (service.url)
    // Where the admin token is, never the token (docs/lifecycle.md).
    console.log(
      `  admin:        npm run admin -- <command>  (the admin token is ${
        config.ADMIN_TOKEN
          ? 'ADMIN_TOKEN'
          : config.CLICKHOUSE_URL
            ? 'random for this run only: set ADMIN_TOKEN to use admin commands'
            : `in ${config.DATA_DIR}/admin-token`
      })`,
    );
  if (service.url) {
    console.log(
      `  dashboard:    ${service.url}/dashboard/${
        demo ? `  (demo: sign in with user_id ${DEMO.userId} and api_key ${DEMO.apiKey})` : ''
      }`,
    );
    console.log(`  docs:         ${service.url}/docs`);
  }
  if (seeding && !demo)
    console.log(
      '  demo tenant:  none — this store holds records of your own (the demo is loaded only into an empty store, and the first record of your own removes it: docs/records.md "The demo tenant")',
    );
  if (demo) {
    console.log(
      `  demo tenant:  user_id ${DEMO.userId}, api_key ${DEMO.apiKey}, lists ${DEMO.lists.map((l) => l.list_id).join(', ')}${service.seeded ? ' (just loaded)' : ''}`,
    );
    if (service.url)
      console.log(
        `  try:          curl '${service.url}/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/automation.stats.json?list_id=1&days=7'`,
      );
  }
}

/** The URL without user and password (they may be in CLICKHOUSE_URL; a banner is no place for them). */
export function withoutUserInfo(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
