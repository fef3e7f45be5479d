import { demoRecords } from '../ingest/demo-seed.js';
import type { DemoTenant } from '../ingest/demo-tenant.js';
import type { KafkaSink } from '../ingest/kafka/producer-sink.js';
import type { IngestSink } from '../ingest/sink.js';
import type { Db } from '../shared/clickhouse/client.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/log.js';

/**
 * The demo tenant, loaded on an empty embedded store when SEED_DEMO is on; whether it was (this start).
 * Through Kafka when a Kafka sink is given, else straight into `sink`.
 */
export async function seedDemo(
  config: Config,
  db: Db,
  sink: IngestSink,
  kafkaSink: KafkaSink | undefined,
  log: Logger,
  /** Marked as seeded, so that the first record of the operator's own removes it (docs/records.md). */
  demo?: DemoTenant,
): Promise<boolean> {
  if (config.CLICKHOUSE_URL || !config.SEED_DEMO) return false;
  // Empty means no catalog record and no activity: a store whose demo was removed for an operator's records
  // (even activity alone) never gets it back (docs/records.md "The demo tenant").
  const [row] = await db.query<{ n: number }>(
    'SELECT (SELECT count() FROM catalog) + (SELECT count() FROM events) AS n',
    {},
    { output_format_json_quote_64bit_integers: 0 },
  );
  if (row?.n !== 0) return false;
  await demo?.markSeeded();
  const load = async (to: IngestSink) => {
    const result = await to.ingest(demoRecords());
    log.info({ accepted: result.accepted, rejected: result.rejected.length }, 'demo tenant loaded');
  };
  if (kafkaSink) {
    // Through Kafka once the producer is ready, without holding the API; a failed send is
    // logged (the next start on a still-empty store loads it again, counted once).
    const through = kafkaSink;
    void through.ready
      .then(() => load(through))
      .catch((err: unknown) => log.error({ err }, 'demo tenant not loaded through Kafka'));
  } else {
    await load(sink);
  }
  return true;
}
