import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generateKey, grant, listAdd, userAdd, UsageError, withIngestToken, type Plan } from './commands.js';
import { AdminError } from './admin-http.js';
import { ImportInputError } from './import-sources.js';
import { LIFECYCLE_HELP, LIFECYCLE_OPTIONS, runLifecycle } from './lifecycle.js';

const HELP = `mailstats admin: create users, keys, grants and lists, rotate the ingest token.

Usage: npm run admin -- <command> [options]      (in the image: node dist/admin/cli.js <command> …)

  user add --id N (--generate-key | --key KEY) [--inactive]
                                     a user and its api key (the key is stored only as its SHA-256;
                                     a generated key is printed once); again with a new key = rotate it
  list add --id N [--name NAME] [--timezone TZ] [--currency CUR] [--locale L]
  grant --user N --list N [--revoke] let a user read a list (or stop)
  token rotate [--env-file PATH]     a new ingest token, written to PATH (INGEST_TOKEN=…, e.g. .env for
                                     docker compose) or else to DATA_DIR/ingest-token; restart to use it

Records go through the running service's POST /ingest, like any producer's: validated, deduplicated,
visible to queries (with Kafka: once the ingest role has consumed them).
  --url URL        the service (default MAILSTATS_URL, else http://127.0.0.1:$PORT, PORT default 8080)
  The ingest token is read from INGEST_TOKEN, else DATA_DIR/ingest-token (DATA_DIR default ./data);
  it is never taken as an argument (arguments are visible to other users of the machine).
${LIFECYCLE_HELP}`;

const OPTIONS = {
  id: { type: 'string' },
  key: { type: 'string' },
  'generate-key': { type: 'boolean' },
  inactive: { type: 'boolean' },
  name: { type: 'string' },
  timezone: { type: 'string' },
  currency: { type: 'string' },
  locale: { type: 'string' },
  user: { type: 'string' },
  list: { type: 'string' },
  revoke: { type: 'boolean' },
  'env-file': { type: 'string' },
  url: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...LIFECYCLE_OPTIONS,
} as const;

function ingestToken(): string {
  const fromEnv = process.env.INGEST_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  const file = join(resolve(process.env.DATA_DIR ?? './data'), 'ingest-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  throw new UsageError(`no ingest token: set INGEST_TOKEN (or run where ${file} exists)`);
}

async function send(plan: Plan, url: string): Promise<void> {
  const res = await fetch(`${url.replace(/\/$/, '')}/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${ingestToken()}` },
    body: plan.records.map((r) => JSON.stringify(r)).join('\n'),
  }).catch((err: unknown) => {
    throw new Error(`cannot reach mailstats at ${url}: ${err instanceof Error ? (err.cause ?? err) : err}`);
  });
  const body = (await res.json().catch(() => undefined)) as
    { accepted?: number; rejected?: { reason: string }[]; message?: string } | undefined;
  if (!res.ok) throw new Error(`POST /ingest answered ${res.status}: ${body?.message ?? 'no details'}`);
  if (body?.rejected?.length) throw new Error(`rejected: ${body.rejected.map((r) => r.reason).join('; ')}`);
  console.log(plan.done);
}

function rotateToken(envFile: string | undefined): void {
  const token = generateKey() + generateKey();
  if (envFile) {
    const text = existsSync(envFile) ? readFileSync(envFile, 'utf8') : '';
    writeFileSync(envFile, withIngestToken(text, token), { mode: 0o600 });
    chmodSync(envFile, 0o600); // `mode` applies only when the file is created
    console.log(
      `new ingest token written to ${envFile} (INGEST_TOKEN); restart mailstats (docker compose up -d).`,
    );
  } else {
    const file = join(resolve(process.env.DATA_DIR ?? './data'), 'ingest-token');
    writeFileSync(file, token, { mode: 0o600 });
    chmodSync(file, 0o600);
    console.log(`new ingest token written to ${file}; restart mailstats to use it.`);
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (values.help || positionals.length === 0) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  const url = values.url ?? process.env.MAILSTATS_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`;
  const lifecycle = await runLifecycle(positionals, values, url);
  if (lifecycle !== undefined) return lifecycle;
  const command = positionals.join(' ');
  switch (command) {
    case 'user add':
      await send(userAdd(values), url);
      return 0;
    case 'list add':
      await send(listAdd(values), url);
      return 0;
    case 'grant':
      await send(grant(values), url);
      return 0;
    case 'token rotate':
      rotateToken(values['env-file']);
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
