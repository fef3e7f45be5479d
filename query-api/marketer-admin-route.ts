import { randomUUID } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import type { Catalog } from '../shared/catalog/catalog.js';
import { chTime, type MarketerStore } from '../shared/clickhouse/marketer-store.js';
import { ApiError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { requireAdminToken } from './admin-route.js';
import { readBody } from './body.js';
import { describeShare, MAX_SHARE_DAYS, type ShareLinks } from './share/links.js';
import { ALERT_SETTINGS, thresholdsOf } from './stats/alerts.js';

/**
 * The marketer's admin endpoints under /admin, behind ADMIN_TOKEN (docs/dashboard.md "Share links",
 * "Reports", "Alerts"): share links, report schedules and per-list alert thresholds. Each action writes
 * one audit line (what, which list), never a token or an address.
 */
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const shareBody = z.object({
  list_id: id,
  workflow_ids: z.array(id).max(1000).optional(),
  expires_days: z.number().int().min(1).max(MAX_SHARE_DAYS).optional(),
});
const byId = z.object({ id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/) });
const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;
const reportBody = z.object({
  list_id: id,
  to: z.array(z.string().regex(EMAIL, 'must be an e-mail address')).min(1).max(50),
  every: z.enum(['monday', 'month']),
  workflow_ids: z.array(id).max(1000).optional(),
});
const alertsBody = z.object({
  list_id: id,
  settings: z.partialRecord(
    z.enum(ALERT_SETTINGS as [string, ...string[]]),
    z.number().min(0).max(1_000_000),
  ),
});

function jsonBody<T>(req: Request, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
  } catch (err) {
    throw new ApiError(400, 400, `Unreadable body: not JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ApiError(
      400,
      400,
      parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    );
  return parsed.data;
}

export function marketerAdminRouter(deps: {
  token: string;
  store: MarketerStore;
  links: ShareLinks;
  catalog: Catalog;
  log: Logger;
}): express.Router {
  const { store, links, catalog, log } = deps;
  const router = express.Router();
  router.use(requireAdminToken(deps.token));
  const body = readBody('64kb', (reason) => new ApiError(400, 400, `Unreadable body: ${reason}`));
  const knownList = async (listId: number) => {
    if (!(await catalog.list(listId)))
      throw new ApiError(404, 404, `list ${listId} is not known to the service (add it first: list add)`);
  };

  router.post('/share', ...body, async (req: Request, res: Response) => {
    const b = jsonBody(req, shareBody);
    await knownList(b.list_id);
    const link = await links.create(b.list_id, b.workflow_ids ?? [], b.expires_days);
    log.info(
      { audit: 'share add', id: link.id, list_id: b.list_id, workflows: b.workflow_ids?.length ?? 0 },
      'admin action',
    );
    res.json(link);
  });
  router.get('/share', async (_req, res) => {
    res.json((await links.list()).map(describeShare));
  });
  router.post('/share/revoke', ...body, async (req: Request, res: Response) => {
    const { id: shareId } = jsonBody(req, byId);
    const revoked = await links.revoke(shareId);
    if (!revoked) throw new ApiError(404, 404, `no share link ${shareId}`);
    log.info({ audit: 'share revoke', id: shareId }, 'admin action');
    res.json({ id: shareId, revoked });
  });

  router.post('/report', ...body, async (req: Request, res: Response) => {
    const b = jsonBody(req, reportBody);
    await knownList(b.list_id);
    const reportId = randomUUID().slice(0, 8);
    await store.addSchedule({
      id: reportId,
      list_id: b.list_id,
      recipients: b.to,
      every: b.every,
      workflow_ids: b.workflow_ids ?? [],
      created_at: chTime(Date.now()),
    });
    log.info(
      { audit: 'report add', id: reportId, list_id: b.list_id, every: b.every, recipients: b.to.length },
      'admin action',
    );
    res.json({
      id: reportId,
      list_id: b.list_id,
      to: b.to,
      every: b.every,
      workflow_ids: b.workflow_ids ?? [],
    });
  });
  router.get('/report', async (_req, res) => {
    res.json(
      (await store.schedules()).map((s) => ({
        id: s.id,
        list_id: s.list_id,
        to: s.recipients,
        every: s.every,
        workflow_ids: s.workflow_ids,
        created_at: `${s.created_at.replace(' ', 'T')}Z`,
      })),
    );
  });
  router.post('/report/remove', ...body, async (req: Request, res: Response) => {
    const { id: reportId } = jsonBody(req, byId);
    if (!(await store.removeSchedule(reportId))) throw new ApiError(404, 404, `no report ${reportId}`);
    log.info({ audit: 'report remove', id: reportId }, 'admin action');
    res.json({ id: reportId, removed: true });
  });

  router.post('/alerts', ...body, async (req: Request, res: Response) => {
    const b = jsonBody(req, alertsBody);
    await knownList(b.list_id);
    const merged = { ...JSON.parse((await store.alertSettings(b.list_id)) ?? '{}'), ...b.settings } as Record<
      string,
      number
    >;
    await store.setAlertSettings(b.list_id, JSON.stringify(merged));
    log.info({ audit: 'alerts set', list_id: b.list_id, settings: Object.keys(b.settings) }, 'admin action');
    res.json({ list_id: b.list_id, thresholds: thresholdsOf(JSON.stringify(merged)) });
  });
  router.get('/alerts', async (req, res) => {
    const listId = id.safeParse(Number(req.query.list_id));
    if (!listId.success) throw new ApiError(400, 400, 'list_id: must be a positive integer');
    res.json({ list_id: listId.data, thresholds: thresholdsOf(await store.alertSettings(listId.data)) });
  });
  return router;
}
