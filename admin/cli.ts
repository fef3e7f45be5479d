import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeTokenFile } from '../shared/tokens.js';
import {
  generateKey,
  grant,
  grantsTable,
  listAdd,
  listsTable,
  unknownInGrant,
  userAdd,
  usersTable,
  UsageError,
  withIngestToken,
  type Plan,
} from './commands.js';
import { readKey } from './key-source.js';
import { ServiceClient } from './service-client.js';
import type { ListingFilter } from '../shared/catalog/listing.js';

/** Each command group's help, printed alone by `admin <group>` and together by --help. */
const GROUPS: Record<string, string> = {
  user: `  user add --id N (--generate-key | --key-stdin | --key-file PATH) [--inactive] [--replace]
                                     a user and its api key (stored only as its SHA-256; a generated key
                                     is printed once). The key may also come from MAILSTATS_API_KEY, never
                                     from an argument. An existing user's key is replaced only with --replace`,
  list: `  list add --id N [--name NAME] [--timezone TZ] [--currency CUR] [--locale L]
                                     the API reports revenue in RON and EUR: another currency (e.g. USD)
                                     is stored for display, with a warning`,
  grant: `  grant --user N --list N [--revoke] [--force]
                                     let a user read a list (or stop); a user or list the service does not
                                     know is refused unless --force (the grant then waits for them)`,
  show: `  users | lists | grants [--user N] [--list N]
                                     what the service knows (never a key or its digest)`,
  marketer: MARKETER_HELP,
  token: `  token rotate [--env PATH]          a new ingest token, written to PATH (INGEST_TOKEN=…, e.g. .env for
                                     docker compose) or else to DATA_DIR/ingest-token; restart to use it`,
};
import { AdminError } from './admin-http.js';
import { ImportInputError } from './import-sources.js';
import { MARKETER_HELP, MARKETER_OPTIONS, runMarketer } from './marketer.js';
import { LIFECYCLE_HELP, LIFECYCLE_OPTIONS, lifecycleCommandHelp, runLifecycle } from './lifecycle.js';

const HELP = `mailstats admin: create users, keys, grants and lists, rotate the ingest token.

Usage: npm run admin -- <command> [options]      (in the image: node dist/admin/cli.js <command> …)

${Object.values(GROUPS).join('\n')}

Records go through the running service's POST /ingest, like any producer's: validated, deduplicated,
visible to queries (with Kafka: once the ingest role has consumed them); checks and listings read its
GET /ingest/catalog.
  --url URL        the service (default MAILSTATS_URL, else http://127.0.0.1:$PORT, PORT default 8080)
  The ingest token is read from INGEST_TOKEN, else DATA_DIR/ingest-token (DATA_DIR default ./data);
  it is never taken as an argument (arguments are visible to other users of the machine).
${LIFECYCLE_HELP}`;

const OPTIONS = {
  id: { type: 'string' },
  // Parsed only to refuse it with the reason (admin/key-source.ts).
  key: { type: 'string' },
  'key-stdin': { type: 'boolean' },
  'key-file': { type: 'string' },
  'generate-key': { type: 'boolean' },
  replace: { type: 'boolean' },
  inactive: { type: 'boolean' },
  name: { type: 'string' },
  timezone: { type: 'string' },
  currency: { type: 'string' },
  locale: { type: 'string' },
  user: { type: 'string' },
  list: { type: 'string' },
  revoke: { type: 'boolean' },
  force: { type: 'boolean' },
  // Not --env-file: Node reads that flag itself even after the script's path (nodejs/node#54232), loads
  // the file into this process and exits 9 when it does not exist yet.
  env: { type: 'string' },
  url: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...LIFECYCLE_OPTIONS,
  ...MARKETER_OPTIONS,
} as const;

async function send(service: ServiceClient, plan: Plan): Promise<void> {
  if (plan.warning) console.error(`admin: warning: ${plan.warning}`);
  await service.write(plan.records);
  console.log(plan.done);
}

/** How long `user add` and `list add` wait for the service's catalog to show what they added. */
const VISIBLE_WAIT_MS = 60_000;

/**
 * With Kafka, the service stores a catalog record once its ingest role consumes it, a moment after the
 * write was answered: wait until its catalog shows the user or list, so that the next command (a grant,
 * which refuses what the service does not know) finds it, as the README's steps run one after another.
 * Stored directly, it shows at once. Not there in time: a warning, not an error (it was accepted).
 */
