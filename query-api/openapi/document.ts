import { z } from 'zod';
import { instant, money, opaqueId, positiveId } from '../../shared/records/fields.js';
import { recordSchema } from '../../shared/records/index.js';
import {
  errorObject,
  ingestAnswer,
  listAllAnswer,
  listAllParams,
  listIdParams,
  templatesAnswer,
  workflowsAnswer,
  renderParams,
  renderResult,
  statsAnswer,
  statsParams,
  statsTotals,
  statsTotalsParams,
  statsByWorkflow,
  statsByWorkflowParams,
  templateVariablesAnswer,
  templateVariablesParams,
} from './schemas.js';
import {
  ANSWER_EXAMPLES,
  errorExample,
  PATH_PARAM_DOCS,
  QUERY_PARAM_DOCS,
  REQUEST_EXAMPLES,
  type ParamDoc,
} from './examples.js';

type JsonSchema = Record<string, unknown>;

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of a zod schema, without the `$schema` header. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out: JsonSchema = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: describeField });
  delete out.$schema;
  return out;
}

/** What the shared record field types accept on the wire (their zod checks are custom code). */
const FIELD_DESCRIPTIONS = new Map<z.ZodType, string>([
  [positiveId, 'A positive integer up to 2^53 − 1, as a JSON number or a numeric string'],
  [opaqueId, '1–128 characters of [A-Za-z0-9_.:-]'],
  [
    instant,
    'RFC 3339 with an offset (2026-11-02T10:15:00Z, …+02:00) or integer Unix epoch milliseconds; ' +
      'a date or time that does not exist, or more than 24 h in the future, is rejected',
  ],
  [
    money,
    'A decimal ≥ 0 with at most 4 decimals (below 10^14), as a JSON number (at most 15 significant ' +
      'digits) or a string',
  ],
]);

function describeField(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  const description = FIELD_DESCRIPTIONS.get(ctx.zodSchema as z.ZodType);
  if (description && ctx.jsonSchema.description === undefined) ctx.jsonSchema.description = description;
}

/**
 * The record schemas for producers (docs/records.md "Schema"): what a record may look like on the wire, i.e. the
 * input side of shared/records (before ids become numbers, instants epoch ms and money decimal strings).
 * Served at /schemas/records.json and committed as schemas/records.json (`npm run schemas`).
 */
export function recordsJsonSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://mailstats.invalid/schemas/records.json',
    title: 'mailstats record',
    description:
      'One record per Kafka message (mailstats.events: activity, keyed by list_id; mailstats.catalog: ' +
      'catalog entities) or per NDJSON line of POST /ingest. Discriminated by `type`; unknown fields ' +
      'are ignored. Some rules are checked beyond this schema (RFC 3339 dates that exist, at most 24 h ' +
      'in the future, IANA time zones, ids up to 2^53 − 1, template size): see README "Record schema".',
    ...jsonSchema(recordSchema, 'input'),
  };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** An error answer: its HTTP status, the API error codes it carries, and when. */
type ErrorCase = [status: number, codes: string];

/** An error answer, its example the first code it names (as the service answers it). */
const errorAnswer = (description: string, code: number) => ({
  description,
  content: { 'application/json': { schema: ref('Error'), example: errorExample(code) } },
});

function errorResponses(cases: ErrorCase[]) {
  return Object.fromEntries(
    cases.map(([status, codes]) => [
      String(status),
      errorAnswer(`Error object, code ${codes}`, Number(/^\d+/.exec(codes)?.[0] ?? status)),
    ]),
  );
}

/** A parameter as /docs shows it: described, one JSON type, an example (./examples.ts). */
const parameter = (name: string, where: 'path' | 'query', required: boolean, doc: ParamDoc) => ({
  name,
  in: where,
  required,
  description: doc.description,
  schema: doc.schema,
  example: doc.example,
  ...(doc.style ? { style: doc.style, explode: doc.explode } : {}),
});

