/**
 * Each operation's parameters in the order of its parameter table (docs/api.md "Clients' encodings"): the PHP client
 * sends them by position (`__0__`, `__1__`, …) and XML-RPC callers as positional params, so this
 * order is part of the API. `required` params keep their own rules for "absent" (407); every other
 * param is optional, and the values PHP treats as false mean "not given" for it.
 */
export interface ParamSpec {
  name: string;
  required?: true;
}

const STATS_PARAMS: readonly ParamSpec[] = [
  { name: 'list_id', required: true },
  { name: 'workflow_ids' },
  { name: 'trigger_id' },
  { name: 'start_date' },
  { name: 'stop_date' },
  { name: 'days' },
  { name: 'month' },
];

export const SIGNATURES: Readonly<Record<string, readonly ParamSpec[]>> = {
  'automation.stats': STATS_PARAMS,
  'transactional.templateRender': [
    { name: 'list_id', required: true },
    { name: 'account_id' },
    { name: 'template_id', required: true },
    { name: 'template_engine' },
    { name: 'params' },
  ],
  'list.all': [],
  // Our own read-only catalog operations (query-api/catalog-ops.ts), for the dashboard.
  'automation.workflows': [{ name: 'list_id', required: true }],
  'transactional.templates': [{ name: 'list_id', required: true }],
  // Our own: the period's exact money for the dashboard (query-api/stats/totals.ts), automation.stats's params.
  'automation.statsTotals': STATS_PARAMS,
  // Our own: the fields a template reads, for the preview (query-api/render/variables.ts).
  'transactional.templateVariables': [
    { name: 'list_id', required: true },
    { name: 'account_id' },
    { name: 'template_id', required: true },
  ],
};

/** An operation without a table takes no positional params. */
export const signatureOf = (operation: string): readonly ParamSpec[] =>
  Object.hasOwn(SIGNATURES, operation) ? SIGNATURES[operation]! : [];
