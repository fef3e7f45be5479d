/**
 * What the OpenAPI document must describe (docs/api.md), shared by the document's own test and the /docs
 * page's browser test so that both check one list.
 */

/** Every operation under /api/1.2/rest/{user_id}/{api_key}/. */
export const REST_OPERATIONS = [
  'automation.stats',
  'automation.statsTotals',
  'automation.statsByWorkflow',
  'transactional.templateRender',
  'transactional.templateVariables',
  'list.all',
  'automation.workflows',
  'transactional.templates',
] as const;

/** automation.stats's own parameters, in order (after the path's user_id and api_key). */
export const STATS_PARAMETERS = [
  'list_id',
  'workflow_ids',
  'trigger_id',
  'start_date',
  'stop_date',
  'days',
  'month',
] as const;