const COMMON_ERRORS: ErrorCase[] = [
  [400, '406 (invalid param or unreadable body)'],
  [403, '101 (unknown user, wrong or revoked key, no grant, unknown list — one answer for all)'],
  [413, '413 (body over 1 MiB)'],
  [415, '415 (Content-Encoding other than identity, gzip, deflate, br)'],
  [500, '500 (unexpected; details in the log under the request id in the message)'],
];

/** The errors of an operation that finds a list's account and template as templateRender does. */
const templateErrors = (unusable: string): ErrorCase[] => [
  [400, '407 (missing list_id or template_id) or 406 (invalid param, unreadable body)'],
  COMMON_ERRORS[1]!,
  [404, '17003 (no SMTP account for the list) or 17006 (template not found)'],
  [409, '17004 (the SMTP account is inactive)'],
  COMMON_ERRORS[2]!,
  COMMON_ERRORS[3]!,
  [422, unusable],
  COMMON_ERRORS[4]!,
];

interface OperationDoc {
  name: string;
  summary: string;
  description: string;
  params: z.ZodObject;
  answer: string;
  errors: ErrorCase[];
}

const OPERATIONS: OperationDoc[] = [
  {
    name: 'automation.stats',
    summary: 'Per-date workflow statistics of one list',
    description:
      'Sends, opens, clicks, purchases, bounces, unsubscribes, spam, workflow events, conditions, actions, ' +
      'revenue, AOV and rates per date of the period (list time zone). Period: start_date/stop_date, else ' +
      'month, else days, else the last 30 days (docs/api.md, "Period").',
    params: statsParams,
    answer: 'StatsAnswer',
    errors: [
      [400, '407 (missing list_id) or 406 (invalid param, period too long or inverted, unreadable body)'],
      ...COMMON_ERRORS.slice(1),
    ],
  },
  {
    name: 'automation.statsTotals',
    summary: "The period's money, exact to the cent (for dashboards)",
    description:
      'An operation of this service (not of the platform): the params, checks and period of ' +
      'automation.stats; one object with the purchases, revenue and AOV of the whole period, summed ' +
      'exactly over its days and rounded once (a sum of the per-day answer can be cents off: each day ' +
      'is rounded), the distinct recipients, openers, clickers and buyers of the whole period, revenue ' +
      'per recipient, conversion rate and alerts (docs/api.md, "automation.statsTotals").',
    params: statsTotalsParams,
    answer: 'StatsTotals',
    errors: [
      [400, '407 (missing list_id) or 406 (invalid param, period too long or inverted, unreadable body)'],
      ...COMMON_ERRORS.slice(1),
    ],
  },
  {
    name: 'automation.statsByWorkflow',
    summary: 'Per workflow, its figures over the period, from one grouped statement (for dashboards)',
    description:
      'An operation of this service (not of the platform): the params, checks and period of ' +
      'automation.stats; per workflow of the list (or of workflow_ids) with activity in the period: ' +
      'totals, distinct recipients, openers, clickers and buyers over the whole period, purchases and ' +
      'exact revenue (docs/api.md, "automation.statsByWorkflow").',
    params: statsByWorkflowParams,
    answer: 'StatsByWorkflow',
    errors: [
      [400, '407 (missing list_id) or 406 (invalid param, period too long or inverted, unreadable body)'],
      ...COMMON_ERRORS.slice(1),
    ],
  },
  {
    name: 'transactional.templateRender',
    summary: 'Render a stored transactional template',
    description:
      "Renders the template (Handlebars) of the list's SMTP account with `params`; props strings " +
      'are rendered too (docs/api.md, "transactional.templateRender").',
    params: renderParams,
    answer: 'RenderResult',
    errors: [
      ...templateErrors(
        '17007 (the template does not compile, fails while rendering, or exceeds the render limits)',
      ),
      [503, '17006 (the template store failed or timed out)'],
    ],
  },
  {
    name: 'transactional.templateVariables',
    summary: 'The params fields a template reads (for the template preview)',
    description:
      'An operation of this service (not of the platform): the account and template as ' +
      'transactional.templateRender finds them, with its checks and errors; the fields its content and ' +
      'props read, from Handlebars\' own parser, never rendered (docs/api.md, "transactional.templateVariables").',
    params: templateVariablesParams,
    answer: 'TemplateVariables',
    errors: [
      ...templateErrors('17007 (the template does not parse, or exceeds the render limits)'),
      [503, '17006 (the template store failed or timed out)'],
    ],
  },
  {
    name: 'list.all',
    summary: 'The lists the caller may read',
    description: 'No parameters. One item per list with an active grant (docs/api.md, "list.all").',
    params: listAllParams,
    answer: 'ListAllAnswer',
    errors: [
      [400, '406 (unreadable body)'],
      [403, '101 (unknown user or wrong key)'],
      ...COMMON_ERRORS.slice(2),
    ],
  },
  {
    name: 'automation.workflows',
    summary: "The list's workflows, with their names (for dashboards)",
    description:
      'An operation of this service (not of the platform): the catalog `workflow` records of the list.',
    params: listIdParams,
    answer: 'WorkflowsAnswer',
    errors: [
      [400, '407 (missing list_id) or 406 (invalid param, unreadable body)'],
      ...COMMON_ERRORS.slice(1),
    ],
  },
  {
    name: 'transactional.templates',
    summary: "The list's SMTP accounts and templates (for the template preview)",
    description:
      'An operation of this service (not of the platform): accounts of the list and their templates.',
    params: listIdParams,
    answer: 'TemplatesAnswer',
    errors: [
      [400, '407 (missing list_id) or 406 (invalid param, unreadable body)'],
      ...COMMON_ERRORS.slice(1),
    ],
  },
];

