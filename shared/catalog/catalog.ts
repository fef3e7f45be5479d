import type { Db, Params } from '../clickhouse/client.js';
import type { Logger } from '../log.js';
import type {
  CatalogRecord,
  ListRecord,
  SmtpAccountRecord,
  TemplateRecord,
  UserRecord,
  ListAccessRecord,
  WorkflowRecord,
} from '../records/index.js';

/** A template as stored, with a token that changes whenever a newer version is stored. */
export type StoredTemplate = TemplateRecord & { versionToken: string };
export type ListInfo = Omit<ListRecord, 'timezone'> & { timezone: string };

const MAX_CACHED = 50_000;

function keyOf(r: CatalogRecord): { key: string; listId: number } {
  switch (r.type) {
    case 'list':
      return { key: String(r.list_id), listId: r.list_id };
    case 'user':
      return { key: String(r.user_id), listId: 0 };
    case 'list_access':
      return { key: `${r.user_id}:${r.list_id}`, listId: r.list_id };
    case 'smtp_account':
      return { key: r.account_id, listId: r.list_id };
    case 'template':
      return { key: `${r.account_id}/${r.template_id}`, listId: 0 };
    case 'workflow':
      return { key: String(r.workflow_id), listId: r.list_id };
  }
}

let lastArrival = 0;
/** Arrival order for records without a version: increasing within the process, time-ordered across. */
function nextArrival(): number {
  lastArrival = Math.max(lastArrival + 1, Date.now() * 1000);
  return lastArrival;
}

/**
 * What is held of the catalog may not be served: the poll that would tell other processes' changes (a
 * revoked grant, a changed key) has not succeeded for longer than the freshness bound
 * (CATALOG_FRESHNESS_MS). The API answers it 503 with Retry-After (docs/operations.md, "Catalog changes
 * across processes"). `cause`: the last poll's error.
 */
export class CatalogNotFresh extends Error {
  constructor(cause: unknown) {
    super('the catalog could not be read recently enough', { cause });
    this.name = 'CatalogNotFresh';
  }
}

/**
 * The change poll's fingerprint of the catalog table (`Catalog.startPolling`), from the engine's list of
 * the table's parts, not its rows, so a poll costs the same at 10 lists as at 10,000 (it read the whole
 * arrival column four times a second; BENCHMARKS.md's history). Every insert takes a new
 * block number, and a merge keeps the range of the parts it merges, so the highest block number moves with
 * inserts only; a delete is a mutation, whose number every part it rewrote carries as its data version (a
 * part never mutated has its first block's number there) and keeps through merges. The table's UUID tells
 * apart a table created again.
 */
export const CATALOG_FINGERPRINT = `
  SELECT concat(toString(max(max_block_number)), ':',
    toString(max(if(data_version > min_block_number, data_version, 0))), ':',
    toString((SELECT uuid FROM system.tables WHERE database = currentDatabase() AND name = 'catalog'))) AS g
  FROM system.parts WHERE database = currentDatabase() AND table = 'catalog' AND active`;

/**
 * Catalog entities (lists, users, grants, accounts, templates, workflows): upserts where the highest
 * (version, arrival) wins. Reads are cached; the cache is dropped whenever the catalog changes —
 * at once for writes made by this process, within CATALOG_POLL_MS for another process's writes.
 */
export class Catalog {
  private cache = new Map<string, Promise<unknown>>();
  /** Bumped on every invalidation, so a lookup that raced a write is not kept. */
  private epoch = 0;
  /** The catalog table's fingerprint at the last poll (see `fingerprint`). */
  private generation = '';
  /** Every user at its latest version, by id; reloaded after the catalog changes (see `user`). */
  private users: Promise<Map<number, UserRecord>> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set by stopPolling: a poll in flight then schedules no next one. */
  private polling = false;
  /**
   * Until this time (epoch ms) what is held may be served: every catalog change committed before the
   * last successful poll began is in it. Infinity without a freshness bound (one process's own store).
   */
  private freshUntil = Infinity;
  private staleAfterMs = Infinity;
  /** The poll in flight (scheduled, or asked for by a read that found what is held stale): shared. */
  private inFlight: Promise<void> | undefined;
  /** When the last successful poll began (epoch ms). */
  private polledAt = 0;

  constructor(
    private readonly db: Db,
    private readonly defaultTimezone: string,
    private readonly log: Logger,
  ) {}

