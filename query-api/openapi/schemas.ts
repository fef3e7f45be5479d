import { z } from 'zod';
import type { RenderResult } from '../render/engine.js';
import type { TemplateVariables } from '../render/variables.js';
import type { StatsRecord, StatsTotals, WorkflowTotals } from '../stats/record.js';
import { AccountEntry, WorkflowEntry } from '../catalog-ops.js';
import { ListEntry } from '../lists/handler.js';

/**
 * zod schemas of what the API 1.2 operations take and answer, for the OpenAPI document (docs/api.md).
 * Parameters are validated by the hand-written functions of api12/params.ts (they coerce the many
 * shapes PHP clients send and order the errors as docs/api.md "Errors" says); these schemas describe the same
 * documented shapes. Answers are checked against the types the handlers return at compile time (below)
 * and against real answers in test/integration/openapi.test.ts.
 */

const intId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** Ids arrive as JSON numbers or numeric strings (PHP's http_build_query sends strings). */
const id = z
  .union([intId, z.string().regex(/^\s*\d+\s*$/)])
  .describe('A positive integer (up to 2^53 − 1), as a number or a numeric string');
const opaque = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/)
  .describe('1–128 characters of [A-Za-z0-9_.:-]');
/** PHP's false: boolean false, "false", "", "0", 0, null, an empty array or object mean "not given". */
const phpFalse = z
  .union([z.literal(false), z.literal('false'), z.literal(''), z.literal('0'), z.literal(0), z.null()])
  .describe("PHP's false: the parameter counts as not given");
const date = z
  .union([
    z.string().describe('YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, or ISO 8601 with T and an offset'),
    z
      .object({ date: z.string(), timezone_type: z.number().int(), timezone: z.string() })
      .describe("PHP's JSON encoding of a DateTime object"),
  ])
  .describe('Only the calendar date as written counts');

export const statsParams = z
  .object({
    list_id: id,
    workflow_ids: z
      .union([
        z.array(id).max(1000),
        z.string().describe('"1,2, 3" or a JSON-encoded array "[1,2]"'),
        phpFalse,
      ])
      .optional()
      .describe('At most 1,000 workflow ids; absent or empty means all workflows'),
    trigger_id: z.union([id, phpFalse]).optional(),
    start_date: z.union([date, phpFalse]).optional().describe('First date of the period (list time zone)'),
    stop_date: z
      .union([date, phpFalse])
      .optional()
      .describe('Last date of the period, inclusive; default today in the list time zone'),
    days: z
      .union([z.number().int().min(1), z.string().regex(/^\s*\d+\s*$/), phpFalse])
      .optional()
      .describe('The last N days including today, 1..MAX_PERIOD_DAYS (default 731)'),
    month: z
      .union([
        z.number().int().min(1).max(12),
        z.string().regex(/^\s*(\d{1,2}|\d{4}-(0[1-9]|1[0-2]))\s*$/),
        phpFalse,
      ])
      .optional()
      .describe('1..12 (the most recent such month that has begun) or YYYY-MM'),
  })
  .describe(
    'automation.stats parameters (by name; the PHP client may send them as __0__…__6__ in this order)',
  );
export const statsTotalsParams = statsParams.describe(
  'automation.statsTotals parameters: those of automation.stats (by name, or __0__…__6__ in this order)',
);

export const renderParams = z
  .object({
    list_id: id,
    account_id: z.union([opaque, phpFalse]).optional().describe("Default: the list's default SMTP account"),
    template_id: opaque,
    template_engine: z.union([z.literal('handlebars'), phpFalse]).optional(),
    params: z
      .union([
        z.record(z.string(), z.unknown()),
        z.string().describe('A JSON-encoded object'),
        z.array(z.never()).max(0),
        phpFalse,
      ])
      .optional()
      .describe('Values for the template (at most 20 levels deep)'),
  })
  .describe('transactional.templateRender parameters (by name, or __0__…__4__ in this order)');

export const templateVariablesParams = z
  .object({
    list_id: id,
    account_id: z.union([opaque, phpFalse]).optional().describe("Default: the list's default SMTP account"),
    template_id: opaque,
  })
  .describe('transactional.templateVariables parameters (by name, or __0__…__2__ in this order)');

export const templateVariablesAnswer = z
  .object({
    variables: z
      .array(z.string())
      .describe(
        'Dotted paths from the root of the params (e.g. "order.id"), in the order the template first reads ' +
          'them; fields of {{#each}} items left out',
      ),
  })
  .strict();

export const listAllParams = z.object({}).describe('list.all takes no parameters');

const count = z.number().int().min(0);
const decimal2 = z.number().min(0).describe('Rounded half away from zero to 2 decimals');
const formatted = z
  .string()
  .regex(/^\d{1,3}(\.\d{3})*,\d{2}$/)
  .describe('Two decimals, decimal comma, "." between thousands: "1.234,50"');

export const statsRecord = z
  .object({
    sends_unique: count,
    sends_total: count,
    opens_unique: count,
    opens_total: count,
    clicks_unique: count,
    clicks_total: count,
    purchase_count: count,
    purchases_value_ron: decimal2,
    purchases_value_eur: decimal2,
    bounce_total: count,
    unsub_total: count,
    spam_total: count,
    events_ok: count,
    events_failed: count,
    conditions_ok: count,
    conditions_failed: count,
    actions_ok: count,
    actions_failed: count,
    date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    currency: z.string(),
    formatted_revenue_ron: formatted,
    formatted_revenue_eur: formatted,
    purchases_value_aov_ron: decimal2,
    formatted_value_aov_ron: formatted,
    purchases_value_aov_eur: decimal2,
    formatted_value_aov_eur: formatted,
    opens_unique_percent: decimal2,
    clicks_unique_percent: decimal2,
    list_id: z.string().regex(/^\d+$/),
  })
  .strict()
  .describe('One date of automation.stats');

