import busboy from 'busboy';
import { LRUCache } from 'lru-cache';
import qs from 'qs';
import { invalidParam } from './errors.js';
import type { RawParams } from './params.js';
import { signatureOf } from './signatures.js';

/**
 * Parameter intake (docs/api.md "Parameters"): every shape the platform's clients send, read in this one place
 * and handed to the operations as one object of named params.
 *
 * A source (the query string, the body, an XML-RPC call) yields either named params, which may
 * include positions `__0__`, `__1__`, …, or a plain list of positional params (a JSON array body, an
 * XML-RPC params list). `namedParams` then maps positions to names by the operation's parameter
 * table, merges the sources and drops optional params that PHP would call false.
 */
export type Source = RawParams | readonly unknown[];

/**
 * Limits for nested form fields: 20 levels as PHP allows (docs/api.md "Parameters"); lists long enough for
 * 1,000 workflow ids and more, so that the id-list check, not the parser, tells a caller about 1,001;
 * a field count that the 1 MiB body limit could reach anyway, but bounded explicitly. Over a limit is a
 * 406, never a silent truncation.
 */
export const FORM_LIMITS = { depth: 20, arrayLimit: 10_000, parameterLimit: 20_000 } as const;

const QS_OPTIONS: qs.IParseOptions & { decoder?: never } = {
  depth: FORM_LIMITS.depth,
  strictDepth: true,
  arrayLimit: FORM_LIMITS.arrayLimit,
  parameterLimit: FORM_LIMITS.parameterLimit,
  throwOnLimitExceeded: true,
  // `a=1&a=2` is 2, as PHP reads it; `a[]=1&a[]=2` is still the list [1, 2].
  duplicates: 'last',
  plainObjects: true,
  allowPrototypes: false,
  allowDots: false,
  comma: false,
};

function formLimitReason(err: RangeError): string {
  if (/depth/i.test(err.message)) return `fields nested deeper than ${FORM_LIMITS.depth} levels`;
  if (/array limit/i.test(err.message)) return `a list of more than ${FORM_LIMITS.arrayLimit} items`;
  if (/parameter limit/i.test(err.message)) return `more than ${FORM_LIMITS.parameterLimit} fields`;
  return 'unreadable form fields';
}

/**
 * Form fields and query strings as PHP's `http_build_query` writes them: `a[]=1&a[]=2` and `a[0]=…`
 * are lists, `p[k][j]=v` nested objects, anything else a string. `what` names the source in a 406.
 */
export function parseForm(text: string, what: 'query' | 'body' = 'body'): RawParams {
  try {
    return qs.parse(text, QS_OPTIONS) as RawParams;
  } catch (err) {
    if (err instanceof RangeError) throw invalidParam(what, formLimitReason(err));
    throw err;
  }
}

/**
 * Query strings read recently, by their text: a dashboard sends the same few again and again, and reading
 * one with qs was ~4% of a cached stats answer's CPU. Only flat ones are kept (every value a string), so
 * what is shared between requests cannot be changed by any of them. Bounded at ~1 MB, each entry counted
 * from its query's text (the params read from it are no longer than that text).
 */
const queries = new LRUCache<string, Readonly<RawParams>>({
  maxSize: 1 << 20,
  sizeCalculation: (_params, text) => 2 * text.length + 64,
});

/** A request's query string, as parseForm reads it. */
export function parseQuery(text: string): Readonly<RawParams> {
  const known = queries.get(text);
  if (known) return known;
  const params = parseForm(text, 'query');
  if (Object.values(params).every((v) => typeof v === 'string')) queries.set(text, Object.freeze(params));
  return params;
}

/** `multipart/form-data` fields (the 2019 PHP client), read with busboy, then nested like a form. */
function parseMultipart(body: Buffer, contentType: string): Promise<RawParams> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => reject(invalidParam('body', reason));
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        defParamCharset: 'utf8',
        limits: {
          fields: FORM_LIMITS.parameterLimit,
          parts: FORM_LIMITS.parameterLimit,
          files: 0,
          fieldNameSize: 4096,
          fieldSize: body.length,
        },
      });
    } catch {
      fail('multipart/form-data without a boundary');
      return;
    }
    const pairs = new URLSearchParams();
    let problem: string | undefined;
    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated)
        problem ??= `field ${JSON.stringify(name.slice(0, 64))} too long`;
      else pairs.append(name, value);
    });
    parser.on('file', (_name, stream) => {
      problem ??= 'file uploads are not read';
      stream.resume();
    });
    parser.on('filesLimit', () => (problem ??= 'file uploads are not read'));
    parser.on('fieldsLimit', () => (problem ??= `more than ${FORM_LIMITS.parameterLimit} fields`));
    parser.on('partsLimit', () => (problem ??= `more than ${FORM_LIMITS.parameterLimit} fields`));
    parser.on('error', (err: Error) => fail(`malformed multipart/form-data (${err.message})`));
    parser.on('close', () => {
      if (problem) return fail(problem);
      // The same nesting rules as a form body: one reader for `a[]`, `p[k]` and their limits.
      try {
        resolve(parseForm(pairs.toString(), 'body'));
      } catch (err) {
        reject(err);
      }
    });
    parser.end(body);
  });
}