  /**
   * Polls the catalog's fingerprint every `intervalMs`, dropping what is held when another process
   * changed the catalog. With `freshnessMs` (server mode, where other processes write), what is held is
   * served only while the last successful poll began less than that ago (at least two intervals): a read
   * that finds it older waits for one poll, shared, and when that fails is refused (CatalogNotFresh).
   */
  startPolling(intervalMs: number, freshnessMs?: number): void {
    this.polling = true;
    if (freshnessMs !== undefined) {
      this.staleAfterMs = Math.max(freshnessMs, 2 * intervalMs);
      // Nothing is held yet: what is read from now on is current.
      this.freshUntil = Date.now() + this.staleAfterMs;
    }
    const poll = async () => {
      try {
        await this.pollShared();
      } catch (err) {
        // One in flight when the service stopped fails on the closing connection: not worth a warning.
        if (this.polling) this.log.warn({ err }, 'catalog poll failed');
      }
      if (!this.polling) return;
      this.timer = setTimeout(poll, intervalMs);
      this.timer.unref();
    };
    void poll();
  }

  private pollShared(): Promise<void> {
    return (this.inFlight ??= this.pollOnce().finally(() => (this.inFlight = undefined)));
  }

  private async pollOnce(): Promise<void> {
    const began = Date.now();
    // A fingerprint of the table that any write changes, whatever the writer's clock stamped on its
    // rows (a revocation stamped below the newest arrival must be seen): see `fingerprint`.
    // On a read connection where there is one: the poll never waits between a write's statements.
    const g = await this.fingerprint();
    if (g !== this.generation) {
      this.generation = g;
      this.invalidate();
    }
    // Only after the invalidation: every change committed before this poll began is now in what is read.
    this.polledAt = Math.max(this.polledAt, began);
    this.freshUntil = Math.max(this.freshUntil, began + this.staleAfterMs);
  }

  /**
   * For a read that found what is held stale: a poll that begins after it asked (the one in flight may
   * have begun too long ago), shared with other such readers. When it succeeds what is held is current,
   * however long the poll took (a slow server is not a reason to refuse); when it fails the read is
   * refused, for no change (a revoked grant, a changed key) could have been seen.
   */
  private async freshen(): Promise<void> {
    const asked = Date.now();
    if (this.inFlight) await this.inFlight.catch(() => undefined);
    if (this.polledAt >= asked) return; // another reader's poll began after this one asked
    try {
      await this.pollShared();
    } catch (err) {
      throw new CatalogNotFresh(err);
    }
  }

  /** The table's fingerprint now: see CATALOG_FINGERPRINT. */
  private async fingerprint(): Promise<string> {
    const [row] = await this.db.read<{ g: string }>(CATALOG_FINGERPRINT);
    return row?.g ?? '';
  }

  /** Whether what is held may be served without a poll first (always, without a freshness bound). */
  get isFresh(): boolean {
    return Date.now() < this.freshUntil;
  }

  /** Changes whenever what the catalog answers may have changed (the cache is dropped). */
  get version(): number {
    return this.epoch;
  }

  stopPolling(): void {
    this.polling = false;
    clearTimeout(this.timer);
  }

  async write(records: CatalogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records.map((r) => {
      const { key, listId } = keyOf(r);
      return [r.type, key, listId, r.version ?? 0, nextArrival(), JSON.stringify(r)];
    });
    let seen: string | undefined;
    try {
      await this.db.insert('catalog', ['kind', 'key', 'list_id', 'version', 'arrival', 'payload'], rows);
      // The fingerprint with this write in it, taken before the cache is dropped: every row it counts is
      // then in what is read after, so the poll need not drop the cache again for this process's own
      // write (it did, and a request just after re-read the catalog). Without it the poll's next look
      // only causes a spare refresh.
      seen = await this.fingerprint().catch(() => undefined);
    } finally {
      this.invalidate();
      if (seen !== undefined) this.generation = seen;
    }
  }

  async list(listId: number): Promise<ListInfo | undefined> {
    const r = await this.latest<ListRecord>('list', String(listId));
    return r && { ...r, timezone: r.timezone ?? this.defaultTimezone };
  }

  /** The time zone a list's dates are counted in (the default for a list not in the catalog yet). */
  async timezoneOf(listId: number): Promise<string> {
    return (await this.list(listId))?.timezone ?? this.defaultTimezone;
  }

