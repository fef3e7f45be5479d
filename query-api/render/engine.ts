/**
 * The pure rendering engine behind `transactional.templateRender` (API 1.2): compiles stored Handlebars
 * templates (cached per template and version), renders content and props with request params, and turns
 * every compile or render failure into a TemplateRenderError (code 17007).
 */
import type Handlebars from 'handlebars';
import { templateCacheHit, templateCacheMiss } from '../../shared/metrics.js';
import { createHandlebars, type HandlebarsEnv, type ListContext } from './helpers.js';

export type { ListContext };

export interface StoredTemplate {
  templateId: string;
  accountId: string;
  /** Any token that changes whenever content, contentType or props change. */
  version: string;
  content: string;
  contentType: 'html' | 'text';
  props: Record<string, unknown> | null;
}

export interface RenderInput {
  template: StoredTemplate;
  params: Record<string, unknown>;
  list: ListContext;
}

export interface RenderResult {
  content: string;
  engine: 'handlebars';
  type: 'html' | 'text';
  props: Record<string, unknown> | null;
}

/** Also enforced by the catalog schema; checked here so the engine never compiles more. */
export const MAX_TEMPLATE_BYTES = 512 * 1024;
/** Params are at most 1 MiB on the wire (HTTP layer); the engine renders with at most this much. */
export const MAX_PARAMS_BYTES = 256 * 1024;
export const MAX_PARAMS_DEPTH = 20;

/** Contract error 17007; `reason` names line and column when Handlebars knows them. */
export class TemplateRenderError extends Error {
  readonly code = 17007;
  constructor(readonly reason: string) {
    super(`The template could not be rendered: ${reason}`);
    this.name = 'TemplateRenderError';
  }
}

/**
 * Params over the engine's size or depth limit. Kept apart from TemplateRenderError because the request,
 * not the template, is at fault: the HTTP layer should answer it as an invalid `params` param (406).
 */
export class ParamsTooLargeError extends Error {
  constructor(readonly reason: string) {
    super(`Invalid param params: ${reason}`);
    this.name = 'ParamsTooLargeError';
  }
}

type Template = Handlebars.TemplateDelegate;
type Runtime = Handlebars.RuntimeOptions;
type PropsRenderer = (params: unknown, runtime: Runtime) => unknown;

interface Entry {
  version: string;
  type: 'html' | 'text';
  bytes: number;
  content: Template;
  props: PropsRenderer | null;
}

export interface CacheStats {
  entries: number;
  bytes: number;
  /** Handlebars compilations (content and each templated props string). */
  compiles: number;
  hits: number;
  misses: number;
  evictions: number;
}

export class TemplateRenderer {
  private readonly env: HandlebarsEnv = createHandlebars();
  /** Map order is recency order: the first key is the least recently used. */
  private readonly cache = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly stats = { bytes: 0, compiles: 0, hits: 0, misses: 0, evictions: 0 };

  constructor(opts: { maxEntries?: number; maxBytes?: number } = {}) {
    this.maxEntries = opts.maxEntries ?? 1000;
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  }

  render(input: RenderInput): RenderResult {
    const params = SANITIZED.has(input.params) ? input.params : sanitizeParams(input.params);
    const entry = this.compiled(input.template);
    const runtime: Runtime = {
      data: { list: Object.freeze({ ...input.list }) },
      allowProtoPropertiesByDefault: false,
      allowProtoMethodsByDefault: false,
    };
    let content: string;
    try {
      content = entry.content(params, runtime);
    } catch (err) {
      throw new TemplateRenderError(reasonOf(err, this.env));
    }
    // Each props string reports its own path, so no outer wrapping here.
    const props = entry.props ? (entry.props(params, runtime) as Record<string, unknown>) : null;
    return { content, engine: 'handlebars', type: input.template.contentType, props };
  }

  cacheStats(): CacheStats {
    return { entries: this.cache.size, ...this.stats };
  }

  private compiled(t: StoredTemplate): Entry {
    const key = `${t.accountId}\u0000${t.templateId}`;
    const cached = this.cache.get(key);
    if (cached && cached.version === t.version && cached.type === t.contentType) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      this.stats.hits++;
      templateCacheHit();
      return cached;
    }
    // A new version replaces the old one at once, even if it then fails to compile.
    if (cached) this.remove(key, cached);
    this.stats.misses++;
    templateCacheMiss();

