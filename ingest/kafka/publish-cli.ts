import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/log.js';
import { checkRecord, isActivity } from '../../shared/records/index.js';
import type { OutgoingRecord } from './client.js';
import { byteBatches, messageBytes, messageKey } from './messages.js';
import { createKafka, ensureTopics, kafkaTopics } from './topics.js';

const HELP = `Publish an NDJSON file of mailstats records to Kafka (backfill and replay).

Usage: npm run publish -- <file.ndjson> [--dry-run] [--batch N]

Each line is one record (docs/records.md). Activity records go to KAFKA_EVENTS_TOPIC keyed by list_id,
catalog records to KAFKA_CATALOG_TOPIC keyed by entity; invalid lines are reported and skipped (the
worker would dead-letter them). Records are produced with acks = all. Republishing a file is safe:
records are counted once per event_id within DEDUP_WINDOW_DAYS.

Options:
  --dry-run   validate and count only, publish nothing
  --batch N   records read before sending (default 5000; requests are split to fit the broker)
  --help      this text

Environment: KAFKA_BROKERS (required), KAFKA_EVENTS_TOPIC, KAFKA_CATALOG_TOPIC, KAFKA_CLIENT_ID.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'dry-run': { type: 'boolean' }, batch: { type: 'string' }, help: { type: 'boolean' } },
});
if (values.help || positionals.length !== 1) {
  console.log(HELP);
  process.exit(values.help ? 0 : 1);
}

const config = loadConfig();
if (!values['dry-run'] && config.KAFKA_BROKERS.length === 0) {
  console.error('KAFKA_BROKERS is not set: nothing to publish to (use --dry-run to only validate).');
  process.exit(1);
}
const file = positionals[0]!;
const batchSize = Number(values.batch ?? 5000);
const total = statSync(file).size;
const topics = kafkaTopics(config);
const kafka = values['dry-run'] ? undefined : createKafka(config, createLogger('warn'));
const producer = kafka?.producer();
if (kafka) await ensureTopics(kafka, config);
await producer?.connect();

const sent = { events: 0, catalog: 0 };
const invalid: string[] = [];
let pending: { topic: string; messages: OutgoingRecord[] }[] = [
  { topic: topics.events, messages: [] },
  { topic: topics.catalog, messages: [] },
];
let bytes = 0;
let line = 0;
const started = Date.now();

function progress(done = false) {
  const width = 30;
  const filled = Math.round((bytes / Math.max(total, 1)) * width);
  const rate = Math.round((sent.events + sent.catalog) / Math.max((Date.now() - started) / 1000, 0.001));
  process.stderr.write(
    `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round((bytes / Math.max(total, 1)) * 100)}%  ` +
      `${sent.events + sent.catalog} records, ${invalid.length} invalid, ${rate}/s${done ? '\n' : ''}`,
  );
}

async function flush() {
  // Each request within the broker's limits (MESSAGE_TOO_LARGE otherwise), topics one after the other.
  for (const t of pending) {
    for (const messages of byteBatches(t.messages, messageBytes)) {
      if (producer) await producer.send([{ topic: t.topic, messages }]);
    }
  }
  sent.events += pending[0]!.messages.length;
  sent.catalog += pending[1]!.messages.length;
  pending = pending.map((t) => ({ topic: t.topic, messages: [] }));
  progress();
}

for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
  line++;
  bytes += Buffer.byteLength(text) + 1;
  if (text.trim() === '') continue;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    invalid.push(`line ${line}: not valid JSON`);
    continue;
  }
  const check = checkRecord(value);
  if (!check.ok) {
    invalid.push(`line ${line}: ${check.reason}`);
    continue;
  }
  pending[isActivity(check.record) ? 0 : 1]!.messages.push({ key: messageKey(check.record), value: text });
  if (pending[0]!.messages.length + pending[1]!.messages.length >= batchSize) await flush();
}
await flush();
progress(true);
await producer?.disconnect();

console.log(
  `${values['dry-run'] ? 'Validated' : 'Published'} ${sent.events} activity and ${sent.catalog} catalog records ` +
    `from ${file} in ${((Date.now() - started) / 1000).toFixed(1)} s; ${invalid.length} invalid line(s) skipped.`,
);
for (const reason of invalid.slice(0, 20)) console.log(`  ${reason}`);
if (invalid.length > 20) console.log(`  … and ${invalid.length - 20} more`);
process.exit(invalid.length > 0 ? 2 : 0);
