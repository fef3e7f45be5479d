import type { Db } from './client.js';

/**
 * The marketer's stored choices (migration 8): per-list alert thresholds, share links and report
 * schedules, each an upsert whose newest version wins, and the per-period claims that make a report
 * sent once (docs/dashboard.md "Share links", "Reports", "Alerts").
 */

export interface ShareLink {
  id: string;
  token_sha256: string;
  list_id: number;
  workflow_ids: number[];
  created_at: string;
  /** UTC 'YYYY-MM-DD HH:MM:SS.mmm', or null: never expires. */
  expires_at: string | null;
  revoked: boolean;
}

export interface ReportSchedule {
  id: string;
  list_id: number;
  recipients: string[];
  every: 'monday' | 'month';
  workflow_ids: number[];
  created_at: string;
}

/** A DateTime64(3) as ClickHouse writes it in text: 'YYYY-MM-DD HH:MM:SS.mmm' (UTC). */
export const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** Newest version per key, without FINAL's cost on a tiny table: argMax over the version. */
const SHARE_SELECT = `
  SELECT id, argMax(token_sha256, version) AS token_sha256, argMax(list_id, version) AS list_id,
    argMax(workflow_ids, version) AS workflow_ids, toString(argMax(created_at, version)) AS created_at,
    toString(argMax(expires_at, version)) AS expires_at, argMax(revoked, version) AS revoked
  FROM share_links`;

const SCHEDULE_SELECT = `
  SELECT id, argMax(list_id, version) AS list_id, argMax(recipients, version) AS recipients,
    argMax(every, version) AS every, argMax(workflow_ids, version) AS workflow_ids,
    toString(argMax(created_at, version)) AS created_at, argMax(removed, version) AS removed
  FROM report_schedules`;

type Row<T> = Omit<T, 'revoked' | 'recipients'> & {
  revoked?: number;
  removed?: number;
  recipients?: string;
  list_id: number | string;
  workflow_ids: (number | string)[];
};

const toShare = (r: Row<ShareLink>): ShareLink => ({
  ...r,
  list_id: Number(r.list_id),
  workflow_ids: r.workflow_ids.map(Number),
  expires_at: r.expires_at === null || r.expires_at === '\\N' || r.expires_at === '' ? null : r.expires_at,
  revoked: Number(r.revoked) === 1,
});

const toSchedule = (r: Row<ReportSchedule>): ReportSchedule => ({
  id: r.id,
  list_id: Number(r.list_id),
  recipients: (r.recipients ?? '').split(',').filter((s) => s !== ''),
  every: r.every,
  workflow_ids: r.workflow_ids.map(Number),
  created_at: r.created_at,
});

export class MarketerStore {
  constructor(private readonly db: Db) {}

  /** The list's stored alert thresholds (JSON), or undefined: the defaults. */
  async alertSettings(listId: number): Promise<string | undefined> {
    const [row] = await this.db.query<{ settings: string }>(
      `SELECT argMax(settings, version) AS settings FROM alert_settings WHERE list_id = {list:UInt64}
       GROUP BY list_id`,
      { list: listId },
    );
    return row?.settings;
  }

  async setAlertSettings(listId: number, settings: string): Promise<void> {
    await this.db.insert(
      'alert_settings',
      ['list_id', 'settings', 'version'],
      [[listId, settings, Date.now()]],
    );
  }

  async addShare(link: ShareLink): Promise<void> {
    await this.writeShare(link, Date.now());
  }

  private async writeShare(link: ShareLink, version: number): Promise<void> {
    await this.db.insert(
      'share_links',
      ['id', 'token_sha256', 'list_id', 'workflow_ids', 'created_at', 'expires_at', 'revoked', 'version'],
      [
        [
          link.id,
          link.token_sha256,
          link.list_id,
          JSON.stringify(link.workflow_ids),
          link.created_at,
          link.expires_at,
          link.revoked ? 1 : 0,
          version,
        ],
      ],
    );
  }

