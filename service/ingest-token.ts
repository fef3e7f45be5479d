import type { Config } from '../shared/config.js';
import { storedToken } from '../shared/tokens.js';

/** INGEST_TOKEN, else one generated into DATA_DIR/ingest-token so it survives restarts (docs/records.md). */
export const ingestToken = (config: Config): string =>
  storedToken(config, config.INGEST_TOKEN, 'ingest-token');
