import type { Pipeline } from '../ingest/pipeline.js';
import { createKafka, kafkaTopics } from '../ingest/kafka/topics.js';
import { readDeadLetters } from '../ingest/kafka/dlq-reader.js';
import type { AdminActions } from '../query-api/admin-route.js';
import { AdminRequestError } from '../query-api/admin-route.js';
import type { IngestSink } from '../ingest/sink.js';
import { backupDatabase, BackupRequestError } from '../shared/clickhouse/backup.js';
import type { Db } from '../shared/clickhouse/client.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { storedToken, tokenSource } from '../shared/tokens.js';
import { ingestToken } from './ingest-token.js';
import { UnknownListError } from '../ingest/pipeline.js';

/**
 * ADMIN_TOKEN, else one generated into DATA_DIR/admin-token (docs/lifecycle.md). The same token as the
 * ingest token (e.g. one file copied over the other) stops the start, naming both sources: the ingest
 * token must not run admin commands.
 */
export function adminToken(config: Config): string {
  const admin = storedToken(config, config.ADMIN_TOKEN, 'admin-token');
  if (admin === ingestToken(config))
    throw new Error(
      `${tokenSource(config, config.ADMIN_TOKEN, 'ADMIN_TOKEN', 'admin-token')} and ` +
        `${tokenSource(config, config.INGEST_TOKEN, 'INGEST_TOKEN', 'ingest-token')} hold the same token: the ` +
        'ingest token must not run admin commands; delete the admin-token file to have a new one generated ' +
        '(or set ADMIN_TOKEN to another value)',
    );
  return admin;
}

/** The admin endpoints' actions (docs/lifecycle.md), on this process's pipeline, store and Kafka. */
export function adminActions(deps: {
  config: Config;
  db: Db;
  pipeline: Pipeline;
  sink: IngestSink;
  log: Logger;
}): AdminActions {
  const { config, db, pipeline, sink, log } = deps;
  const kafka = config.KAFKA_BROKERS.length > 0 ? createKafka(config, log) : undefined;
  return {
    sink,
    async erase(pairs) {
      try {
        return await pipeline.erase(pairs);
      } catch (err) {
        if (err instanceof UnknownListError) throw new AdminRequestError(err.message, 404);
        throw err;
      }
    },
    erasureLog: () => pipeline.erasureLog(),
    async backup(dir) {
      try {
        // The BACKUP between writes: every batch is in the backup whole or not at all.
        const done = await backupDatabase(
          db,
          config.CLICKHOUSE_DATABASE,
          dir,
          config.BACKUP_ROOT,
          config.BACKUP_HMAC_KEY,
          (task) => pipeline.exclusive(task),
        );
        return { dir: done.dir, schema_version: done.schema_version };
      } catch (err) {
        if (err instanceof BackupRequestError) throw new AdminRequestError(err.message);
        throw err;
      }
    },
    deadLetters: kafka
      ? (filter, each) => readDeadLetters(kafka, kafkaTopics(config).dlq, filter, each, log)
      : undefined,
  };
}