const mediaType = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase() ?? '';

/**
 * A body is read by what it is, not only by what its header claims (docs/api.md "Parameters"): the current PHP
 * client posts a JSON object under `application/x-www-form-urlencoded`, the WordPress plugin a form body
 * under `application/json`. An empty body, and `[]` (how
 * PHP's json_encode writes "no arguments"), are no params; another JSON array is positional params.
 * Throws 406 `Invalid param body: …` when the body cannot be read.
 */
export async function parseBody(body: Buffer | undefined, contentType: string | undefined): Promise<Source> {
  const text = body?.toString('utf8') ?? '';
  const trimmed = text.trim();
  if (trimmed === '') return {};
  const type = mediaType(contentType);
  const json = readJson(text);
  if (json) {
    if (Array.isArray(json.value)) return json.value;
    if (typeof json.value === 'object' && json.value !== null) return json.value as RawParams;
    throw invalidParam('body', 'must be a JSON object of params');
  }
  if (type === 'multipart/form-data') return parseMultipart(body!, contentType!);
  // Meant as JSON (no form field starts with a bracket), whatever the header says.
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) throw invalidParam('body', 'not valid JSON');
  if (type === 'application/x-www-form-urlencoded') return parseForm(text, 'body');
  // No or another content type: form fields when it looks like them.
  if (!type.includes('json') && text.includes('=')) return parseForm(text, 'body');
  // Labelled JSON, but what the platform's WordPress plugin and Magento 2 module send under that label:
  // their params form-encoded by http_build_query. Read as a form only when it is one, byte for byte.
  if (isFormEncoded(text)) return parseForm(text, 'body');
  throw invalidParam('body', 'not valid JSON');
}

/**
 * A field of a form body as a form encoder writes it (PHP's http_build_query, URLSearchParams): a
 * non-empty name, `=`, a value, both of characters that need no escaping in a URL or of %-escapes; a
 * space is `+`. Brackets may stand as they are in a name (`a[0]=1`, as some encoders leave them).
 */
const FORM_FIELD =
  /^(?:[A-Za-z0-9\-._~!$'()*,;:@/?+[\]]|%[0-9A-Fa-f]{2})+=(?:[A-Za-z0-9\-._~!$'()*,;:@/?+=]|%[0-9A-Fa-f]{2})*$/;

/**
 * Whether a body labelled JSON is a well-formed form body (docs/api.md "Parameters"): one or more fields
 * joined by `&`, each FORM_FIELD. Anything else (a space, a quote, a brace, a line break, a field without
 * `=` or with a broken %-escape) is not: it stays the 406 of a body that is not valid JSON.
 */
function isFormEncoded(text: string): boolean {
  return text.split('&').every((field) => FORM_FIELD.test(field));
}

function readJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/**
 * The values PHP treats as false (docs/api.md "Parameters"): for an optional param they mean "not given".
 * `"false"` is not false in PHP, but the PHP client sends `false` that way in multipart fields.
 */
export function phpFalsy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '' || v === '0' || v === 'false')
    return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

const POSITION = /^__(0|[1-9]\d{0,3})__$/;

/** One source's params by name: positions become names, and a name given too wins over its position. */
function resolvePositions(operation: string, source: Source): RawParams {
  const names = signatureOf(operation).map((p) => p.name);
  const out: RawParams = Object.create(null);
  const positional: [number, unknown][] = Array.isArray(source)
    ? source.map((v, i) => [i, v] as [number, unknown])
    : [];
  if (!Array.isArray(source)) {
    for (const [key, value] of Object.entries(source)) {
      const m = POSITION.exec(key);
      if (m) positional.push([Number(m[1]), value]);
      else out[key] = value;
    }
  }
  for (const [index, value] of positional) {
    const name = names[index];
    // Positions beyond the operation's table are ignored, as unknown names are.
    if (name !== undefined && !Object.hasOwn(out, name)) out[name] = value;
  }
  return out;
}

/**
 * The operation's params from its sources, later sources winning (query string, then body: docs/api.md
 * "Parameters"). Each source is read whole first (there a name wins over its position); then, for every
 * optional param of the operation, a PHP-false value is dropped, so the operations see "not given".
 */
export function namedParams(operation: string, sources: readonly Source[]): RawParams {
  const merged: RawParams = Object.create(null);
  for (const source of sources) Object.assign(merged, resolvePositions(operation, source));
  for (const spec of signatureOf(operation)) {
    if (!spec.required && Object.hasOwn(merged, spec.name) && phpFalsy(merged[spec.name]))
      delete merged[spec.name];
  }
  return merged;
}
