import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { MarketerStore, ReportSchedule } from '../../shared/clickhouse/marketer-store.js';
import type { StatsQuery } from '../../shared/clickhouse/stats-store.js';
import type { Logger } from '../../shared/log.js';
import { byWorkflowAnswer } from '../stats/by-workflow.js';
import { previousQuery, totalsAnswer, type TotalsDeps } from '../stats/totals.js';
import { reportMail } from './content.js';
import { lastEndedPeriod } from './periods.js';

/** What sends a report's e-mail (nodemailer over SMTP_URL; a test may give its own). */
export interface Mailer {
  send(mail: {
    from: string;
    to: string[];
    subject: string;
    text: string;
    html: string;
    attachments: { filename: string; content: string; contentType: string }[];
  }): Promise<void>;
}

export function smtpMailer(url: string): Mailer & { close(): void } {
  const transport = nodemailer.createTransport(url);
  return {
    async send(mail) {
      await transport.sendMail({ ...mail, to: mail.to.join(', ') });
    },
    close: () => transport.close(),
  };
}

/** Attempts of one report's period before it is given up (each failure is logged). */
const MAX_ATTEMPTS = 5;

/**
 * Scheduled e-mail reports (docs/dashboard.md "Reports"), run by the api role (and `all`): every
 * REPORT_CHECK_MS, each schedule's last ended period is sent once. Once across restarts and processes:
 * before sending, a process claims the (report, period, attempt) with an insert whose deduplication
 * token every process shares, so one claim row exists and only its owner sends; the outcome is a row of
 * its own (sent, or failed: then the next attempt may be claimed). A process that dies between its
 * claim and the outcome leaves that period unsent (at most once, never twice).
 */
export class ReportScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  readonly owner = randomUUID();

  constructor(
    private readonly deps: {
      store: MarketerStore;
      stats: TotalsDeps;
      mailer: Mailer;
      from: string;
      log: Logger;
      now?: () => number;
    },
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.tick().catch((err: unknown) => this.deps.log.warn({ err }, 'report check failed'));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One check of every schedule (not re-entrant: a check in progress is awaited); how many were sent. */
  tick(): Promise<number> {
    this.running ??= this.check().finally(() => (this.running = undefined));
    return this.running;
  }

  private async check(): Promise<number> {
    const { store, log } = this.deps;
    let sent = 0;
    for (const schedule of await store.schedules()) {
      try {
        if (await this.sendDue(schedule)) sent++;
      } catch (err) {
        log.warn({ err, report_id: schedule.id, list_id: schedule.list_id }, 'report not sent');
      }
    }
    return sent;
  }

  private async sendDue(s: ReportSchedule): Promise<boolean> {
    const { store, stats, log } = this.deps;
    const list = await stats.catalog.list(s.list_id);
    const period = lastEndedPeriod(
      s.every,
      (this.deps.now ?? Date.now)(),
      list?.timezone ?? stats.defaultTimezone,
    );
    const state = await store.reportState(s.id, period.key);
    // Sent, or a claim without an outcome yet (another process is sending it).
    if (state.sent || state.claimed > state.attempts || state.attempts >= MAX_ATTEMPTS) return false;
    if (!(await store.claimReport(s.id, period.key, state.claimed, this.owner))) return false;
    try {
      const query: StatsQuery = {
        listId: s.list_id,
        workflowIds: s.workflow_ids.length > 0 ? s.workflow_ids : null,
        triggerId: null,
        from: period.from,
        to: period.to,
      };
      const currency = list?.currency ?? 'RON';
      const req = { listId: s.list_id, query, currency };
      const before = { ...req, query: previousQuery(query) };
      const [current, previous, workflows, previousWorkflows] = await Promise.all([
        totalsAnswer(stats, req),
        totalsAnswer(stats, before),
        byWorkflowAnswer(stats, req),
        byWorkflowAnswer(stats, before),
      ]);
      const sends = (rows: { sends_total: number }[]) => rows.reduce((n, w) => n + w.sends_total, 0);
      const mail = reportMail({
        listName: list?.name ?? `List ${s.list_id}`,
        currency,
        current: { ...current.value(), sends_total: sends(workflows.value()) },
        previous: { ...previous.value(), sends_total: sends(previousWorkflows.value()) },
        workflows: workflows.value(),
        alerts: current.value().alerts,
      });
      await this.deps.mailer.send({
        from: this.deps.from,
        to: s.recipients,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        attachments: [
          {
            filename: `report-${s.list_id}-${period.key}.csv`,
            content: mail.csv,
            contentType: 'text/csv; charset=utf-8',
          },
        ],
      });
    } catch (err) {
      await store.markReport(s.id, period.key, this.owner, 'failed');
      throw err;
    }
    await store.markReport(s.id, period.key, this.owner, 'sent');
    log.info(
      { audit: 'report sent', report_id: s.id, list_id: s.list_id, period: period.key },
      'report sent',
    );
    return true;
  }
}
