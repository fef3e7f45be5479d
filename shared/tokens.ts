import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from './config.js';
import { tokenProblem } from './token-rules.js';

/** Writes a token file whole: a temporary file (0600) renamed over it, so no reader sees half a token. */
export function writeTokenFile(path: string, content: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, content, { mode: 0o600 });
  renameSync(temp, path);
}

/**
 * A bearer token the operator did not set: kept in DATA_DIR/<file> when the store is embedded (so it
 * survives restarts; written whole, mode 0600), random for this run only with a ClickHouse server. Never
 * printed or logged. A file that is empty or short stops the start (fail closed): an empty token would
 * match a request without credentials.
 */
export function storedToken(config: Config, given: string | undefined, file: string): string {
  if (given) return given;
  if (config.CLICKHOUSE_URL) return randomBytes(24).toString('hex');
  const dir = resolve(config.DATA_DIR);
  const path = join(dir, file);
  if (existsSync(path)) {
    const token = readFileSync(path, 'utf8').trim();
    const problem = tokenProblem(token);
    if (problem)
      throw new Error(
        `the token in ${path} ${problem}; delete the file to have a new one generated at the next start`,
      );
    return token;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // only this user enters the store (docs/operations.md)
  const token = randomBytes(24).toString('hex');
  writeTokenFile(path, token);
  return token;
}

/** Where a token comes from, for a message: the variable that set it, or its file in DATA_DIR. */
export const tokenSource = (
  config: Config,
  given: string | undefined,
  variable: string,
  file: string,
): string => (given ? variable : join(resolve(config.DATA_DIR), file));