/** The tag of the API's operations (by GET), and the tag of the same operations with a body (POST). */
export const API_TAG = 'API 1.2';
export const BODY_TAG = 'API 1.2 with a body (POST)';

const PATH_PARAMS = [
  parameter('user_id', 'path', true, PATH_PARAM_DOCS.user_id),
  parameter('api_key', 'path', true, PATH_PARAM_DOCS.api_key),
];

function operationPath(op: OperationDoc) {
  const params = jsonSchema(op.params, 'input') as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  const query = Object.keys(params.properties ?? {}).map((name) => {
    const doc = QUERY_PARAM_DOCS[name];
    if (!doc) throw new Error(`${op.name}: parameter ${name} has no entry in openapi/examples.ts`);
    return parameter(name, 'query', params.required?.includes(name) ?? false, doc);
  });
  const responses = {
    '200': {
      description: op.summary,
      content: { 'application/json': { schema: ref(op.answer), example: ANSWER_EXAMPLES[op.name] } },
    },
    '404': errorAnswer('Error object, code 404 (unknown operation or a format other than .json)', 404),
    ...errorResponses(op.errors),
  };
  const id = op.name.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());
  const body = {
    description:
      'Params by name (or by position __0__, __1__, …); the body wins over the query string. ' +
      'Also accepted on GET.',
    required: false,
    content: {
      'application/json': { schema: params, example: REQUEST_EXAMPLES[op.name] },
      'application/x-www-form-urlencoded': { schema: params },
      'multipart/form-data': { schema: params },
    },
  };
  // The credentials first, in each operation's own list: a path-level list would be shown after the
  // operation's parameters, last.
  const parameters = [...PATH_PARAMS, ...query];
  return {
    // Both methods take the same params. GET is the operation's entry in the main group; POST, the same
    // operation with its params in a body, is grouped under its own tag after it (/docs shows it collapsed).
    get: {
      tags: [API_TAG],
      summary: `${op.summary} (params in the query string)`,
      description: `${op.description} The same params may come in a JSON, form or multipart body: see "${BODY_TAG}".`,
      operationId: `${id}Get`,
      parameters,
      responses,
    },
    post: {
      tags: [BODY_TAG],
      summary: `${op.summary} (params in a JSON, form or multipart body)`,
      description: op.description,
      operationId: `${id}Post`,
      parameters,
      requestBody: body,
      responses,
    },
  };
}

