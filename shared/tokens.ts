import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from './config.js';

/**
 * A bearer token the operator did not set: kept in DATA_DIR/<file> when the store is embedded (so it
 * survives restarts; written to a temporary file and renamed, mode 0600, so a crash never leaves a
 * half-written token), random for this run only with a ClickHouse server. Never printed or logged.
 */
export function storedToken(config: Config, given: string | undefined, file: string): string {
  if (given) return given;
  if (config.CLICKHOUSE_URL) return randomBytes(24).toString('hex');
  const dir = resolve(config.DATA_DIR);
  const path = join(dir, file);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(dir, { recursive: true });
  const token = randomBytes(24).toString('hex');
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, token, { mode: 0o600 });
  renameSync(temp, path);
  return token;
}