    const entry = this.compile(t);
    if (entry.bytes <= this.maxBytes) {
      this.cache.set(key, entry);
      this.stats.bytes += entry.bytes;
      for (const [oldKey, old] of this.cache) {
        if (this.cache.size <= this.maxEntries && this.stats.bytes <= this.maxBytes) break;
        this.remove(oldKey, old);
        this.stats.evictions++;
      }
    }
    return entry;
  }

  private remove(key: string, entry: Entry): void {
    this.cache.delete(key);
    this.stats.bytes -= entry.bytes;
  }

  private compile(t: StoredTemplate): Entry {
    const contentBytes = Buffer.byteLength(t.content, 'utf8');
    if (contentBytes > MAX_TEMPLATE_BYTES) {
      throw new TemplateRenderError(
        `the template is ${contentBytes} bytes, over the ${MAX_TEMPLATE_BYTES} byte limit`,
      );
    }
    const bytes = { total: contentBytes };
    const content = this.compileString(t.content, t.contentType === 'text', '');
    const props = t.props ? this.compileProps(t.props, 'props', bytes) : null;
    return { version: t.version, type: t.contentType, bytes: bytes.total, content, props };
  }

  /** Props values are plain text (e.g. a subject line): strings render unescaped, other values as they are. */
  private compileProps(value: unknown, path: string, bytes: { total: number }): PropsRenderer {
    if (typeof value === 'string') {
      bytes.total += Buffer.byteLength(value, 'utf8');
      if (!value.includes('{{')) return () => value;
      const template = this.compileString(value, true, `${path}: `);
      return (params, runtime) => {
        try {
          return template(params, runtime);
        } catch (err) {
          throw new TemplateRenderError(`${path}: ${reasonOf(err, this.env)}`);
        }
      };
    }
    if (Array.isArray(value)) {
      const items = value.map((v, i) => this.compileProps(v, `${path}[${i}]`, bytes));
      return (params, runtime) => items.map((render) => render(params, runtime));
    }
    if (value !== null && typeof value === 'object') {
      const fields = Object.entries(value).map(
        ([k, v]) => [k, this.compileProps(v, `${path}.${k}`, bytes)] as const,
      );
      // Object.fromEntries defines own properties, so even a "__proto__" key stays plain data.
      return (params, runtime) =>
        Object.fromEntries(fields.map(([k, render]) => [k, render(params, runtime)]));
    }
    return () => value;
  }

  private compileString(source: string, noEscape: boolean, where: string): Template {
    let ast: ReturnType<HandlebarsEnv['parseWithoutProcessing']>;
    try {
      // Parsing now surfaces syntax errors before anything is cached; compile() takes the AST.
      ast = this.env.parseWithoutProcessing(source);
    } catch (err) {
      throw new TemplateRenderError(where + reasonOf(err, this.env));
    }
    this.stats.compiles++;
    return this.env.compile(ast, { noEscape, strict: false });
  }
}

interface Loc {
  first_line: number;
  first_column: number;
  last_line: number;
  last_column: number;
}

/**
 * One-line reason with a 1-based "line L, column C" where Handlebars knows it: semantic errors carry
 * `lineNumber`/`column` (0-based column, echoed as " - L:C" in the message); the Jison parser's errors
 * only say "on line N", but its lexer still holds the offending token's location right after the
 * (synchronous) throw.
 */
function reasonOf(err: unknown, env: HandlebarsEnv): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as Error & { lineNumber?: number; column?: number };
  if (typeof e.lineNumber === 'number' && typeof e.column === 'number') {
    return `${e.message.replace(/ - \d+:\d+$/, '')} (line ${e.lineNumber}, column ${e.column + 1})`;
  }
  const parse = /^(Parse|Lexical) error on line (\d+)[.:]/.exec(e.message);
  if (parse) {
    const loc = (env as unknown as { Parser?: { lexer?: { yylloc?: Loc } } }).Parser?.lexer?.yylloc;
    const lexical = parse[1] === 'Lexical';
    const line = loc ? (lexical ? loc.last_line : loc.first_line) : Number(parse[2]);
    const column = loc ? (lexical ? loc.last_column : loc.first_column) + 1 : undefined;
    // Keep the parser's "Expecting …, got …", drop its ASCII-art excerpt.
    const expecting = e.message.split('\n').find((l) => l.startsWith('Expecting')) ?? '';
    const what = lexical
      ? 'unrecognized text'
      : expecting.endsWith("got 'EOF'")
        ? 'unexpected end of template (is a {{#block}} not closed?)'
        : expecting || e.message;
    return `${parse[1]} error (line ${line}${column === undefined ? '' : `, column ${column}`}): ${what}`;
  }
  return e.message;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Objects sanitizeParams() returned: render() takes them as they are, so a caller that validated params
 * up front (to answer 406 before checking credentials) does not pay for the deep copy twice.
 */
const SANITIZED = new WeakSet<object>();

/**
 * Params are untrusted JSON: deep-copied into fresh objects without `__proto__`, `constructor` and
 * `prototype` keys (so no key can reach a prototype, here or in any code that later copies the data),
 * without functions or other non-JSON values (Handlebars would call a function found in the context),
 * at most MAX_PARAMS_DEPTH levels deep and MAX_PARAMS_BYTES of JSON.
 */
export function sanitizeParams(params: unknown): Record<string, unknown> {
  const copy = copyJson(params, 0);
  const out = copy !== null && typeof copy === 'object' ? (copy as Record<string, unknown>) : {};
  const bytes = Buffer.byteLength(JSON.stringify(out), 'utf8');
  if (bytes > MAX_PARAMS_BYTES) {
    throw new ParamsTooLargeError(
      `params are ${bytes} bytes of JSON, over the ${MAX_PARAMS_BYTES} byte limit`,
    );
  }
  SANITIZED.add(out);
  return out;
}

function copyJson(value: unknown, depth: number): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'object') return undefined;
  if (depth >= MAX_PARAMS_DEPTH) {
    throw new ParamsTooLargeError(`params are nested deeper than ${MAX_PARAMS_DEPTH} levels`);
  }
  if (Array.isArray(value)) return value.map((v: unknown) => copyJson(v, depth + 1) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const c = FORBIDDEN_KEYS.has(k) ? undefined : copyJson(v, depth + 1);
    if (c !== undefined) out[k] = c;
  }
  return out;
}
