/**
 * The pure rendering engine behind `transactional.templateRender` (API 1.2): compiles stored Handlebars
 * templates (cached per template and version), renders content and props with request params, and turns
 * every compile or render failure into a TemplateRenderError (code 17007).
 */
import type Handlebars from 'handlebars';
import { HelperError, createHandlebars, type HandlebarsEnv, type ListContext } from './helpers.js';
import { MAX_OUTPUT_CHARS, MAX_TEMPLATE_BYTES, measureTemplate } from '../../shared/template-limits.js';

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

export { MAX_TEMPLATE_BYTES };
/** Params are at most 1 MiB on the wire (HTTP layer); the engine renders with at most this much. */
export const MAX_PARAMS_BYTES = 256 * 1024;
export const MAX_PARAMS_DEPTH = 20;

/**
 * Error 17007 (docs/api.md "Errors of templateRender"); `reason` names line and column when Handlebars
 * knows them.
 */
export class TemplateRenderError extends Error {
  readonly code = 17007;
  /**
   * `reason` is told to the client; `logReason` is what a log line may carry: the same, less any param
   * value a helper quoted (docs/operations.md "Logs").
   */
  constructor(
    readonly reason: string,
    readonly logReason: string = reason,
  ) {
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

/**
 * Heap a compiled mustache keeps (≈1 KiB measured: each becomes a helper-or-value lookup in the generated
 * function), so a cache bounded by `maxCost` bounds the heap even for templates dense with mustaches.
 */
export const MUSTACHE_COST = 1024;

type Template = Handlebars.TemplateDelegate;
type Runtime = Handlebars.RuntimeOptions;
type PropsRenderer = (params: unknown, runtime: Runtime) => unknown;

interface Entry {
  version: string;
  type: 'html' | 'text';
  bytes: number;
  /** What the entry weighs in the cache: its source bytes plus MUSTACHE_COST per mustache. */
  cost: number;
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
  private readonly maxCost: number;
  private readonly onCompile: (() => void) | undefined;
  private readonly stats = { bytes: 0, cost: 0, compiles: 0, hits: 0, misses: 0, evictions: 0 };

  /**
   * `maxEntries`, `maxBytes` (source bytes) and `maxCost` (bytes + MUSTACHE_COST per mustache) bound the
   * cache; `onCompile` is called after a template version is compiled, before it first renders (the
   * render worker reports it, so a template that is too heavy to compile can be refused from then on).
   */
  constructor(
    opts: { maxEntries?: number; maxBytes?: number; maxCost?: number; onCompile?: () => void } = {},
  ) {
    this.maxEntries = opts.maxEntries ?? 1000;
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
    this.maxCost = opts.maxCost ?? Infinity;
    this.onCompile = opts.onCompile;
  }

  /** Whether this version of the template is compiled and cached (the render worker asks first). */
  has(t: Pick<StoredTemplate, 'accountId' | 'templateId' | 'version' | 'contentType'>): boolean {
    const cached = this.cache.get(cacheKey(t));
    return cached !== undefined && cached.version === t.version && cached.type === t.contentType;
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
      throw new TemplateRenderError(reasonOf(err, this.env), logReasonOf(err, this.env));
    }
    // Each props string reports its own path, so no outer wrapping here.
    const props = entry.props ? (entry.props(params, runtime) as Record<string, unknown>) : null;
    const chars = content.length + (props ? JSON.stringify(props).length : 0);
    if (chars > MAX_OUTPUT_CHARS) {
      throw new TemplateRenderError(
        `the rendered template is ${chars} characters, over the ${MAX_OUTPUT_CHARS} character limit`,
      );
    }
    return { content, engine: 'handlebars', type: input.template.contentType, props };
  }

  cacheStats(): CacheStats {
    const { bytes, compiles, hits, misses, evictions } = this.stats;
    return { entries: this.cache.size, bytes, compiles, hits, misses, evictions };
  }

  private compiled(t: StoredTemplate): Entry {
    const key = cacheKey(t);
    const cached = this.cache.get(key);
    if (cached && cached.version === t.version && cached.type === t.contentType) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      this.stats.hits++;
      return cached;
    }
    // A new version replaces the old one at once, even if it then fails to compile.
    if (cached) this.remove(key, cached);
    this.stats.misses++;

    const entry = this.compile(t);
    this.onCompile?.();
    if (entry.bytes <= this.maxBytes && entry.cost <= this.maxCost) {
      this.cache.set(key, entry);
      this.stats.bytes += entry.bytes;
      this.stats.cost += entry.cost;
      for (const [oldKey, old] of this.cache) {
        const fits =
          this.cache.size <= this.maxEntries &&
          this.stats.bytes <= this.maxBytes &&
          this.stats.cost <= this.maxCost;
        if (fits) break;
        this.remove(oldKey, old);
        this.stats.evictions++;
      }
    }
    return entry;
  }

  private remove(key: string, entry: Entry): void {
    this.cache.delete(key);
    this.stats.bytes -= entry.bytes;
    this.stats.cost -= entry.cost;
  }

  private compile(t: StoredTemplate): Entry {
    // Size, mustaches and nesting first: cheap, and what would overflow the compiler's stack never reaches it.
    const measured = measureTemplate(t);
    if (measured.problem) throw new TemplateRenderError(measured.problem);
    const bytes = { total: Buffer.byteLength(t.content, 'utf8') };
    const content = this.compileString(t.content, t.contentType === 'text', '');
    const props = t.props ? this.compileProps(t.props, 'props', bytes) : null;
    const cost = bytes.total + MUSTACHE_COST * measured.mustaches;
    return { version: t.version, type: t.contentType, bytes: bytes.total, cost, content, props };
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
          throw new TemplateRenderError(
            `${path}: ${reasonOf(err, this.env)}`,
            `${path}: ${logReasonOf(err, this.env)}`,
          );
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
    // Compiled now rather than on first use (what env.compile() would do), so all the work of a new
    // version happens here: its errors are never cached, and the render worker can tell compiling a
    // template from rendering it. These are the steps of Handlebars' own compileInput().
    const options = { noEscape, strict: false, data: true };
    const env = this.env as unknown as CompilerEnv;
    try {
      const environment = new env.Compiler().compile(env.parse(ast, options), options);
      return env.template(new env.JavaScriptCompiler().compile(environment, options, undefined, true));
    } catch (err) {
      throw new TemplateRenderError(where + reasonOf(err, this.env));
    }
  }
}

