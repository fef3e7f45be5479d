import { LRUCache } from 'lru-cache';
import { templateLimitProblem } from '../../shared/template-limits.js';
import { authorize } from '../api12/auth.js';
import { missingParam, templateNotRendered } from '../api12/errors.js';
import type { Caller } from '../api12/operation.js';
import { given, requiredId, type RawParams } from '../api12/params.js';
import { lookupTemplate, opaqueId, type RenderDeps } from './handler.js';
import { createHandlebars } from './helpers.js';

// hbs: the Handlebars typings' global namespace of its AST.
type Node = hbs.AST.Node;
type Expression = hbs.AST.Expression;

/** The answer: the params fields the template reads, as dotted paths from the params' root. */
export interface TemplateVariables {
  variables: string[];
}

/** One Handlebars environment with the render's helpers: a name it knows is a helper, not a field. */
const env = createHandlebars();

/**
 * The fields a template (content and templated props) reads from its params, for a preview to say which
 * the params it was given lack. From Handlebars' own parser (the AST), never by rendering:
 * - `{{a.b}}`, and the values a helper or block is given (`{{money order.total}}`, `{{#if order.coupon}}`),
 *   as paths from the root of the params;
 * - inside `{{#with x}}` paths are under `x`; inside `{{#each x}}` they are of each item of `x` (unknown
 *   in advance: left out), except `../` paths, which reach the context outside, and `@root.` paths;
 * - `this`, `@index` and other data variables, literals and helper names are not fields.
 */
export function templateVariables(sources: string[]): string[] {
  const found = new Set<string>();
  for (const source of sources) walkProgram(env.parse(source), [[]]);
  return [...found];

  /** `scopes`: the contexts from the root to the current one, each a path, or null for an `each` item. */
  function walkProgram(program: hbs.AST.Program | undefined, scopes: (string[] | null)[]): void {
    for (const statement of program?.body ?? []) walk(statement, scopes);
  }

  function walk(node: Node, scopes: (string[] | null)[]): void {
    switch (node.type) {
      case 'MustacheStatement':
      case 'SubExpression': {
        const n = node as hbs.AST.MustacheStatement;
        const args = [...n.params, ...(n.hash?.pairs.map((p) => p.value) ?? [])];
        // `{{name}}` alone is a field unless a helper has that name; with arguments it is a helper.
        if (args.length === 0) expression(n.path, scopes, true);
        for (const a of args) expression(a, scopes, false);
        return;
      }
      case 'BlockStatement': {
        const b = node as hbs.AST.BlockStatement;
        const helper = b.path.type === 'PathExpression' ? (b.path as hbs.AST.PathExpression).original : '';
        for (const a of [...b.params, ...(b.hash?.pairs.map((p) => p.value) ?? [])])
          expression(a, scopes, false);
        const first = b.params[0];
        const inner =
          helper === 'with' && first?.type === 'PathExpression'
            ? resolve(first as hbs.AST.PathExpression, scopes)
            : helper === 'each'
              ? null
              : scopes.at(-1)!;
        walkProgram(b.program, inner === (scopes.at(-1) ?? null) ? scopes : [...scopes, inner]);
        walkProgram(b.inverse, scopes);
        return;
      }
      default:
        return;
    }
  }

  function expression(e: Expression, scopes: (string[] | null)[], alone: boolean): void {
    if (e.type === 'SubExpression') return walk(e, scopes);
    if (e.type !== 'PathExpression') return;
    const p = e as hbs.AST.PathExpression;
    if (alone && p.parts.length === 1 && p.depth === 0 && !p.data && Object.hasOwn(env.helpers, p.parts[0]!))
      return;
    const path = resolve(p, scopes);
    if (path && path.length > 0) found.add(path.join('.'));
  }

  /** The path from the params' root, or null when it is of an `each` item or not a field at all. */
  function resolve(p: hbs.AST.PathExpression, scopes: (string[] | null)[]): string[] | null {
    if (p.data) return p.parts[0] === 'root' ? p.parts.slice(1) : null;
    const base = scopes[scopes.length - 1 - p.depth];
    return base === undefined || base === null ? null : [...base, ...p.parts];
  }
}

/** Every string in the props, at any depth: the render renders each with the same params. */
function propStrings(props: unknown): string[] {
  if (typeof props === 'string') return [props];
  if (props && typeof props === 'object') return Object.values(props).flatMap(propStrings);
  return [];
}

/** Template versions whose answer is held; a template at the render limits takes up to ~200 ms to parse. */
const CACHED_VERSIONS = 2_000;

type Parsed = { variables: string[] } | { problem: string };

/**
 * The answer (or the parse error) per template version: parsing runs on the event loop, so a template at
 * the size limits is parsed once per stored version (the version token changes with every version), not
 * once per call; callers asking for it at once wait for that one parse. Counts for tests and metrics.
 */
const parsed = new LRUCache<string, Parsed>({ max: CACHED_VERSIONS });
export const templateVariablesCache = { hits: 0, parses: 0 };

function parseOnce(key: string, sources: () => string[]): Parsed {
  const hit = parsed.get(key);
  if (hit) {
    templateVariablesCache.hits++;
    return hit;
  }
  templateVariablesCache.parses++;
  let answer: Parsed;
  try {
    answer = { variables: templateVariables(sources()) };
  } catch (err) {
    answer = { problem: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
  }
  parsed.set(key, answer);
  return answer;
}

/**
 * transactional.templateVariables (an operation of this service, for the template preview; docs/api.md):
 * list_id, account_id, template_id as transactional.templateRender takes them, with its checks and errors
 * (407 → 406 → 101 → 17003 / 17004 → 17006 → 17007 for a template over the render limits or that does
 * not parse) → `{"variables": ["order.id", …]}`, in the order the template first reads them.
 */
export async function transactionalTemplateVariables(
  deps: Pick<RenderDeps, 'catalog' | 'log' | 'templateFetchTimeoutMs'>,
  caller: Caller,
  params: RawParams,
): Promise<TemplateVariables> {
  if (!given(params.list_id)) throw missingParam('list_id');
  if (!given(params.template_id)) throw missingParam('template_id');
  const listId = requiredId(params, 'list_id');
  const templateId = opaqueId(params, 'template_id')!;
  const accountId = opaqueId(params, 'account_id');
  await authorize(deps.catalog, caller.userId, caller.apiKey, listId);
  const { template } = await lookupTemplate(deps, listId, templateId, accountId);
  // The cheap checks of the render limits first: a template they refuse is never parsed here.
  const problem = templateLimitProblem({ content: template.content, props: template.props });
  if (problem) throw templateNotRendered(problem);
  // The account is part of the key (a template id is the account's), the version token of the version.
  const key = JSON.stringify([template.account_id, template.template_id, template.versionToken]);
  const answer = parseOnce(key, () => [template.content, ...propStrings(template.props)]);
  if ('problem' in answer) throw templateNotRendered(answer.problem);
  return { variables: [...answer.variables] };
}
