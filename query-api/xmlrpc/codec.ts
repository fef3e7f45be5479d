import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * The XML-RPC encoding (docs/api.md "XML-RPC", http://xmlrpc.com/spec.md) at the edge of the API: a
 * `methodCall` in, a `methodResponse` or a fault out. It knows nothing of the operations.
 *
 * The parser is fast-xml-parser, configured so that it only tokenises: no DTDs (a body with one is
 * refused before parsing, so no entity expansion or external entities), no entity processing (the five
 * XML entities and character references are decoded here, once), no number or value parsing (a
 * `<string>007</string>` stays "007"), whitespace kept (it is part of a string).
 */
export class XmlRpcError extends Error {}

export interface MethodCall {
  methodName: string;
  params: unknown[];
}

/** Values nested deeper than this are refused (render params allow 20 levels; a few for the call). */
const MAX_DEPTH = 32;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  trimValues: false,
  removeNSPrefix: true,
  // CDATA apart from text: its content is literal, never entity-decoded.
  cdataPropName: '#cdata',
  // Three tags per level of values (<value><array><data>, <value><struct><member>), and the call's own.
  maxNestedTags: 3 * MAX_DEPTH + 8,
});

type Node = Record<string, unknown>;

const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/g;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Decodes the XML entities and character references of a text node; any other `&` is malformed XML. */
function decodeText(text: string): string {
  const out = text.replace(ENTITY, (_m, dec?: string, hex?: string, name?: string) => {
    if (name) return NAMED[name]!;
    const code = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    if (code > 0x10ffff || code === 0) throw new XmlRpcError('an invalid character reference');
    return String.fromCodePoint(code);
  });
  // A `&` left over was not a reference: a literal `&` (or `&` + unknown entity), which XML forbids.
  if (text.replace(ENTITY, '').includes('&')) throw new XmlRpcError('an unescaped "&" or unknown entity');
  return out;
}

const tagOf = (node: Node): string | undefined => Object.keys(node).find((k) => k !== ':@');
const childrenOf = (node: Node, tag: string) => (node[tag] as Node[] | undefined) ?? [];
const isText = (node: Node) => tagOf(node) === '#text' || tagOf(node) === '#cdata';
const isBlank = (node: Node) => tagOf(node) === '#text' && String(node['#text']).trim() === '';

/** The element children of a node, text between them allowed only as whitespace. */
function elements(nodes: Node[], where: string): Node[] {
  const out: Node[] = [];
  for (const n of nodes) {
    if (isBlank(n)) continue;
    if (isText(n)) throw new XmlRpcError(`unexpected text in <${where}>`);
    out.push(n);
  }
  return out;
}

/** All text of an element: text nodes decoded, CDATA as it is. */
function textOf(nodes: Node[], where: string): string {
  let s = '';
  for (const n of nodes) {
    const tag = tagOf(n);
    if (tag === '#text') s += decodeText(String(n['#text']));
    else if (tag === '#cdata') s += (n['#cdata'] as Node[]).map((t) => String(t['#text'] ?? '')).join('');
    else throw new XmlRpcError(`unexpected element in <${where}>`);
  }
  return s;
}

function only(nodes: Node[], tag: string, where: string): Node {
  const els = elements(nodes, where);
  if (els.length !== 1 || tagOf(els[0]!) !== tag) throw new XmlRpcError(`<${where}> must hold one <${tag}>`);
  return els[0]!;
}

const INT = /^[+-]?\d{1,20}$/;
const DOUBLE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** An XML-RPC integer; one beyond 2^53 stays its digits (the id checks refuse it with a 406). */
function integer(text: string): number | string {
  const t = text.trim();
  if (!INT.test(t)) throw new XmlRpcError(`${JSON.stringify(t.slice(0, 40))} is not an integer`);
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : t.replace(/^\+/, '');
}

/** `dateTime.iso8601` (`20251020T10:15:00`, as Python sends a datetime) → `2025-10-20 10:15:00`. */
function dateTime(text: string): string {
  const t = text.trim();
  const m = /^(\d{4})-?(\d{2})-?(\d{2})T(\d{2}):?(\d{2}):?(\d{2})/.exec(t);
  return m ? `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${m[6]}` : t;
}

