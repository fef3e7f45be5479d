/**
 * What /docs shows for each parameter and answer: a description (from docs/api.md "Parameters" and the
 * operations' tables), a schema with one JSON type, and an example. The zod schemas in ./schemas.ts stay
 * the full truth of every accepted shape (bodies use them); a query parameter is shown by its usual
 * form, its other accepted forms named in words, because swagger-ui prints a union as
 * "((integer | string) | (boolean | …))".
 */
import { ApiError } from '../../shared/errors.js';
import {
  accountInactive,
  accountNotFound,
  internalError,
  invalidParam,
  missingParam,
  notAllowed,
  templateNotFetched,
  templateNotRendered,
  tooLarge,
  unknownMethod,
  unsupportedEncoding,
} from '../api12/errors.js';

type JsonSchema = Record<string, unknown>;

export interface ParamDoc {
  description: string;
  schema: JsonSchema;
  /** What /docs's "Try it out" prefills; none for a parameter another prefilled one overrides. */
  example?: unknown;
  /** Array parameters: `workflow_ids=1,2` rather than repeated fields. */
  style?: 'form';
  explode?: false;
}

const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const OPAQUE = { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' };
const NOT_GIVEN = ' A PHP-false value (`false`, `""`, `"0"`, `0`, `null`, …) means not given.';
/**
 * Which period parameter wins (docs/api.md "Period"). days and month have no example, so that /docs's
 * "Try it out" prefills only the dates (a coherent period) and not two parameters the dates override.
 */
const PERIOD_RULE =
  'Period: start_date/stop_date win over month, which wins over days; none of them: the last 30 days.';
const DATE =
  "`YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`, ISO 8601 with `T` and an offset, or (in a body) PHP's JSON " +
  'encoding of a DateTime; only the calendar date as written counts.';

export const PATH_PARAM_DOCS: Record<'user_id' | 'api_key', ParamDoc> = {
  user_id: {
    description: 'The caller: a positive integer (up to 2^53 − 1). The demo tenant is user 1001.',
    schema: ID,
    example: 1001,
  },
  api_key: {
    description:
      "The caller's api key itself, in the path (stored only as its SHA-256 digest; never logged). " +
      "The demo tenant's is `demo-key-0123456789abcdef`.",
    schema: { type: 'string', minLength: 1 },
    example: 'demo-key-0123456789abcdef',
  },
};

/** By parameter name: the same name means the same thing in every operation (docs/api.md). */
export const QUERY_PARAM_DOCS: Record<string, ParamDoc> = {
  list_id: {
    description:
      'The list, a positive integer (a numeric string is taken too). The caller needs an active grant for it.',
    schema: ID,
    example: 1,
  },
  workflow_ids: {
    description:
      'Only these workflows: comma-separated (`1,2, 3`), a JSON-encoded array (`[1,2]`) or ' +
      '`workflow_ids[]=1&workflow_ids[]=2`; at most 1,000. Absent or empty: all workflows of the list.' +
      NOT_GIVEN,
    schema: { type: 'array', items: ID, maxItems: 1000 },
    example: [1, 2],
    style: 'form',
    explode: false,
  },
  trigger_id: {
    description: 'Only records of this trigger, a positive integer.' + NOT_GIVEN,
    schema: ID,
    example: 10,
  },
  start_date: {
    description:
      'First date of the period, in the list time zone: ' +
      DATE +
      ' Without stop_date, the period ends today. ' +
      PERIOD_RULE +
      NOT_GIVEN,
    schema: { type: 'string' },
    example: '2026-11-01',
  },
  stop_date: {
    description:
      'Last date of the period, inclusive: ' +
      DATE +
      ' Without start_date, the period is its last 30 days. ' +
      PERIOD_RULE +
      NOT_GIVEN,
    schema: { type: 'string' },
    example: '2026-11-07',
  },
  days: {
    description:
      'The last N days including today (list time zone), 1..MAX_PERIOD_DAYS (default 731), e.g. `7`. ' +
      PERIOD_RULE +
      NOT_GIVEN,
    schema: { type: 'integer', minimum: 1 },
  },
  month: {
    description:
      'A whole month: `YYYY-MM`, e.g. `2026-10`, or 1..12 for the most recent such month that has begun ' +
      '(`12` asked in November 2026 is December 2025). ' +
      PERIOD_RULE +
      NOT_GIVEN,
    schema: { type: 'string', pattern: '^\\s*(\\d{1,2}|\\d{4}-(0[1-9]|1[0-2]))\\s*$' },
  },
  template_id: {
    description: 'The stored template: 1–128 characters of `[A-Za-z0-9_.:-]`.',
    schema: OPAQUE,
    example: 'welcome-text',
  },
  account_id: {
    description:
      "The list's SMTP account holding the template (same format as template_id). Default: the list's " +
      'account marked is_default, else its only account.' +
      NOT_GIVEN,
    schema: OPAQUE,
    example: 'acc-news',
  },
  template_engine: {
    description: '`handlebars`, the only engine.' + NOT_GIVEN,
    schema: { type: 'string', enum: ['handlebars'] },
    example: 'handlebars',
  },
  params: {
    description:
      'Values for the template: in a query string a JSON-encoded object, or nested fields ' +
      '(`params[name]=Ana`); in a JSON body an object. At most 256 KiB of JSON, 20 levels deep.' +
      NOT_GIVEN,
    schema: { type: 'string', contentMediaType: 'application/json' },
    example: '{"name":"Ana","list":"Demo Newsletter"}',
  },
};

/** A JSON body by name, per operation (docs/api.md's examples, on the demo tenant). */
export const REQUEST_EXAMPLES: Record<string, Record<string, unknown>> = {
  'automation.stats': { list_id: 1, days: 7 },
  'automation.statsTotals': { list_id: 1, days: 7 },
  'automation.statsByWorkflow': { list_id: 1, days: 7 },
  'transactional.templateRender': {
    list_id: 2,
    template_id: 'welcome-text',
    params: { name: 'Ana', list: 'Demo Newsletter' },
  },
  'transactional.templateVariables': { list_id: 2, template_id: 'welcome-text' },
  'list.all': {},
  'automation.workflows': { list_id: 1 },
  'transactional.templates': { list_id: 1 },
};

/** A 200 answer per operation, as the demo tenant answers (shortened to one item). */
export const ANSWER_EXAMPLES: Record<string, unknown> = {
  'automation.stats': [
    {
      sends_unique: 126,
      sends_total: 148,
      opens_unique: 66,
      opens_total: 69,
      clicks_unique: 30,
      clicks_total: 31,
      purchase_count: 6,
      purchases_value_ron: 1761.42,
      purchases_value_eur: 352.28,
      bounce_total: 3,
      unsub_total: 1,
      spam_total: 0,
      events_ok: 138,
      events_failed: 10,
      conditions_ok: 92,
      conditions_failed: 56,
      actions_ok: 147,
      actions_failed: 1,
      date: '2026-11-20',
      currency: 'RON',
      formatted_revenue_ron: '1.761,42',
      formatted_revenue_eur: '352,28',
      purchases_value_aov_ron: 293.57,
      formatted_value_aov_ron: '293,57',
      purchases_value_aov_eur: 58.71,
      formatted_value_aov_eur: '58,71',
      opens_unique_percent: 52.38,
      clicks_unique_percent: 23.81,
      list_id: '1',
    },
  ],
  'automation.statsTotals': {
    list_id: '1',
    currency: 'RON',
    start_date: '2026-11-14',
    stop_date: '2026-11-20',
    days: 7,
    purchase_count: 41,
    purchases_value_ron: 12045.37,
    purchases_value_eur: 2409.07,
    formatted_revenue_ron: '12.045,37',
    formatted_revenue_eur: '2.409,07',
    purchases_value_aov_ron: 293.79,
    formatted_value_aov_ron: '293,79',
    purchases_value_aov_eur: 58.76,
    formatted_value_aov_eur: '58,76',
    recipients: 1712,
    openers: 936,
    clickers: 421,
    buyers: 39,
    revenue_per_recipient_ron: 7.04,
    revenue_per_recipient_eur: 1.41,
    conversion_rate_percent: 2.28,
    opens_unique_percent: 54.67,
    clicks_unique_percent: 24.59,
    alerts: [
      {
        kind: 'bounce',
        message: 'Bounces at 2,06 % of sends (above 2,00 %)',
        value: 2.06,
        threshold: 2,
      },
    ],
  },
  'automation.statsByWorkflow': [
    {
      workflow_id: '1',
      workflow_name: 'Shop flow 1',
      sends_total: 480,
      opens_total: 301,
      clicks_total: 122,
      recipients: 402,
      openers: 219,
      clickers: 98,
      buyers: 9,
      purchase_count: 10,
      purchases_value_ron: 2937.9,
      purchases_value_eur: 587.58,
      opens_unique_percent: 54.48,
      clicks_unique_percent: 24.38,
    },
  ],
  'transactional.templateRender': {
    content: 'Hello Ana, welcome to Demo Newsletter!',
    engine: 'handlebars',
    type: 'text',
    props: null,
  },
  'transactional.templateVariables': { variables: ['name', 'list'] },
  'list.all': [
    { list_id: '1', list_name: 'Demo Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
    { list_id: '2', list_name: 'Demo Newsletter', timezone: 'Europe/London', currency: 'EUR' },
  ],
  'automation.workflows': [
    { workflow_id: 1, name: 'Shop flow 1' },
    { workflow_id: 2, name: 'Shop flow 2' },
  ],
  'transactional.templates': [
    {
      account_id: 'acc-shop',
      active: true,
      is_default: true,
      templates: [{ template_id: 'order-confirmation', content_type: 'html' }],
    },
  ],
};

/** An error answer's example for an API code: the service's own error, as it answers it. */
export function errorExample(code: number): { err: boolean; message: string; code: number } {
  const errors: Record<number, ApiError> = {
    101: notAllowed(1),
    400: new ApiError(400, 400, 'Unreadable body: line 1 is not JSON'),
    401: new ApiError(401, 401, 'Missing or wrong ingest token'),
    404: unknownMethod('automation.stat.json'),
    406: invalidParam('days', 'must be an integer from 1 to 731'),
    407: missingParam('list_id'),
    413: tooLarge(),
    415: unsupportedEncoding('zstd'),
    500: internalError('6df8446e-356b-48b5-9c4a-02e5fa15e5c0'),
    17003: accountNotFound(),
    17004: accountInactive(),
    17006: templateNotFetched(404, 'no template welcome-txt'),
    17007: templateNotRendered('Parse error on line 1'),
  };
  const error = errors[code];
  if (!error) throw new Error(`no example for error code ${code}`);
  return error.toJSON();
}