  /**
   * The time zones of lists as stored right now, uncached: of the given lists (the default for one not
   * in the catalog yet), or of every list in the catalog. Dating decisions read this: a cache up to CATALOG_POLL_MS old could
   * re-date a list back into a zone another process has just replaced.
   */
  async storedTimezones(listIds?: number[]): Promise<Map<number, string>> {
    const rows = await this.db.query<{ key: string; payload: string }>(
      `SELECT key, argMax(payload, (version, arrival)) AS payload FROM catalog
       WHERE kind = 'list' AND ({all:Bool} OR key IN {keys:Array(String)})
       GROUP BY key`,
      { all: listIds === undefined, keys: (listIds ?? []).map(String) },
    );
    const zones = new Map<number, string>((listIds ?? []).map((id) => [id, this.defaultTimezone]));
    for (const r of rows)
      zones.set(Number(r.key), (JSON.parse(r.payload) as ListRecord).timezone ?? this.defaultTimezone);
    return zones;
  }

  /**
   * Users are read from one table held in memory, loaded once per catalog change: a user id the catalog
   * does not know costs no engine query (a flood of made-up ids stays cheap), and a lookup takes the
   * same time whether or not the user was asked for recently, so failures' timing tells nothing about
   * which users are in use. A user created by this process is seen at once (the write invalidates),
   * one created by another process within CATALOG_POLL_MS, as every catalog read.
   */
  async user(userId: number): Promise<UserRecord | undefined> {
    return (await this.userTable()).get(userId);
  }

  private userTable(): Promise<Map<number, UserRecord>> {
    if (Date.now() >= this.freshUntil) return this.freshen().then(() => this.userTableNow());
    return this.userTableNow();
  }

  private userTableNow(): Promise<Map<number, UserRecord>> {
    if (this.users) return this.users;
    const epoch = this.epoch;
    const p = this.db
      .query<{ payload: string }>(
        `SELECT argMax(payload, (version, arrival)) AS payload FROM catalog WHERE kind = 'user' GROUP BY key`,
      )
      .then((rows) => {
        const table = new Map<number, UserRecord>();
        for (const r of rows) {
          const user = JSON.parse(r.payload) as UserRecord;
          table.set(user.user_id, user);
        }
        return table;
      });
    this.users = p;
    // A failed load is tried again by the next lookup; one that raced a write is not kept.
    const forget = () => {
      if (this.users === p) this.users = undefined;
    };
    p.then(() => epoch !== this.epoch && forget(), forget);
    return p;
  }

  async hasGrant(userId: number, listId: number): Promise<boolean> {
    return (await this.latest<ListAccessRecord>('list_access', `${userId}:${listId}`))?.granted === true;
  }

  /** The list's accounts at their latest version (an account moved to another list is not returned). */
  accounts(listId: number): Promise<SmtpAccountRecord[]> {
    return this.cached(`accounts|${listId}`, () =>
      this.latestOfList<SmtpAccountRecord>('smtp_account', listId),
    );
  }

  async template(accountId: string, templateId: string): Promise<StoredTemplate | undefined> {
    return this.cached(`template|${accountId}/${templateId}`, async () => {
      const [row] = await this.db.query<{ payload: string; version: number; arrival: number }>(
        `SELECT payload, version, arrival FROM catalog
         WHERE kind = 'template' AND key = {key:String}
         ORDER BY version DESC, arrival DESC LIMIT 1`,
        { key: `${accountId}/${templateId}` },
        { output_format_json_quote_64bit_integers: 0 },
      );
      if (!row) return undefined;
      return {
        ...(JSON.parse(row.payload) as TemplateRecord),
        versionToken: `${row.version}.${row.arrival}`,
      };
    });
  }

  private latest<T>(kind: string, key: string): Promise<T | undefined> {
    return this.cached(`${kind}|${key}`, async () => {
      const [row] = await this.db.query<{ payload: string }>(
        `SELECT payload FROM catalog WHERE kind = {kind:String} AND key = {key:String}
         ORDER BY version DESC, arrival DESC LIMIT 1`,
        { kind, key },
      );
      return row ? (JSON.parse(row.payload) as T) : undefined;
    });
  }

