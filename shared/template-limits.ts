/**
 * Render limits (docs/api.md "Render limits"): what a template may cost, and the cheap checks that refuse
 * what surely costs more before anything is compiled. Pure and dependency-free, and in shared/ because both
 * sides use it: the render pool (query-api/render) enforces it, and the ingest pipeline calls
 * templateLimitProblem() to warn about a stored template (docs/records.md "Catalog records") without
 * loading Handlebars.
 *
 * Measured on the project's 2-core machine (BENCHMARKS.md, render section): Handlebars compiles about
 * 4,000–5,000 mustaches per second of CPU (each `{{x}}` becomes a helper-or-value lookup in the generated
 * function), and its parser and compiler recurse once or more per nested block, so 5,000 nested `{{#if}}`
 * overflowed the stack after 26 s. A realistic order confirmation has 50–150 mustaches nested 3–4 deep.
 */

/** Also the catalog's limit for `content` (docs/records.md "Catalog records"). */
export const MAX_TEMPLATE_BYTES = 512 * 1024;
/** Templated strings in `props` (subject lines and the like), all together, as JSON. */
export const MAX_PROPS_BYTES = 64 * 1024;
/** `{{…}}` in content and props together: 5,000 compile in about 1 s of CPU here, so more never fit. */
export const MAX_MUSTACHES = 5_000;
/** Nested blocks (`{{#…}}`, `{{^…}}`, `{{#>…}}`, `{{#*inline}}`); realistic templates stay under 10. */
export const MAX_BLOCK_DEPTH = 100;
/** Nested subexpressions inside one mustache, e.g. `(and (gt a 1) (eq b 2))` is 2. */
export const MAX_SUBEXPRESSION_DEPTH = 20;
/** CPU (measured as the render worker's wall-clock time, which bounds it) for one compile + render. */
export const RENDER_TIME_LIMIT_MS = 1_000;
/** Memory one compile + render may use on top of the render worker's baseline and cache. */
export const RENDER_MEMORY_LIMIT_MB = 64;
/** Rendered content plus props, in UTF-16 code units; an email this large is undeliverable anyway. */
export const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

export interface TemplateSource {
  content: string;
  props?: Record<string, unknown> | null;
}

/**
 * Why the template exceeds the render limits, or undefined when it fits the cheap checks (size, number
 * of mustaches, nesting). Linear in the template's size (≈1 ms for 512 KiB), never compiles anything.
 * A template that passes may still exceed the time or memory budget when rendered.
 */
export function templateLimitProblem(template: string | TemplateSource): string | undefined {
  return measureTemplate(template).problem;
}

/** templateLimitProblem(), and the number of mustaches (the render cache weighs entries by it). */
export function measureTemplate(template: string | TemplateSource): { problem?: string; mustaches: number } {
  const { content, props } = typeof template === 'string' ? { content: template, props: null } : template;
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_TEMPLATE_BYTES) {
    return {
      mustaches: 0,
      problem: `the template is ${bytes} bytes, over the ${MAX_TEMPLATE_BYTES} byte limit`,
    };
  }
  const strings: [string, string][] = [['', content]];
  if (props) {
    const propsBytes = Buffer.byteLength(JSON.stringify(props), 'utf8');
    if (propsBytes > MAX_PROPS_BYTES) {
      return {
        mustaches: 0,
        problem: `props are ${propsBytes} bytes of JSON, over the ${MAX_PROPS_BYTES} byte limit`,
      };
    }
    collectStrings(props, 'props', strings);
  }
  let mustaches = 0;
  for (const [where, source] of strings) {
    const scan = scanMustaches(source);
    mustaches += scan.mustaches;
    if (scan.problem) return { mustaches, problem: where + scan.problem };
  }
  if (mustaches > MAX_MUSTACHES) {
    return {
      mustaches,
      problem: `the template has ${mustaches} mustaches ({{…}}), over the ${MAX_MUSTACHES} limit`,
    };
  }
  return { mustaches };
}

function collectStrings(value: unknown, path: string, out: [string, string][]): void {
  if (typeof value === 'string') {
    if (value.includes('{{')) out.push([`${path}: `, value]);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => collectStrings(v, `${path}[${i}]`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collectStrings(v, `${path}.${k}`, out);
  }
}

/**
 * Counts mustaches and tracks block and subexpression nesting with indexOf, not a parser: comments are
 * skipped, `\{{` is literal; a stray paren inside a string literal may over-count a subexpression level,
 * which only makes the check a little stricter than Handlebars itself. Syntax errors are left to the
 * compiler, which reports them with line and column.
 */
function scanMustaches(source: string): { mustaches: number; problem?: string } {
  let mustaches = 0;
  let depth = 0;
  let i = source.indexOf('{{');
  while (i !== -1) {
    if (i > 0 && source[i - 1] === '\\' && source[i - 2] !== '\\') {
      i = source.indexOf('{{', i + 2);
      continue;
    }
    let start = i + 2;
    while (source[start] === '{') start++; // {{{raw}}} and {{{{raw-block}}}}
    if (source[start] === '~') start++;
    if (source.startsWith('!--', start)) {
      const end = source.indexOf('--}}', start + 3);
      if (end === -1) break;
      i = source.indexOf('{{', end + 4);
      continue;
    }
    const end = source.indexOf('}}', start);
    if (end === -1) break;
    mustaches++;
    const sigil = source[start];
    // `{{^}}` alone is an else, `{{^name}}` an inverse block.
    if (sigil === '#' || (sigil === '^' && source.slice(start + 1, end).trim() !== '')) {
      depth++;
      if (depth > MAX_BLOCK_DEPTH) {
        return {
          mustaches,
          problem: `blocks are nested ${depth} deep ${at(source, i)}, over the ${MAX_BLOCK_DEPTH} limit`,
        };
      }
    } else if (sigil === '/') {
      depth = Math.max(0, depth - 1);
    }
    if (sigil !== '!') {
      let parens = 0;
      for (let j = start; j < end; j++) {
        const c = source.charCodeAt(j);
        if (c === 40 /* ( */ && ++parens > MAX_SUBEXPRESSION_DEPTH) {
          return {
            mustaches,
            problem: `subexpressions are nested ${parens} deep ${at(source, i)}, over the ${MAX_SUBEXPRESSION_DEPTH} limit`,
          };
        }
        if (c === 41 /* ) */) parens = Math.max(0, parens - 1);
      }
    }
    i = source.indexOf('{{', end + 2);
  }
  return { mustaches };
}

/** "(line L, column C)", 1-based, of an offset: computed only for the one problem reported. */
function at(source: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `(line ${line}, column ${offset - lineStart + 1})`;
}
