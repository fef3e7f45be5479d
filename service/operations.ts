import type { Operation } from '../query-api/api12/operation.js';
import { catalogOperations } from '../query-api/catalog-ops.js';
import { listAll } from '../query-api/lists/handler.js';
import { transactionalTemplateRender } from '../query-api/render/handler.js';
import { transactionalTemplateVariables } from '../query-api/render/variables.js';
import type { RenderPool } from '../query-api/render/pool.js';
import type { StatsCache } from '../query-api/stats/cache.js';
import type { DayRows } from '../query-api/stats/day-rows.js';
import type { CurrentGenerations } from '../shared/clickhouse/generations.js';
import { automationStats } from '../query-api/stats/handler.js';
import { automationStatsTotals } from '../query-api/stats/totals.js';
import { automationStatsByWorkflow } from '../query-api/stats/by-workflow.js';
import { shareCreate } from '../query-api/share/create.js';
import type { ShareLinks } from '../query-api/share/links.js';
import type { AlertSettingsSource } from '../query-api/stats/totals.js';
import type { Catalog } from '../shared/catalog/catalog.js';
import type { Db } from '../shared/clickhouse/client.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/log.js';

export interface OperationDeps {
  config: Config;
  db: Db;
  catalog: Catalog;
  statsCache: StatsCache;
  /** Embedded: each list's current dating generation and its day rows held in memory (stats reads). */
  generations?: CurrentGenerations;
  dayRows?: DayRows;
  renderer: RenderPool;
  log: Logger;
  /** Share links (share.create) and the lists' alert thresholds (automation.statsTotals). */
  marketer?: { links: ShareLinks; alertSettings: AlertSettingsSource };
}

/** The API 1.2 operations by name, each bound to what it reads. */
export function apiOperations(deps: OperationDeps): Record<string, Operation> {
  const { config, db, catalog, statsCache, renderer, log } = deps;
  const statsDeps = {
    db,
    generations: deps.generations,
    dayRows: deps.dayRows,
    catalog,
    defaultTimezone: config.DEFAULT_TIMEZONE,
    maxPeriodDays: config.MAX_PERIOD_DAYS,
    cache: statsCache,
    alertSettings: deps.marketer?.alertSettings,
  };
  const links = deps.marketer?.links;
  const renderDeps = { catalog, renderer, log };
  return {
    'automation.stats': (caller, params) => automationStats(statsDeps, caller, params),
    'automation.statsTotals': (caller, params) => automationStatsTotals(statsDeps, caller, params),
    'automation.statsByWorkflow': (caller, params) => automationStatsByWorkflow(statsDeps, caller, params),
    'transactional.templateRender': (caller, params) =>
      transactionalTemplateRender(renderDeps, caller, params),
    'transactional.templateVariables': (caller, params) =>
      transactionalTemplateVariables(renderDeps, caller, params),
    'list.all': (caller, params) => listAll({ catalog }, caller, params),
    ...catalogOperations({ catalog }),
    ...(links ? { 'share.create': (caller, params) => shareCreate({ catalog, links }, caller, params) } : {}),
  } satisfies Record<string, Operation>;
}