  async shares(): Promise<ShareLink[]> {
    const rows = await this.db.query<Row<ShareLink>>(`${SHARE_SELECT} GROUP BY id ORDER BY created_at, id`);
    return rows.map(toShare);
  }

  async shareByDigest(digest: string): Promise<ShareLink | undefined> {
    const rows = await this.db.query<Row<ShareLink>>(
      `${SHARE_SELECT} WHERE id IN (SELECT id FROM share_links WHERE token_sha256 = {digest:String}) GROUP BY id`,
      { digest },
    );
    return rows.map(toShare).find((s) => s.token_sha256 === digest);
  }

  /** Revokes a link: true when it existed (and is now revoked). */
  async revokeShare(id: string): Promise<boolean> {
    const rows = await this.db.query<Row<ShareLink>>(`${SHARE_SELECT} WHERE id = {id:String} GROUP BY id`, {
      id,
    });
    const link = rows.map(toShare)[0];
    if (!link) return false;
    await this.writeShare({ ...link, revoked: true }, Date.now() + 1);
    return true;
  }

  async addSchedule(s: ReportSchedule): Promise<void> {
    await this.writeSchedule(s, false, Date.now());
  }

  private async writeSchedule(s: ReportSchedule, removed: boolean, version: number): Promise<void> {
    await this.db.insert(
      'report_schedules',
      ['id', 'list_id', 'recipients', 'every', 'workflow_ids', 'created_at', 'removed', 'version'],
      [
        [
          s.id,
          s.list_id,
          s.recipients.join(','),
          s.every,
          JSON.stringify(s.workflow_ids),
          s.created_at,
          removed ? 1 : 0,
          version,
        ],
      ],
    );
  }

  async schedules(): Promise<ReportSchedule[]> {
    const rows = await this.db.query<Row<ReportSchedule>>(
      `${SCHEDULE_SELECT} GROUP BY id HAVING removed = 0 ORDER BY created_at, id`,
    );
    return rows.map(toSchedule);
  }

  async removeSchedule(id: string): Promise<boolean> {
    const rows = await this.db.query<Row<ReportSchedule>>(
      `${SCHEDULE_SELECT} WHERE id = {id:String} GROUP BY id HAVING removed = 0`,
      { id },
    );
    const s = rows.map(toSchedule)[0];
    if (!s) return false;
    await this.writeSchedule(s, true, Date.now() + 1);
    return true;
  }

  /** How a report's period stands: sent, or the number of failed attempts so far. */
  async reportState(
    reportId: string,
    period: string,
  ): Promise<{ sent: boolean; attempts: number; claimed: number }> {
    const rows = await this.db.query<{ state: string; n: number | string }>(
      `SELECT state, count() AS n FROM report_sends WHERE report_id = {id:String} AND period = {period:String}
       GROUP BY state`,
      { id: reportId, period },
    );
    const n = (s: string) => Number(rows.find((r) => r.state === s)?.n ?? 0);
    return { sent: n('sent') > 0, attempts: n('failed'), claimed: n('claim') };
  }

  /**
   * Claims attempt `attempt` of a report's period for `owner`: every process inserts the same
   * deduplication token, so one claim row exists; true when it is this owner's.
   */
  async claimReport(reportId: string, period: string, attempt: number, owner: string): Promise<boolean> {
    const state = `claim`;
    await this.db.insert(
      'report_sends',
      ['report_id', 'period', 'owner', 'state'],
      [[reportId, period, owner, state]],
      `report:${reportId}:${period}:${attempt}`,
    );
    const rows = await this.db.query<{ owner: string }>(
      `SELECT owner FROM report_sends WHERE report_id = {id:String} AND period = {period:String} AND state = 'claim'
       ORDER BY at, owner`,
      { id: reportId, period },
    );
    return rows[attempt]?.owner === owner;
  }

  async markReport(reportId: string, period: string, owner: string, state: 'sent' | 'failed'): Promise<void> {
    await this.db.insert(
      'report_sends',
      ['report_id', 'period', 'owner', 'state'],
      [[reportId, period, owner, state]],
    );
  }
}
