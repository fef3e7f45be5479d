import { createHash } from 'node:crypto';
import type { Catalog } from '../shared/catalog/catalog.js';
import type { Db } from '../shared/clickhouse/client.js';
import { isActivity, type MailstatsRecord } from '../shared/records/index.js';
import { DEMO, demoRecords } from './demo-seed.js';
import { validateItems } from './validate.js';

const DEMO_LISTS: readonly number[] = DEMO.lists.map((l) => l.list_id);
/** The catalog kind of the seed's marker row. */
const MARKER_KIND = 'demo_tenant';
const DEMO_KEY_SHA256 = createHash('sha256').update(DEMO.apiKey).digest('hex');

/**
 * The demo tenant as the pipeline sees it (docs/records.md "The demo tenant"): which records are the demo's
 * own (its catalog records exactly as the seed writes them, and activity with its `demo-` event ids on its
 * lists), whether it is in the store, and its removal. Its ids are the ones an operator's first lists get,
 * so it is removed whole before the first record that is not its own is applied: the published key then
 * reads nothing, and the generated activity is never counted in an operator's list.
 */
export class DemoTenant {
  /** Whether the store holds a seeded demo (its marker row); read once, this process is the sole writer. */
  private seeded: boolean | undefined;
  /** The demo's catalog records, as validated and stored (the catalog's payload column). */
  private readonly payloads: Set<string>;

  constructor(
    private readonly db: Db,
    private readonly catalog: Catalog,
  ) {
    const catalogItems = demoRecords(0).filter(
      (i) => 'value' in i && !isActivity(i.value as MailstatsRecord),
    );
    this.payloads = new Set(validateItems(catalogItems).valid.map((v) => JSON.stringify(v.record)));
  }

  /** Whether `r` is one of the demo's own records. */
  owns(r: MailstatsRecord): boolean {
    if (isActivity(r)) return r.event_id.startsWith('demo-') && DEMO_LISTS.includes(r.list_id);
    return this.payloads.has(JSON.stringify(r));
  }

  /**
   * Recorded when the seed loads the demo (a catalog row of a kind no reader asks for): only a demo the
   * service seeded is removed, never the same records written by an operator on purpose.
   */
  async markSeeded(): Promise<void> {
    await this.db.insert(
      'catalog',
      ['kind', 'key', 'list_id', 'version', 'arrival', 'payload'],
      [[MARKER_KIND, 'seeded', 0, 0, Date.now() * 1000, '{}']],
    );
    this.seeded = true;
  }

  /** The seeded demo is in the store (its marker is, and its user still holds the published key). */
  async present(): Promise<boolean> {
    if (this.seeded === undefined) {
      const [row] = await this.db.query<{ n: number }>(
        'SELECT count() AS n FROM catalog WHERE kind = {kind:String}',
        { kind: MARKER_KIND },
        { output_format_json_quote_64bit_integers: 0 },
      );
      this.seeded = (row?.n ?? 0) > 0;
    }
    if (!this.seeded) return false;
    return (await this.catalog.user(DEMO.userId))?.api_key_sha256 === DEMO_KEY_SHA256;
  }

  /** Delete its catalog records and its raw activity; the caller rebuilds the lists' per-day rows. */
  async removeRows(): Promise<readonly number[]> {
    await this.db.command(
      "DELETE FROM events WHERE list_id IN {lists:Array(UInt64)} AND startsWith(event_id, 'demo-')",
      { lists: DEMO_LISTS },
      { lightweight_deletes_sync: '2' },
    );
    await this.catalog.removeExact([...this.payloads]);
    await this.db.command(
      'DELETE FROM catalog WHERE kind = {kind:String}',
      { kind: MARKER_KIND },
      { lightweight_deletes_sync: '2' },
    );
    this.seeded = false;
    return DEMO_LISTS;
  }
}