  /**
   * Delete catalog rows whose stored record is exactly one of `payloads` (every version of them): the
   * removal of the demo tenant (docs/records.md "The demo tenant"). Visible to every read once it returns.
   */
  async removeExact(payloads: string[]): Promise<void> {
    if (payloads.length === 0) return;
    try {
      await this.db.command(
        'DELETE FROM catalog WHERE payload IN {payloads:Array(String)}',
        { payloads },
        { lightweight_deletes_sync: '2' },
      );
    } finally {
      this.invalidate();
    }
  }

  private invalidate(): void {
    this.epoch++;
    this.cache.clear();
    this.users = undefined;
  }

  /**
   * Concurrent readers of one key share a lookup; a failed or outdated lookup is not kept. Served only
   * while what is held is fresh (see `startPolling`).
   */
  private cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (Date.now() >= this.freshUntil) return this.freshen().then(() => this.cachedNow(key, load));
    return this.cachedNow(key, load);
  }

  private cachedNow<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.cache.get(key) as Promise<T> | undefined;
    if (hit) return hit;
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    const epoch = this.epoch;
    const p = load();
    this.cache.set(key, p);
    const forget = () => {
      if (this.cache.get(key) === p) this.cache.delete(key);
    };
    p.then(() => epoch !== this.epoch && forget(), forget);
    return p;
  }

  /**
   * list.all: the lists the user may read — an active (latest) grant and a list record — by list id.
   * Grants are keyed `user:list`, so the user's grants are one key range.
   */
  grantedLists(userId: number): Promise<ListInfo[]> {
    return this.cached(`granted|${userId}`, async () => {
      const rows = await this.db.query<{ payload: string }>(
        `WITH grants AS (
           SELECT list_id, argMax(payload, (version, arrival)) AS grant
           FROM catalog WHERE kind = 'list_access' AND startsWith(key, {prefix:String})
           GROUP BY list_id
         )
         SELECT argMax(payload, (version, arrival)) AS payload
         FROM catalog
         WHERE kind = 'list'
           AND key IN (SELECT toString(list_id) FROM grants WHERE JSONExtractBool(grant, 'granted'))
         GROUP BY key`,
        { prefix: `${userId}:` },
      );
      return rows
        .map((r) => JSON.parse(r.payload) as ListRecord)
        .map((r) => ({ ...r, timezone: r.timezone ?? this.defaultTimezone }))
        .sort((a, b) => a.list_id - b.list_id);
    });
  }

  /** The list's workflows at their latest version (one moved to another list is not returned), by id. */
  workflows(listId: number): Promise<WorkflowRecord[]> {
    return this.cached(`workflows|${listId}`, async () =>
      (await this.latestOfList<WorkflowRecord>('workflow', listId)).sort(
        (a, b) => a.workflow_id - b.workflow_id,
      ),
    );
  }

  /** The latest version of every template of these accounts (deleted ones included: the caller decides). */
  async templatesOf(accountIds: string[]): Promise<TemplateRecord[]> {
    if (accountIds.length === 0) return [];
    return this.cached(`templates|${accountIds.join('\n')}`, () =>
      // Template keys are `account_id/template_id`.
      this.latestOfKind<TemplateRecord>('template', "splitByChar('/', key)[1] IN {accounts:Array(String)}", {
        accounts: accountIds,
      }),
    );
  }

  /**
   * The latest version of every entity of `kind` whose key the SQL condition `keys` selects (with its
   * own `params`), in one statement: the one query behind accounts, workflows and templates.
   */
  private async latestOfKind<T>(kind: CatalogRecord['type'], keys: string, params: Params): Promise<T[]> {
    const rows = await this.db.query<{ payload: string }>(
      `SELECT payload FROM catalog
       WHERE kind = {kind:String} AND ${keys}
       ORDER BY key, version DESC, arrival DESC
       LIMIT 1 BY key`,
      { ...params, kind },
    );
    return rows.map((r) => JSON.parse(r.payload) as T);
  }

  /**
   * The entities of `kind` of a list at their latest version: every key ever written for the list, kept
   * only when its latest version is still of the list (an entity moved to another list is not returned).
   */
  private async latestOfList<T extends { list_id: number }>(
    kind: 'smtp_account' | 'workflow',
    listId: number,
  ): Promise<T[]> {
    const latest = await this.latestOfKind<T>(
      kind,
      'key IN (SELECT key FROM catalog WHERE kind = {kind:String} AND list_id = {list:UInt64})',
      { list: listId },
    );
    return latest.filter((r) => r.list_id === listId);
  }
}