const readiness = {
  type: 'object',
  required: ['ready', 'checks'],
  properties: {
    ready: { type: 'boolean' },
    reason: { type: 'string', description: 'Each failing check as "name: why", joined with "; "' },
    checks: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

/** Two records of POST /ingest's example: a list and a send. */
const INGEST_EXAMPLE = [
  { type: 'list', list_id: 1, name: 'Demo Shop', timezone: 'Europe/Bucharest' },
  {
    type: 'send',
    event_id: 'e-10057-1',
    list_id: 1,
    workflow_id: 2,
    subscriber_id: 3,
    timestamp: '2026-11-02T10:15:00Z',
  },
];

const CATALOG_LISTING = {
  type: 'object',
  required: ['users', 'lists', 'grants'],
  properties: {
    users: {
      type: 'array',
      items: {
        type: 'object',
        required: ['user_id', 'active'],
        properties: { user_id: { type: 'integer' }, active: { type: 'boolean' } },
      },
    },
    lists: {
      type: 'array',
      items: {
        type: 'object',
        required: ['list_id', 'name', 'timezone', 'currency', 'locale'],
        properties: {
          list_id: { type: 'integer' },
          name: { type: 'string' },
          timezone: { type: 'string', description: "The list's, else DEFAULT_TIMEZONE" },
          currency: { type: 'string' },
          locale: { type: 'string' },
        },
      },
    },
    grants: {
      type: 'array',
      items: {
        type: 'object',
        required: ['user_id', 'list_id'],
        properties: { user_id: { type: 'integer' }, list_id: { type: 'integer' } },
      },
    },
  },
};

/** The OpenAPI 3.1 document of the service, built from the zod schemas above and in shared/records. */
export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const op of OPERATIONS) paths[`/api/1.2/rest/{user_id}/{api_key}/${op.name}.json`] = operationPath(op);
  paths['/ingest'] = {
    post: {
      tags: ['Ingest'],
      operationId: 'ingest',
      summary: 'Ingest records (NDJSON or a JSON array, both record families mixed)',
      description:
        'Valid records are taken even when others are rejected. Without KAFKA_BROKERS accepted records are ' +
        'stored and queryable before the answer; with it, accepted means acknowledged by Kafka (docs/records.md, "Ingest over HTTP").',
      security: [{ ingestToken: [] }],
      requestBody: {
        required: true,
        content: {
          'application/x-ndjson': {
            schema: { type: 'string', description: 'One JSON record per line (see the Record schema)' },
            example: INGEST_EXAMPLE.map((r) => JSON.stringify(r)).join('\n'),
          },
          'application/json': { schema: { type: 'array', items: ref('Record') }, example: INGEST_EXAMPLE },
        },
      },
      responses: {
        '200': {
          description: 'Accepted count and per-line rejections',
          content: {
            'application/json': { schema: ref('IngestAnswer'), example: { accepted: 2, rejected: [] } },
          },
        },
        ...errorResponses([
          [400, '400 (the body cannot be read at all)'],
          [401, '401 (missing or wrong ingest token)'],
          [413, '413 (body over 10 MiB)'],
          [415, '415 (unsupported Content-Encoding)'],
        ]),
      },
    },
  };
  paths['/ingest/catalog'] = {
    get: {
      tags: ['Ingest'],
      operationId: 'ingestCatalog',
      summary: 'Users, lists and grants the service knows (for the admin CLI)',
      description:
        'Read-only, behind the ingest token: what the admin CLI checks before a grant or a user add, and ' +
        'lists with `users`, `lists` and `grants`. Never a key or its digest (docs/operations.md, "Admin CLI").',
      security: [{ ingestToken: [] }],
      parameters: [
        parameter('user', 'query', false, {
          description: 'Only this user, and the grants of this user',
          schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
          example: 1001,
        }),
        parameter('list', 'query', false, {
          description: 'Only this list, and the grants on this list',
          schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
          example: 1,
        }),
      ],
      responses: {
        '200': {
          description: 'Users, lists and grants in force, by id',
          content: {
            'application/json': {
              schema: CATALOG_LISTING,
              example: {
                users: [{ user_id: 1001, active: true }],
                lists: [
                  {
                    list_id: 1,
                    name: 'Demo Shop',
                    timezone: 'Europe/Bucharest',
                    currency: 'RON',
                    locale: 'ro-RO',
                  },
                ],
                grants: [{ user_id: 1001, list_id: 1 }],
              },
            },
          },
        },
        '400': errorAnswer('Error object, code 400 (user or list is not a positive integer)', 400),
        '401': errorAnswer('Error object, code 401 (missing or wrong ingest token)', 401),
      },
    },
  };
  const opsGet = (operationId: string, summary: string, responses: Record<string, unknown>) => ({
    get: { tags: ['Operations'], operationId, summary, responses },
  });
  paths['/healthz'] = opsGet('healthz', 'The process is alive', {
    '200': {
      description: 'Alive',
      content: json({ type: 'object', required: ['ok'], properties: { ok: { const: true } } }),
    },
  });
  paths['/readyz'] = opsGet('readyz', 'ClickHouse answers, migrations applied, consumer in its group', {
    '200': { description: 'Ready', content: json(readiness) },
    '503': { description: 'Not ready; `reason` names each failing check', content: json(readiness) },
  });
  paths['/metrics'] = opsGet('metrics', 'Prometheus metrics', {
    '200': {
      description: 'Prometheus text format',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
  });
  paths['/schemas/records.json'] = opsGet('recordsSchema', 'JSON Schema of the records producers send', {
    '200': { description: 'JSON Schema 2020-12', content: json({ type: 'object' }) },
  });

  return {
    openapi: '3.1.0',
    info: {
      title: 'mailstats',
      version,
      description:
        'Workflow analytics and transactional template rendering, compatible with an email platform’s ' +
        'HTTP API 1.2. Every failure answers with the error object `{"err": true, "message", "code"}` ' +
        'and a matching HTTP status.',
    },
    // No jsonSchemaDialect: OpenAPI 3.1's default dialect (2020-12 with the OpenAPI vocabulary) is what the
    // schemas use, and swagger-ui warns about any other value, 2020-12's own URI included.
    servers: [{ url: '/' }],
    tags: [
      { name: API_TAG, description: 'Each operation once, its params in the query string (GET).' },
      {
        name: BODY_TAG,
        description:
          'The same operations with their params in a JSON, form or multipart body (POST; a body is also ' +
          'read on GET, as the platform’s own example sends it).',
      },
      { name: 'Ingest' },
      { name: 'Operations' },
    ],
    paths,
    components: {
      securitySchemes: { ingestToken: { type: 'http', scheme: 'bearer', description: 'INGEST_TOKEN' } },
      schemas: {
        Error: jsonSchema(errorObject, 'output'),
        StatsAnswer: jsonSchema(statsAnswer, 'output'),
        StatsTotals: jsonSchema(statsTotals, 'output'),
        StatsByWorkflow: jsonSchema(statsByWorkflow, 'output'),
        TemplateVariables: jsonSchema(templateVariablesAnswer, 'output'),
        RenderResult: jsonSchema(renderResult, 'output'),
        ListAllAnswer: jsonSchema(listAllAnswer, 'output'),
        WorkflowsAnswer: jsonSchema(workflowsAnswer, 'output'),
        TemplatesAnswer: jsonSchema(templatesAnswer, 'output'),
        IngestAnswer: jsonSchema(ingestAnswer, 'output'),
        Record: jsonSchema(recordSchema, 'input'),
      },
    },
  };
}