export const statsAnswer = z
  .array(statsRecord)
  .describe('One record per date with at least one matching record, ascending by date');

export const alert = z
  .object({
    kind: z.enum([
      'spam',
      'bounce',
      'unsubscribe_spike',
      'open_rate_drop',
      'revenue_drop',
      'workflow_stopped',
    ]),
    message: z.string(),
    value: z.number().describe('The measured value (percent; 0 for workflow_stopped)'),
    threshold: z.number().describe('The threshold it passed (percent; days for workflow_stopped)'),
    workflow_id: z.string().regex(/^\d+$/).optional(),
  })
  .strict();

export const statsTotals = z
  .object({
    list_id: z.string().regex(/^\d+$/),
    currency: z.string(),
    start_date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .describe('First date of the resolved period'),
    stop_date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .describe('Last date of the resolved period'),
    days: count.describe('Dates with at least one matching record (the automation.stats answer’s length)'),
    purchase_count: count,
    purchases_value_ron: decimal2.describe('The exact sum over the period, rounded once'),
    purchases_value_eur: decimal2.describe('The exact sum over the period, rounded once'),
    formatted_revenue_ron: formatted,
    formatted_revenue_eur: formatted,
    purchases_value_aov_ron: decimal2.describe(
      'Exact revenue sum ÷ purchase_count, rounded once; 0 without purchases',
    ),
    formatted_value_aov_ron: formatted,
    purchases_value_aov_eur: decimal2.describe(
      'Exact revenue sum ÷ purchase_count, rounded once; 0 without purchases',
    ),
    formatted_value_aov_eur: formatted,
    recipients: count.describe('Distinct subscribers sent to over the whole period (not per day)'),
    openers: count.describe('Distinct subscribers who opened over the period'),
    clickers: count.describe('Distinct subscribers who clicked over the period'),
    buyers: count.describe('Distinct subscribers who purchased over the period'),
    revenue_per_recipient_ron: decimal2.describe(
      'Exact revenue ÷ recipients, rounded once; 0 without recipients',
    ),
    revenue_per_recipient_eur: decimal2.describe(
      'Exact revenue ÷ recipients, rounded once; 0 without recipients',
    ),
    conversion_rate_percent: decimal2.describe('100 × buyers ÷ recipients, 2 decimals; 0 without recipients'),
    opens_unique_percent: decimal2.describe('100 × openers ÷ recipients, 2 decimals; 0 without recipients'),
    clicks_unique_percent: decimal2.describe('100 × clickers ÷ recipients, 2 decimals; 0 without recipients'),
    alerts: z.array(alert).describe('What needs a look in the period (docs/dashboard.md, "Alerts")'),
  })
  .strict()
  .describe(
    "The period's money, summed exactly over its days and rounded once, its distinct people and alerts",
  );

export const workflowTotals = z
  .object({
    workflow_id: z.string().regex(/^\d+$/),
    workflow_name: z.string().nullable().describe('From the catalog’s workflow records; null when none'),
    sends_total: count,
    opens_total: count,
    clicks_total: count,
    recipients: count.describe('Distinct subscribers sent to over the period'),
    openers: count,
    clickers: count,
    buyers: count,
    purchase_count: count,
    purchases_value_ron: decimal2.describe('The exact sum over the period, rounded once'),
    purchases_value_eur: decimal2.describe('The exact sum over the period, rounded once'),
    opens_unique_percent: decimal2.describe('100 × openers ÷ recipients, 2 decimals'),
    clicks_unique_percent: decimal2.describe('100 × clickers ÷ recipients, 2 decimals'),
  })
  .strict();

export const statsByWorkflow = z
  .array(workflowTotals)
  .describe('Per workflow with activity in the period, its figures over the whole period, ascending by id');
export const statsByWorkflowParams = statsParams.describe(
  'automation.statsByWorkflow parameters: those of automation.stats (by name, or __0__…__6__ in this order)',
);

export const renderResult = z
  .object({
    content: z.string(),
    engine: z.literal('handlebars'),
    type: z.enum(['html', 'text']),
    props: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe("The template's stored properties with every string rendered, or null"),
  })
  .strict();

export const listAllItem = ListEntry.strict();
export const listAllAnswer = z.array(listAllItem).describe('The lists the caller may read');

export const listIdParams = z.object({ list_id: id }).describe('list_id (or __0__)');
export const workflowsAnswer = z
  .array(WorkflowEntry)
  .describe("The list's workflows (catalog `workflow` records), ascending by id");
export const templatesAnswer = z
  .array(AccountEntry)
  .describe("The list's SMTP accounts and their templates (deleted ones left out)");

export const errorObject = z
  .object({ err: z.literal(true), message: z.string(), code: z.number().int() })
  .strict()
  .describe('Every failure (docs/api.md, "Errors")');

export const ingestAnswer = z
  .object({
    accepted: count,
    rejected: z.array(z.object({ line: z.number().int().min(1), reason: z.string() }).strict()),
  })
  .strict();

// The documented answers are exactly what the handlers return: a drift fails `tsc`.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameStats: Same<z.infer<typeof statsRecord>, StatsRecord> = true;
const sameRender: Same<z.infer<typeof renderResult>, RenderResult> = true;
const sameTotals: Same<z.infer<typeof statsTotals>, StatsTotals> = true;
const sameByWorkflow: Same<z.infer<typeof workflowTotals>, WorkflowTotals> = true;
void sameByWorkflow;
void sameStats;
void sameTotals;
const sameVariables: Same<z.infer<typeof templateVariablesAnswer>, TemplateVariables> = true;
void sameVariables;
void sameRender;
