import { z } from 'zod';
import type { Catalog } from '../shared/catalog/catalog.js';
import { authorize } from './api12/auth.js';
import { requiredId, type RawParams } from './api12/params.js';
import type { Operation } from './api12/operation.js';

/**
 * Two read-only operations of our own, for the dashboard (and any client) to name what it shows:
 * - `automation.workflows` (list_id) → `[{"workflow_id": 1, "name": "…"}]`: the list's workflows from
 *   the catalog's `workflow` records, ascending by id;
 * - `transactional.templates` (list_id) → `[{"account_id", "active", "is_default", "templates":
 *   [{"template_id", "content_type"}]}]`: the list's SMTP accounts and their templates (deleted ones left
 *   out), ascending by id.
 * Same checks and errors as the API's own operations: credentials (101) before the body is read, then 407, 406 and
 * list access (101) (docs/api.md "Errors").
 */
export interface CatalogOpsDeps {
  catalog: Catalog;
}

export const WorkflowEntry = z.object({ workflow_id: z.number().int(), name: z.string() }).strict();
export type WorkflowEntry = z.infer<typeof WorkflowEntry>;

export const AccountEntry = z
  .object({
    account_id: z.string(),
    active: z.boolean(),
    is_default: z.boolean(),
    templates: z.array(
      z.object({ template_id: z.string(), content_type: z.enum(['html', 'text']) }).strict(),
    ),
  })
  .strict();
export type AccountEntry = z.infer<typeof AccountEntry>;

export async function automationWorkflows(
  deps: CatalogOpsDeps,
  caller: { userId: string; apiKey: string },
  params: RawParams,
): Promise<WorkflowEntry[]> {
  const listId = requiredId(params, 'list_id');
  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);
  const workflows = await deps.catalog.workflows(listId);
  return workflows.map((w) => ({ workflow_id: w.workflow_id, name: w.name }));
}

export async function transactionalTemplates(
  deps: CatalogOpsDeps,
  caller: { userId: string; apiKey: string },
  params: RawParams,
): Promise<AccountEntry[]> {
  const listId = requiredId(params, 'list_id');
  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);
  const accounts = [...(await deps.catalog.accounts(listId))].sort((a, b) =>
    a.account_id.localeCompare(b.account_id),
  );
  if (accounts.length === 0) return [];
  const stored = await deps.catalog.templatesOf(accounts.map((a) => a.account_id));
  const templates = stored.filter((t) => !t.deleted);
  return accounts.map((a) => ({
    account_id: a.account_id,
    active: a.active,
    is_default: a.is_default,
    templates: templates
      .filter((t) => t.account_id === a.account_id)
      .map((t) => ({ template_id: t.template_id, content_type: t.content_type }))
      .sort((x, y) => x.template_id.localeCompare(y.template_id)),
  }));
}

/** Registered beside the API's operations in service/start.ts. */
export const catalogOperations = (deps: CatalogOpsDeps): Record<string, Operation> => ({
  'automation.workflows': (caller, params) => automationWorkflows(deps, caller, params),
  'transactional.templates': (caller, params) => transactionalTemplates(deps, caller, params),
});