/** One `<value>`: int/i4/i8, boolean, string (or untyped text), double, dateTime.iso8601, base64, struct, array, nil. */
function decodeValue(nodes: Node[], depth: number): unknown {
  if (depth > MAX_DEPTH) throw new XmlRpcError(`values nested deeper than ${MAX_DEPTH} levels`);
  if (nodes.every(isText)) return textOf(nodes, 'value'); // untyped: a string, whitespace kept
  const els = elements(nodes, 'value');
  if (els.length > 1) throw new XmlRpcError('<value> must hold one type');
  const el = els[0]!;
  const tag = tagOf(el)!;
  const inner = childrenOf(el, tag);
  switch (tag) {
    case 'int':
    case 'i4':
    case 'i8':
      return integer(textOf(inner, tag));
    case 'boolean': {
      const t = textOf(inner, tag).trim();
      if (t !== '0' && t !== '1') throw new XmlRpcError('a boolean is 0 or 1');
      return t === '1';
    }
    case 'string':
      return textOf(inner, tag);
    case 'double': {
      const t = textOf(inner, tag).trim();
      if (!DOUBLE.test(t)) throw new XmlRpcError(`${JSON.stringify(t.slice(0, 40))} is not a double`);
      return Number(t);
    }
    case 'dateTime.iso8601':
      return dateTime(textOf(inner, tag));
    case 'base64':
      return Buffer.from(textOf(inner, tag).replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'nil':
      return null;
    case 'array': {
      const data = only(inner, 'data', 'array');
      return elements(childrenOf(data, 'data'), 'data').map((v) => {
        if (tagOf(v) !== 'value') throw new XmlRpcError('<data> holds only <value>s');
        return decodeValue(childrenOf(v, 'value'), depth + 1);
      });
    }
    case 'struct': {
      const out: Record<string, unknown> = Object.create(null);
      for (const member of elements(inner, 'struct')) {
        if (tagOf(member) !== 'member') throw new XmlRpcError('<struct> holds only <member>s');
        const parts = elements(childrenOf(member, 'member'), 'member');
        const nameNode = parts.find((p) => tagOf(p) === 'name');
        const valueNode = parts.find((p) => tagOf(p) === 'value');
        if (!nameNode || !valueNode || parts.length !== 2)
          throw new XmlRpcError('a <member> is one <name> and one <value>');
        out[textOf(childrenOf(nameNode, 'name'), 'name')] = decodeValue(
          childrenOf(valueNode, 'value'),
          depth + 1,
        );
      }
      return out;
    }
    default:
      throw new XmlRpcError(`unknown type <${tag}>`);
  }
}

/** Parses a `methodCall`. Throws XmlRpcError with a short reason when the body is not one. */
export function decodeCall(body: Buffer | string): MethodCall {
  const xml = typeof body === 'string' ? body : body.toString('utf8');
  if (xml.trim() === '') throw new XmlRpcError('an empty body');
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new XmlRpcError('a DTD is not allowed');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    const { line, col } = valid.err;
    throw new XmlRpcError(`malformed XML at line ${line}${col === undefined ? '' : `, column ${col}`}`);
  }
  let doc: Node[];
  try {
    doc = parser.parse(xml) as Node[];
  } catch (err) {
    if (/nested/i.test((err as Error).message))
      throw new XmlRpcError(`values nested deeper than ${MAX_DEPTH} levels`);
    throw new XmlRpcError('malformed XML');
  }
  const call = only(doc, 'methodCall', 'document');
  const parts = elements(childrenOf(call, 'methodCall'), 'methodCall');
  const nameNode = parts.find((p) => tagOf(p) === 'methodName');
  if (!nameNode) throw new XmlRpcError('no <methodName>');
  const methodName = textOf(childrenOf(nameNode, 'methodName'), 'methodName').trim();
  const paramsNode = parts.find((p) => tagOf(p) === 'params');
  if (parts.some((p) => tagOf(p) !== 'methodName' && tagOf(p) !== 'params'))
    throw new XmlRpcError('<methodCall> holds only <methodName> and <params>');
  const params = paramsNode
    ? elements(childrenOf(paramsNode, 'params'), 'params').map((p) => {
        if (tagOf(p) !== 'param') throw new XmlRpcError('<params> holds only <param>s');
        const value = only(childrenOf(p, 'param'), 'value', 'param');
        return decodeValue(childrenOf(value, 'value'), 1);
      })
    : [];
  return { methodName, params };
}

/**
 * Text as XML character data. XML 1.0 cannot carry most control characters at all (not even as
 * references): they become U+FFFD. `\r` is written as a reference, or the reader's parser would turn
 * `\r\n` into `\n`.
 */
function escapeText(s: string): string {
  return s
    .replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#13;'))
    .replace(
      // eslint-disable-next-line no-control-regex -- these control characters are exactly what XML forbids
      /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
      '\uFFFD',
    );
}

/** A JSON answer as an XML-RPC value: integers `int`, other numbers `double`, null `nil`. */
function encodeValue(v: unknown): string {
  if (v === null || v === undefined) return '<value><nil/></value>';
  switch (typeof v) {
    case 'boolean':
      return `<value><boolean>${v ? 1 : 0}</boolean></value>`;
    case 'number':
      if (Number.isInteger(v)) return `<value><int>${v}</int></value>`;
      // NaN and ±Infinity have no XML-RPC form; JSON would write null for them too.
      return Number.isFinite(v) ? `<value><double>${v}</double></value>` : '<value><nil/></value>';
    case 'string':
      return `<value><string>${escapeText(v)}</string></value>`;
    case 'object': {
      if (Array.isArray(v))
        return `<value><array><data>${v.map(encodeValue).join('')}</data></array></value>`;
      const members = Object.entries(v as Record<string, unknown>)
        .filter(([, m]) => m !== undefined)
        .map(([k, m]) => `<member><name>${escapeText(k)}</name>${encodeValue(m)}</member>`);
      return `<value><struct>${members.join('')}</struct></value>`;
    }
    default:
      return `<value><string>${escapeText(String(v))}</string></value>`;
  }
}

const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** A successful answer: the value the JSON API would answer, as the one param of a methodResponse. */
export function encodeResponse(value: unknown): string {
  // JSON-shaped first, as the REST answer is: toJSON() and the like apply the same way.
  const plain: unknown = value === undefined ? null : JSON.parse(JSON.stringify(value));
  return `${HEAD}<methodResponse><params><param>${encodeValue(plain)}</param></params></methodResponse>\n`;
}

/** A failure: faultCode = the API's error code, faultString = its message. */
export function encodeFault(code: number, message: string): string {
  return (
    `${HEAD}<methodResponse><fault><value><struct>` +
    `<member><name>faultCode</name><value><int>${code}</int></value></member>` +
    `<member><name>faultString</name><value><string>${escapeText(message)}</string></value></member>` +
    `</struct></value></fault></methodResponse>\n`
  );
}
