import express, { type Request, type Response } from 'express';
import { parseQuery } from '../api12/intake.js';
import type { JsonAnswer } from '../api12/json-answer.js';
import { byWorkflowAnswer } from '../stats/by-workflow.js';
import { statsAnswer, statsRequestWith, type StatsRequest } from '../stats/handler.js';
import { totalsAnswer, type TotalsDeps } from '../stats/totals.js';
import type { ShareLink } from '../../shared/clickhouse/marketer-store.js';
import type { ShareLinks } from './links.js';

/**
 * What a share link reaches (docs/dashboard.md "Share links"), under /api/share/<token>/: its list
 * (`lists`, the list.all shape) and the three stats answers of that list (`stats`, `totals`,
 * `by-workflow`: the params, checks and answers of automation.stats, automation.statsTotals and
 * automation.statsByWorkflow, list_id fixed by the link and workflows kept within the link's set when it
 * has one). Nothing else: no other list, no template, no API 1.2 operation. An unknown, revoked or
 * expired token is 403 with one message.
 */
export function shareRouter(deps: { links: ShareLinks; stats: TotalsDeps }): express.Router {
  const router = express.Router();
  const send = (res: Response, answer: JsonAnswer) => {
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.end(answer.bytes);
  };

  /** The request's stats query, its list the link's and its workflows within the link's set. */
  async function request(req: Request, link: ShareLink): Promise<StatsRequest> {
    const query = req.originalUrl.includes('?')
      ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1)
      : '';
    const params = { ...parseQuery(query) };
    delete params.list_id;
    const r = await statsRequestWith(deps.stats, params, link.list_id, async () => {});
    if (link.workflow_ids.length === 0) return r;
    const asked = r.query.workflowIds;
    const workflowIds =
      asked === null ? link.workflow_ids : asked.filter((w) => link.workflow_ids.includes(w));
    return { ...r, query: { ...r.query, workflowIds } };
  }

  const route =
    (answer: (req: StatsRequest) => Promise<JsonAnswer>) => async (req: Request, res: Response) => {
      const link = await deps.links.resolve(String(req.params.token));
      send(res, await answer(await request(req, link)));
    };

  router.get('/:token/lists', async (req, res) => {
    const link = await deps.links.resolve(String(req.params.token));
    const list = await deps.stats.catalog.list(link.list_id);
    res.setHeader('cache-control', 'no-store');
    res.json(
      list
        ? [
            {
              list_id: String(link.list_id),
              list_name: list.name,
              timezone: list.timezone,
              currency: list.currency ?? 'RON',
            },
          ]
        : [],
    );
  });
  router.get(
    '/:token/stats',
    route((r) => statsAnswer(deps.stats, r)),
  );
  router.get(
    '/:token/totals',
    route((r) => totalsAnswer(deps.stats, r)),
  );
  router.get(
    '/:token/by-workflow',
    route((r) => byWorkflowAnswer(deps.stats, r)),
  );
  return router;
}