async function awaitVisible(service: ServiceClient, filter: ListingFilter, what: string): Promise<void> {
  const deadline = Date.now() + VISIBLE_WAIT_MS;
  for (;;) {
    const listing = await service.catalog(filter);
    if ((filter.user !== undefined ? listing.users : listing.lists).length > 0) return;
    if (Date.now() >= deadline) {
      console.error(
        `admin: warning: ${what} is not in the service's catalog after ${VISIBLE_WAIT_MS / 1000} s ` +
          '(with Kafka, the ingest role stores it once it consumes it: is it running?)',
      );
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

function rotateToken(envFile: string | undefined): void {
  const token = generateKey() + generateKey();
  if (envFile) {
    const text = existsSync(envFile) ? readFileSync(envFile, 'utf8') : '';
    writeTokenFile(envFile, withIngestToken(text, token));
    console.log(
      `new ingest token written to ${envFile} (INGEST_TOKEN); restart mailstats (docker compose up -d).`,
    );
  } else {
    const file = join(resolve(process.env.DATA_DIR ?? './data'), 'ingest-token');
    writeTokenFile(file, token);
    console.log(`new ingest token written to ${file}; restart mailstats to use it.`);
  }
}

/** `user add`: the key from a safe source; an existing user's key is replaced only when asked. */
async function addUser(service: ServiceClient, values: Record<string, string | boolean | undefined>) {
  const source = readKey(values, process.env, () => readFileSync(0, 'utf8'));
  const plan = userAdd({ ...values, key: source.generate ? undefined : source.key });
  const id = plan.records[0]!.type === 'user' ? plan.records[0]!.user_id : 0;
  const exists = (await service.catalog({ user: id })).users.length > 0;
  if (exists && !values.replace)
    throw new Error(
      `user ${id} already exists: adding it again replaces its api key (the current key stops working). ` +
        'Pass --replace to do that.',
    );
  await send(
    service,
    exists ? userAdd({ ...values, key: source.generate ? undefined : source.key, replace: true }) : plan,
  );
  if (!exists) await awaitVisible(service, { user: id }, `user ${id}`);
}

/** `grant`: refused for a user or list the service does not know, unless --force. */
async function addGrant(service: ServiceClient, values: Record<string, string | boolean | undefined>) {
  const plan = grant(values);
  const r = plan.records[0]!;
  if (r.type !== 'list_access' || !r.granted) return send(service, plan);
  const unknown = unknownInGrant(
    await service.catalog({ user: r.user_id, list: r.list_id }),
    r.user_id,
    r.list_id,
  );
  if (unknown && !values.force)
    throw new Error(
      `${unknown} ${unknown.includes(' and ') ? 'are' : 'is'} not known to the service (yet): add ${
        unknown.includes(' and ') ? 'them' : 'it'
      } first (user add / list add; with Kafka, a record just added may take a moment to be consumed), ` +
        'or pass --force to store the grant anyway (it takes effect once they exist).',
    );
  await service.write(plan.records);
  console.log(unknown ? `${plan.done.replace(/\.$/, '')} (once ${unknown} exist).` : plan.done);
}

const id = (name: string, v: string | boolean | undefined) => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a positive integer`);
  return n;
};

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (values.help && positionals.length > 0) {
    // `admin erase --help`: that command's help only.
    const name = positionals[0]!;
    const help =
      GROUPS[['users', 'lists', 'grants'].includes(name) ? 'show' : name] ?? lifecycleCommandHelp(name);
    if (help === undefined) throw new UsageError(`unknown command "${name}" (see --help)`);
    console.log(`Usage: npm run admin -- ${name} …\n\n${help}`);
    return 0;
  }
  if (values.help || positionals.length === 0) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  // A group named alone (`admin user`): its own commands, not the whole page.
  if (positionals.length === 1 && positionals[0] !== 'grant' && GROUPS[positionals[0]!]) {
    console.log(`Usage: npm run admin -- ${positionals[0]} …\n\n${GROUPS[positionals[0]!]}`);
    return 2;
  }
  const url = values.url ?? process.env.MAILSTATS_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`;
  const lifecycle = await runLifecycle(positionals, values, url);
  if (lifecycle !== undefined) return lifecycle;
  const marketer = await runMarketer(positionals, values, url);
  if (marketer !== undefined) return marketer;
  const service = new ServiceClient(url);
  const command = positionals.join(' ');
  switch (command) {
    case 'user add':
      await addUser(service, values);
      return 0;
    case 'list add': {
      const plan = listAdd(values);
      await send(service, plan);
      const list = plan.records[0]!;
      if (list.type === 'list') await awaitVisible(service, { list: list.list_id }, `list ${list.list_id}`);
      return 0;
    }
    case 'grant':
      await addGrant(service, values);
      return 0;
    case 'users':
    case 'lists':
    case 'grants': {
      const listing = await service.catalog({ user: id('user', values.user), list: id('list', values.list) });
      console.log({ users: usersTable, lists: listsTable, grants: grantsTable }[command](listing));
      return 0;
    }
    case 'token rotate':
      rotateToken(values.env);
      return 0;
    default:
      throw new UsageError(`unknown command "${command}" (see --help)`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  const known = usage || err instanceof AdminError || err instanceof ImportInputError;
  console.error(
    `admin: ${err instanceof Error ? (known ? err.message : (err.stack ?? err.message)) : String(err)}`,
  );
  process.exitCode = usage ? 2 : 1;
}