/** The parts of a Handlebars environment that its compile() uses, absent from its typings. */
interface CompilerEnv {
  parse(ast: unknown, options: object): unknown;
  Compiler: new () => { compile(ast: unknown, options: object): unknown };
  JavaScriptCompiler: new () => {
    compile(environment: unknown, options: object, context: undefined, asObject: true): unknown;
  };
  template(spec: unknown): Template;
}

const cacheKey = (t: Pick<StoredTemplate, 'accountId' | 'templateId'>) =>
  `${t.accountId}\u0000${t.templateId}`;

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
/** reasonOf() for the log: a helper's failure without the param value it quoted. */
function logReasonOf(err: unknown, env: HandlebarsEnv): string {
  return err instanceof HelperError ? err.logMessage : reasonOf(err, env);
}

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
/** The JSON text sanitizeParams() measured for each object it returned (sent to the render worker as is). */
const SANITIZED_JSON = new WeakMap<object, string>();

/**
 * Params that sanitizeParams() produced in another thread and that reached this one as their JSON text
 * (sanitizedJson; JSON.parse makes only plain objects, arrays and primitives): taken as they are, not copied again.
 */
export function trustSanitized(params: Record<string, unknown>): Record<string, unknown> {
  SANITIZED.add(params);
  return params;
}

/**
 * Params are untrusted JSON: deep-copied into fresh objects without `__proto__`, `constructor` and
 * `prototype` keys (so no key can reach a prototype, here or in any code that later copies the data),
 * without functions or other non-JSON values (Handlebars would call a function found in the context),
 * at most MAX_PARAMS_DEPTH levels deep and MAX_PARAMS_BYTES of JSON.
 */
export function sanitizeParams(params: unknown): Record<string, unknown> {
  // Already the result of a sanitizeParams() (the handler checks params before credentials): as it is.
  if (typeof params === 'object' && params !== null && SANITIZED.has(params)) {
    return params as Record<string, unknown>;
  }
  const copy = copyJson(params, 0);
  const out = copy !== null && typeof copy === 'object' ? (copy as Record<string, unknown>) : {};
  const json = measuredJson(out);
  SANITIZED.add(out);
  SANITIZED_JSON.set(out, json);
  return out;
}

/**
 * The JSON text of params that sanitizeParams() or checkParams() returned (undefined for any other
 * object). Parsing it gives sanitized params again (plain objects and arrays, no forbidden key, within the
 * limits), so the render pool sends this string to its worker instead of cloning the object graph.
 */
export function sanitizedJson(params: Record<string, unknown>): string | undefined {
  return SANITIZED_JSON.get(params) ?? CHECKED_JSON.get(params);
}

/** The JSON text of params checkParams() took as they are (not copied: see there). */
const CHECKED_JSON = new WeakMap<object, string>();

/**
 * sanitizeParams() for params that will be rendered from their JSON text (the render pool's worker parses
 * it: fresh plain objects): the same checks and limits, but params that are plain JSON data already —
 * what JSON.parse makes of a request body, when it holds no forbidden key — are returned as they are,
 * with their JSON text kept for sanitizedJson(), instead of deep-copied first. The text is what the
 * worker renders with; the copy made nothing safer there, and cost the event loop ~10 µs per request for
 * the bench's 30 params (check + JSON.stringify ~7 µs against copy + JSON.stringify ~18). Anything else
 * (a forbidden key, a non-finite number, a class instance, an array with holes) goes through
 * sanitizeParams(). An in-line TemplateRenderer still copies what this returns (it is not marked as
 * sanitized), so no object it renders from was left uncopied.
 */
export function checkParams(params: unknown): Record<string, unknown> {
  if (typeof params === 'object' && params !== null && SANITIZED.has(params)) {
    return params as Record<string, unknown>;
  }
  if (!isPlainObject(params) || !isJsonData(params, 0)) return sanitizeParams(params);
  if (!CHECKED_JSON.has(params)) CHECKED_JSON.set(params, measuredJson(params));
  return params;
}

function measuredJson(params: Record<string, unknown>): string {
  const json = JSON.stringify(params);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_PARAMS_BYTES) {
    throw new ParamsTooLargeError(
      `params are ${bytes} bytes of JSON, over the ${MAX_PARAMS_BYTES} byte limit`,
    );
  }
  return json;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Whether `value` is JSON data that copyJson() would keep whole: strings, finite numbers, booleans, null,
 * arrays without holes and plain objects without a forbidden key (only their own enumerable string keys
 * count, as for copyJson() and JSON.stringify). Throws, as copyJson() does, past MAX_PARAMS_DEPTH.
 */
function isJsonData(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object') return false;
  if (depth >= MAX_PARAMS_DEPTH) {
    throw new ParamsTooLargeError(`params are nested deeper than ${MAX_PARAMS_DEPTH} levels`);
  }
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || !isJsonData(value[i], depth + 1)) return false;
    }
    return true;
  }
  if (!isPlainObject(value)) return false;
  for (const k of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(k) || !isJsonData(value[k], depth + 1)) return false;
  }
  return true;
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
