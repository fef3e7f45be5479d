import type { Catalog, StoredTemplate } from '../../shared/catalog/catalog.js';
import type { Logger } from '../../shared/log.js';
import { JsonAnswer } from '../api12/json-answer.js';
import type { SmtpAccountRecord } from '../../shared/records/index.js';
import { authorize } from '../api12/auth.js';
import {
  accountInactive,
  accountNotFound,
  invalidParam,
  missingParam,
  notAllowed,
  renderWorkersBusy,
  templateNotFetched,
  templateNotRendered,
} from '../api12/errors.js';
import { given, requiredId, type RawParams } from '../api12/params.js';
import type { Caller } from '../api12/operation.js';
import { RenderBusyError } from './pool.js';
import {
  ParamsTooLargeError,
  TemplateRenderError,
  checkParams,
  type RenderInput,
  type RenderResult,
} from './engine.js';

export interface RenderDeps {
  catalog: Catalog;
  /**
   * The service's RenderPool (off the event loop, with limits; its renderAnswer() gives the answer as
   * JSON bytes made in the worker); a TemplateRenderer renders in-line.
   */
  renderer: {
    render(input: RenderInput): RenderResult | Promise<RenderResult>;
    /** `tenant`: whose render it is (the user id), for the pool's per-user share of the workers. */
    renderAnswer?(input: RenderInput & { tenant?: string }): Promise<JsonAnswer<RenderResult>>;
  };
  log: Logger;
  /** How long a template lookup may take before the answer is 17006/503 (default 5 s). */
  templateFetchTimeoutMs?: number;
}

const SUPPORTED_ENGINES = ['handlebars'] as const;
const OPAQUE_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const OPAQUE_ID_RULE = 'must be 1-128 characters of [A-Za-z0-9_.:-]';

/**
 * account_id / template_id (docs/api.md "Addressing"): opaque strings of 1–128 `[A-Za-z0-9_.:-]`. A JSON number
 * (a client that stores ids as integers) is taken as its decimal string.
 */
export function opaqueId(params: RawParams, name: string): string | undefined {
  const v = params[name];
  if (!given(v)) return undefined;
  const s = typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : v;
  if (typeof s !== 'string' || !OPAQUE_ID.test(s)) throw invalidParam(name, OPAQUE_ID_RULE);
  return s;
}

function templateEngine(params: RawParams): void {
  const v = params.template_engine;
  if (given(v) && !SUPPORTED_ENGINES.includes(v as never)) {
    throw invalidParam('template_engine', `supported engines: ${SUPPORTED_ENGINES.join(', ')}`);
  }
}

/**
 * `params`: a JSON object, or a JSON-encoded object in a string (the PHP client JSON-encodes
 * non-scalars); false / "false" / "" / null mean none. An empty array (`[]`, how PHP's json_encode
 * writes an empty associative array) is taken as no params. Size and depth are checked here, so an
 * oversized `params` is a 406 like any other invalid param, before credentials are looked at.
 */
function renderParams(params: RawParams): Record<string, unknown> {
  let v = params.params;
  if (!given(v)) return {};
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw invalidParam('params', 'not a valid JSON object');
    }
    if (v === null) return {};
  }
  if (Array.isArray(v) && v.length === 0) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalidParam('params', 'must be an object');
  try {
    // Checked, not copied: the render pool renders from the params' JSON text, and an in-line renderer
    // copies them itself (engine.ts checkParams).
    return checkParams(v);
  } catch (err) {
    if (err instanceof ParamsTooLargeError) throw invalidParam('params', err.reason);
    throw err;
  }
}

/**
 * account_id when given (it must be of this list), else the list's default account, else its only
 * account. Several accounts marked default (a data error) resolve to the first by account_id.
 */
function resolveAccount(accounts: SmtpAccountRecord[], accountId: string | undefined): SmtpAccountRecord {
  const account =
    accountId !== undefined
      ? accounts.find((a) => a.account_id === accountId)
      : (accounts.find((a) => a.is_default) ?? (accounts.length === 1 ? accounts[0] : undefined));
  if (!account) throw accountNotFound();
  if (!account.active) throw accountInactive();
  return account;
}

class FetchTimeout extends Error {}

/** The lookup, or a FetchTimeout after `ms` (the catalog answers cached lookups at once). */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FetchTimeout(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The list's template to render (after authorize()): 17003 / 17004 → 17006 (docs/api.md "Errors").
 * Shared with transactional.templateVariables (./variables.ts).
 */
export async function lookupTemplate(
  deps: Pick<RenderDeps, 'catalog' | 'log' | 'templateFetchTimeoutMs'>,
  listId: number,
  templateId: string,
  accountId: string | undefined,
) {
  const [list, accounts] = await Promise.all([deps.catalog.list(listId), deps.catalog.accounts(listId)]);
  if (!list) throw notAllowed(listId); // only if the list vanished since authorize() saw it
  const account = resolveAccount(accounts, accountId);

  let template: StoredTemplate | undefined;
  try {
    template = await withTimeout(
      deps.catalog.template(account.account_id, templateId),
      deps.templateFetchTimeoutMs ?? 5_000,
    );
  } catch (err) {
    deps.log.error(
      { err, list_id: listId, account_id: account.account_id, template_id: templateId },
      'template fetch failed',
    );
    throw templateNotFetched(
      503,
      err instanceof FetchTimeout
        ? 'the template store did not answer in time, try again'
        : 'the template store is unavailable, try again',
    );
  }
  if (!template || template.deleted) throw templateNotFetched(404, `template ${templateId} not found`);
  return { list, account, template };
}

/**
 * transactional.templateRender (docs/api.md "Errors", "transactional.templateRender"):
 * 407 → 406 → 101 → 17003 / 17004 → 17006 → 17007 → `{content, engine, type, props}`, as a JsonAnswer
 * (its JSON bytes; the object through value() or toJSON()).
 */
export async function transactionalTemplateRender(
  deps: RenderDeps,
  caller: Caller,
  params: RawParams,
): Promise<JsonAnswer<RenderResult>> {
  // Every required param's presence first, then every param's validity.
  if (!given(params.list_id)) throw missingParam('list_id');
  if (!given(params.template_id)) throw missingParam('template_id');
  const listId = requiredId(params, 'list_id');
  const templateId = opaqueId(params, 'template_id')!;
  const accountId = opaqueId(params, 'account_id');
  templateEngine(params);
  const values = renderParams(params);

  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);

  const { list, account, template } = await lookupTemplate(deps, listId, templateId, accountId);

  const input: RenderInput = {
    template: {
      templateId,
      accountId: account.account_id,
      version: template.versionToken,
      content: template.content,
      contentType: template.content_type,
      props: template.props,
    },
    params: values,
    list: { locale: list.locale, timeZone: list.timezone, currency: list.currency },
  };
  try {
    const { renderer } = deps;
    // The user id as a number's text: authorize() took "041" as user 41, and so does the pool's share.
    const tenant = String(Number(caller.userId));
    if (renderer.renderAnswer) return await renderer.renderAnswer({ ...input, tenant });
    return JsonAnswer.from(await renderer.render(input));
  } catch (err) {
    if (err instanceof TemplateRenderError) {
      deps.log.debug(
        // logReason: a helper's message to the client may quote a param value; the log must not.
        { list_id: listId, template_id: templateId, reason: err.logReason },
        'template render failed',
      );
      throw templateNotRendered(err.reason);
    }
    if (err instanceof ParamsTooLargeError) throw invalidParam('params', err.reason);
    if (err instanceof RenderBusyError) throw renderWorkersBusy(err.retryAfterSeconds);
    throw err;
  }
}
