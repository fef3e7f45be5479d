import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../shared/config.js';

/** Without INGEST_TOKEN the embedded store keeps one it generated, so it survives restarts. */
export function ingestToken(config: Config): string {
  if (config.INGEST_TOKEN) return config.INGEST_TOKEN;
  if (config.CLICKHOUSE_URL) return randomBytes(24).toString('hex');
  const file = join(resolve(config.DATA_DIR), 'ingest-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(resolve(config.DATA_DIR), { recursive: true });
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, token, { mode: 0o600 });
  return token;
}
