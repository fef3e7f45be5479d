import type { Catalog } from '../shared/catalog/catalog.js';
import type { DatedActivity, EventStore } from '../shared/clickhouse/event-store.js';
import { localDate } from '../shared/dates.js';
import type { Logger } from '../shared/log.js';
import { countDeduplicated, timeBatchWrite } from '../shared/metrics.js';
import {
  isActivity,
  type ActivityRecord,
  type CatalogRecord,
  type MailstatsRecord,
} from '../shared/records/index.js';
import { validateItems, type DecodedItem, type Rejection } from './decode.js';

export interface IngestResult {
  accepted: number;
  rejected: Rejection[];
}

/**
 * validate → (reject | batch) → write, the same for HTTP bodies and Kafka batches. Writes are
 * serialised: one writer per process keeps dedup lookups and day recomputes race-free.
 */
export class Pipeline {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly catalog: Catalog,
    private readonly events: EventStore,
    private readonly batchSize: number,
    private readonly log: Logger,
  ) {}

  /** Validate decoded items, write the valid ones; resolves once they are durable and queryable. */
  async ingest(items: DecodedItem[]): Promise<IngestResult> {
    const { valid, rejected } = validateItems(items);
    await this.write(valid.map((v) => v.record));
    return { accepted: valid.length, rejected };
  }

  /**
   * Write validated records (catalog first, so a list's time zone is known before its activity).
   * `token` names a batch the caller can re-form identically after a crash (see EventStore.write).
   */
  write(records: MailstatsRecord[], token?: string): Promise<void> {
    const run = this.queue.then(() => timeBatchWrite(() => this.writeNow(records, token)));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async writeNow(records: MailstatsRecord[], token: string | undefined): Promise<void> {
    const activity: ActivityRecord[] = [];
    const catalog: CatalogRecord[] = [];
    for (const r of records) (isActivity(r) ? activity : catalog).push(r as never);
    if (catalog.length > 0) await this.writeCatalog(catalog);
    for (let i = 0; i < activity.length; i += this.batchSize) {
      const dated = await this.date(activity.slice(i, i + this.batchSize));
      const { written, duplicates } = await this.events.write(dated, token && `${token}#${i}`);
      this.log.debug({ written, duplicates }, 'activity batch stored');
      countDeduplicated(duplicates);
    }
  }

  private async writeCatalog(records: CatalogRecord[]): Promise<void> {
    const lists = [...new Set(records.flatMap((r) => (r.type === 'list' ? [r.list_id] : [])))];
    const before = await Promise.all(lists.map((id) => this.catalog.timezoneOf(id)));
    await this.catalog.write(records);
    for (const [i, id] of lists.entries()) {
      const tz = await this.catalog.timezoneOf(id);
      if (tz !== before[i]) {
        this.log.info(
          { list_id: id, from: before[i], to: tz },
          'list time zone changed: rebuilding its aggregates',
        );
        await this.events.rebuildList(id, tz);
      }
    }
  }

  /** Grouping date: the day the message was sent when the record says so, else its own timestamp. */
  private async date(records: ActivityRecord[]): Promise<DatedActivity[]> {
    const zones = new Map<number, string>();
    for (const r of records)
      if (!zones.has(r.list_id)) zones.set(r.list_id, await this.catalog.timezoneOf(r.list_id));
    return records.map((record) => {
      const at = 'sent_at' in record && record.sent_at !== undefined ? record.sent_at : record.timestamp;
      return { record, day: localDate(at, zones.get(record.list_id)!) };
    });
  }
}
