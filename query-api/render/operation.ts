import type { Catalog, StoredTemplate } from '../../shared/catalog/catalog.js';
import type { Logger } from '../../shared/log.js';
import type { SmtpAccountRecord } from '../../shared/records/index.js';
import { authorize } from '../api12/auth.js';
import { ApiError, invalidParam, missingParam } from '../api12/errors.js';
import { given, requiredId, type RawParams } from '../api12/params.js';
import type { Caller } from '../stats/handler.js';
import {
  ParamsTooLargeError,
  TemplateRenderError,
  type RenderResult,
  type TemplateRenderer,
} from './engine.js';

export interface RenderDeps {
  catalog: Catalog;
  renderer: TemplateRenderer;
  log: Logger;
}

export const SUPPORTED_ENGINES = ['handlebars'] as const;
const OPAQUE_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

const accountNotFound = () => new ApiError(17003, 404, 'Could not find the SMTP account');
const accountInactive = () => new ApiError(17004, 409, 'The SMTP account is inactive');
const templateNotFetched = (status: 404 | 503, reason: string) =>
  new ApiError(17006, status, `The template could not be fetched: ${reason}`);
const notRendered = (reason: string) =>
  new ApiError(17007, 422, `The template could not be rendered: ${reason}`);

function opaqueId(params: RawParams, name: string): string | undefined {
  const v = params[name];
  if (!given(v)) return undefined;
  if (typeof v !== 'string' || !OPAQUE_ID.test(v))
    throw invalidParam(name, 'must be 1-128 characters of [A-Za-z0-9_.:-]');
  return v;
}

/** `params`: an object, or a JSON-encoded object (as the PHP client sends non-scalars); false = absent. */
function renderParams(params: RawParams): Record<string, unknown> {
  let v = params.params;
  if (!given(v)) return {};
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw invalidParam('params', 'not a valid JSON object');
    }
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalidParam('params', 'must be an object');
  return v as Record<string, unknown>;
}

/** account_id when given (it must be of this list), else the list's default account, else its only one. */
function resolveAccount(accounts: SmtpAccountRecord[], accountId: string | undefined): SmtpAccountRecord {
  const account =
    accountId !== undefined
      ? accounts.find((a) => a.account_id === accountId)
      : (accounts.find((a) => a.is_default) ?? (accounts.length === 1 ? accounts[0] : undefined));
  if (!account) throw accountNotFound();
  if (!account.active) throw accountInactive();
  return account;
}

/** transactional.templateRender: 407 → 406 → 101 → 17003/17004 → 17006 → 17007 (contract §2.5). */
export async function transactionalTemplateRender(
  deps: RenderDeps,
  caller: Caller,
  params: RawParams,
): Promise<RenderResult> {
  const listId = requiredId(params, 'list_id');
  if (!given(params.template_id)) throw missingParam('template_id');
  const templateId = opaqueId(params, 'template_id')!;
  const accountId = opaqueId(params, 'account_id');
  const engine = given(params.template_engine) ? params.template_engine : 'handlebars';
  if (!SUPPORTED_ENGINES.includes(engine as never)) {
    throw invalidParam('template_engine', `supported engines: ${SUPPORTED_ENGINES.join(', ')}`);
  }
  const values = renderParams(params);
  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);

  const [list, accounts] = await Promise.all([deps.catalog.list(listId), deps.catalog.accounts(listId)]);
  const account = resolveAccount(accounts, accountId);
  let template: StoredTemplate | undefined;
  try {
    template = await deps.catalog.template(account.account_id, templateId);
  } catch (err) {
    deps.log.error({ err, template_id: templateId }, 'template store failed');
    throw templateNotFetched(503, 'the template store is unavailable, try again');
  }
  if (!template || template.deleted) throw templateNotFetched(404, `template ${templateId} not found`);

  try {
    return deps.renderer.render({
      template: {
        templateId,
        accountId: account.account_id,
        version: template.versionToken,
        content: template.content,
        contentType: template.content_type,
        props: template.props,
      },
      params: values,
      list: { locale: list!.locale, timeZone: list!.timezone, currency: list!.currency },
    });
  } catch (err) {
    if (err instanceof TemplateRenderError) throw notRendered(err.reason);
    if (err instanceof ParamsTooLargeError) throw invalidParam('params', err.reason);
    throw err;
  }
}
