import { adminFetch, adminPost } from './admin-http.js';
import { UsageError } from './commands.js';

/**
 * The marketer's admin commands (docs/dashboard.md "Share links", "Reports", "Alerts"): share links,
 * scheduled e-mail reports and per-list alert thresholds, through the running service's /admin endpoints.
 */
export const MARKETER_HELP = `  share add --list N [--workflows 1,2] [--expires 30d]
                                     a read-only link to the list's dashboard (no api key; the token is
                                     shown once, stored only as its SHA-256); expires after N days (default 30)
  share list | share revoke ID       the links (never a token), or stop one at once
  report add --list N --to a@b[,c@d] --every monday|month [--workflows 1,2]
                                     an e-mail report of the last week (sent on Mondays) or month (sent
                                     on the 1st), over SMTP_URL, once per period
  report list | report remove ID     the scheduled reports, or stop one
  alerts set --list N [--spam 0.1] [--bounce 2] [--unsubscribe-spike 50] [--open-rate-drop 20]
             [--revenue-drop 30] [--stopped-days 3]
                                     the list's alert thresholds (percent; days); unset ones keep their
                                     defaults (docs/dashboard.md "Alerts")
  alerts show --list N               the thresholds in force`;

export const MARKETER_OPTIONS = {
  workflows: { type: 'string' },
  expires: { type: 'string' },
  to: { type: 'string' },
  every: { type: 'string' },
  spam: { type: 'string' },
  bounce: { type: 'string' },
  'unsubscribe-spike': { type: 'string' },
  'open-rate-drop': { type: 'string' },
  'revenue-drop': { type: 'string' },
  'stopped-days': { type: 'string' },
} as const;

type Values = Partial<Record<string, string | boolean | undefined>>;

const positive = (name: string, v: unknown): number => {
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a positive integer`);
  return n;
};

const idList = (v: unknown): number[] | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\s*\d+(\s*,\s*\d+)*\s*$/.test(v))
    throw new UsageError('--workflows must be workflow ids separated by commas (e.g. 1,2)');
  return v.split(',').map((s) => positive('workflows', s.trim()));
};

/** `30d` or `30`: days. */
const days = (v: unknown): number | undefined => {
  if (v === undefined) return undefined;
  const m = typeof v === 'string' ? /^(\d+)d?$/.exec(v.trim()) : null;
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 3650)
    throw new UsageError('--expires must be a number of days from 1 to 3650 (e.g. 30d)');
  return Number(m[1]);
};

const ALERT_FLAGS: Record<string, string> = {
  spam: 'spam',
  bounce: 'bounce',
  'unsubscribe-spike': 'unsubscribe_spike',
  'open-rate-drop': 'open_rate_drop',
  'revenue-drop': 'revenue_drop',
  'stopped-days': 'stopped_days',
};

const base = (url: string) => url.replace(/\/$/, '');

/** Runs a marketer command and gives its exit status, or undefined when the command is not one. */
export async function runMarketer(
  positionals: string[],
  values: Values,
  url: string,
): Promise<number | undefined> {
  const [group, action, arg] = positionals;
  if (!['share', 'report', 'alerts'].includes(group ?? '')) return undefined;
  const command = `${group} ${action ?? ''}`.trim();
  switch (command) {
    case 'share add': {
      const link = await adminPost<{ id: string; path: string; expires_at: string }>(url, '/share', {
        list_id: positive('list', values.list),
        workflow_ids: idList(values.workflows),
        expires_days: days(values.expires),
      });
      console.log(`${base(url)}${link.path}`);
      console.error(
        `share link ${link.id} saved; expires ${link.expires_at} (shown once: admin share revoke ${link.id} stops it)`,
      );
      return 0;
    }
    case 'share list': {
      const links = (await (await adminFetch(url, '/share')).json()) as {
        id: string;
        list_id: number;
        workflow_ids: number[];
        created_at: string;
        expires_at: string | null;
        revoked: boolean;
      }[];
      console.log('id        list  workflows  created                   expires                   state');
      for (const l of links) {
        const state = l.revoked
          ? 'revoked'
          : l.expires_at && Date.parse(l.expires_at) <= Date.now()
            ? 'expired'
            : 'active';
        console.log(
          `${l.id.padEnd(9)} ${String(l.list_id).padEnd(5)} ${(l.workflow_ids.join(',') || 'all').padEnd(10)} ` +
            `${l.created_at.padEnd(25)} ${(l.expires_at ?? 'never').padEnd(25)} ${state}`,
        );
      }
      return 0;
    }
    case 'share revoke': {
      if (!arg) throw new UsageError('share revoke ID (see share list)');
      await adminPost(url, '/share/revoke', { id: arg });
      console.log(`share link ${arg} revoked.`);
      return 0;
    }
    case 'report add': {
      const every = values.every;
      if (every !== 'monday' && every !== 'month') throw new UsageError('--every must be monday or month');
      if (typeof values.to !== 'string' || values.to.trim() === '')
        throw new UsageError('--to must name an e-mail address');
      const r = await adminPost<{ id: string }>(url, '/report', {
        list_id: positive('list', values.list),
        to: values.to.split(',').map((s) => s.trim()),
        every,
        workflow_ids: idList(values.workflows),
      });
      console.log(`report ${r.id} saved: list ${String(values.list)}, every ${every}.`);
      return 0;
    }
    case 'report list': {
      const reports = (await (await adminFetch(url, '/report')).json()) as {
        id: string;
        list_id: number;
        to: string[];
        every: string;
        workflow_ids: number[];
      }[];
      console.log('id        list  every   workflows  to');
      for (const r of reports)
        console.log(
          `${r.id.padEnd(9)} ${String(r.list_id).padEnd(5)} ${r.every.padEnd(7)} ${(r.workflow_ids.join(',') || 'all').padEnd(10)} ${r.to.join(', ')}`,
        );
      return 0;
    }
    case 'report remove': {
      if (!arg) throw new UsageError('report remove ID (see report list)');
      await adminPost(url, '/report/remove', { id: arg });
      console.log(`report ${arg} removed.`);
      return 0;
    }
    case 'alerts set': {
      const settings: Record<string, number> = {};
      for (const [flag, key] of Object.entries(ALERT_FLAGS)) {
        const v = values[flag];
        if (v === undefined) continue;
        const n = Number(v);
        if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n) || n < 0)
          throw new UsageError(`--${flag} must be a number ≥ 0`);
        settings[key] = n;
      }
      if (Object.keys(settings).length === 0)
        throw new UsageError(
          `alerts set: give at least one of ${Object.keys(ALERT_FLAGS)
            .map((f) => `--${f}`)
            .join(', ')}`,
        );
      const r = await adminPost<{ thresholds: Record<string, number> }>(url, '/alerts', {
        list_id: positive('list', values.list),
        settings,
      });
      console.log(`list ${String(values.list)} alert thresholds: ${JSON.stringify(r.thresholds)}`);
      return 0;
    }
    case 'alerts show': {
      const r = (await (
        await adminFetch(url, `/alerts?list_id=${positive('list', values.list)}`)
      ).json()) as {
        thresholds: Record<string, number>;
      };
      console.log(JSON.stringify(r.thresholds));
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(' ')}" (see --help)`);
  }
}
