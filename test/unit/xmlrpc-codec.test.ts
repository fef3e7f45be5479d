import { Writable } from 'node:stream';
import type { Server } from 'node:http';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { createApp } from '../../query-api/app.js';
import type { Operation } from '../../query-api/api12/operation.js';
import { XmlRpcError, decodeCall, encodeFault, encodeResponse } from '../../query-api/xmlrpc/codec.js';

/** The XML-RPC codec of docs/api.md "XML-RPC": every value type in, every JSON shape out, and what it refuses. */

const call = (params: string, method = 'automation.stats') =>
  `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${params}</params></methodCall>`;
const param = (value: string) => `<param><value>${value}</value></param>`;
const one = (value: string) => decodeCall(call(param(value))).params[0];

function refused(xml: string): string {
  try {
    decodeCall(xml);
  } catch (err) {
    expect(err).toBeInstanceOf(XmlRpcError);
    return (err as Error).message;
  }
  throw new Error('expected the call to be refused');
}

describe('decodeCall: values', () => {
  it('reads the method name and positional params in order', () => {
    expect(decodeCall(call(param('<int>101</int>') + param('<boolean>0</boolean>')))).toEqual({
      methodName: 'automation.stats',
      params: [101, false],
    });
    expect(decodeCall('<methodCall><methodName>list.all</methodName></methodCall>')).toEqual({
      methodName: 'list.all',
      params: [],
    });
  });
  it('int, i4, i8 (signs allowed); one beyond 2^53 stays its digits', () => {
    expect(one('<int>42</int>')).toBe(42);
    expect(one('<i4>-7</i4>')).toBe(-7);
    expect(one('<i8>+9007199254740991</i8>')).toBe(9007199254740991);
    expect(one('<i8>9007199254740993</i8>')).toBe('9007199254740993');
  });
  it('strings stay strings exactly: leading zeros, numbers, whitespace, entities, character references', () => {
    expect(one('<string>007</string>')).toBe('007');
    expect(one('<string>1e3</string>')).toBe('1e3');
    expect(one('<string>  two  spaces </string>')).toBe('  two  spaces ');
    expect(one('<string>a &amp; b &lt;c&gt; &quot;&apos; &#13;&#x41;&#8364;</string>')).toBe(
      'a & b <c> "\' \rA€',
    );
    expect(one('<string>&amp;#65;</string>')).toBe('&#65;'); // decoded once, not twice
    expect(one('<string><![CDATA[<b>&amp;</b>]]></string>')).toBe('<b>&amp;</b>');
    expect(one('<string></string>')).toBe('');
    expect(one('untyped 0042')).toBe('untyped 0042');
    expect(one('')).toBe('');
  });
  it('double, boolean, nil (also ex:nil), base64, dateTime.iso8601', () => {
    expect(one('<double>-1.5e2</double>')).toBe(-150);
    expect(one('<boolean>1</boolean>')).toBe(true);
    expect(one('<nil/>')).toBeNull();
    expect(one('<ex:nil/>')).toBeNull();
    expect(one(`<base64>${Buffer.from('Ștefan').toString('base64')}</base64>`)).toBe('Ștefan');
    expect(one('<dateTime.iso8601>20251020T23:30:00</dateTime.iso8601>')).toBe('2025-10-20 23:30:00');
  });
  it('arrays and structs, nested, with whitespace between elements', () => {
    const v = one(`<struct>
        <member><name>items</name><value><array><data>
          <value><string>a</string></value>
          <value><int>2</int></value>
        </data></array></value></member>
        <member><name>customer</name><value><struct><member><name>name</name><value>Ana</value></member></struct></value></member>
      </struct>`);
    expect(JSON.parse(JSON.stringify(v))).toEqual({ items: ['a', 2], customer: { name: 'Ana' } });
  });
  it('a struct member named __proto__ is plain data', () => {
    const v = one(
      '<struct><member><name>__proto__</name><value><struct><member><name>x</name><value>1</value></member></struct></value></member></struct>',
    ) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(({} as any).x).toBeUndefined();
  });
});

describe('decodeCall: what it refuses (→ fault 406)', () => {
  it.each([
    ['truncated', '<methodCall><methodName>x</methodName><params>'],
    ['not XML', 'list_id=1'],
    ['empty', ''],
    ['another root', '<methodResponse/>'],
    ['no method name', '<methodCall><params/></methodCall>'],
    ['an unknown type', call(param('<float>1</float>'))],
    ['an int that is not one', call(param('<int>1.5</int>'))],
    ['a boolean that is not 0/1', call(param('<boolean>true</boolean>'))],
    ['a double that is not one', call(param('<double>abc</double>'))],
    ['two types in a value', call(param('<int>1</int><int>2</int>'))],
    ['text beside a type', call(param('x<int>1</int>'))],
    ['a member without a value', call(param('<struct><member><name>a</name></member></struct>'))],
    ['an unknown entity', call(param('<string>&nbsp;</string>'))],
    ['a bare ampersand', call(param('<string>a & b</string>'))],
  ])('%s', (_name, xml) => {
    expect(refused(xml).length).toBeGreaterThan(0);
  });
  it('any DTD, so no entity expansion and no external entities', () => {
    const billion =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]>' +
      '<methodCall><methodName>&lol2;</methodName></methodCall>';
    expect(refused(billion)).toMatch(/DTD/);
    const external =
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><methodCall><methodName>&xxe;</methodName></methodCall>';
    expect(refused(external)).toMatch(/DTD/);
  });
  it('values nested deeper than 32 levels; 30 are fine', () => {
    const nest = (n: number) =>
      '<array><data><value>'.repeat(n) + '<int>1</int>' + '</value></data></array>'.repeat(n);
    let v = one(nest(30));
    for (let i = 0; i < 30; i++) v = (v as unknown[])[0];
    expect(v).toBe(1);
    expect(refused(call(param(nest(40))))).toMatch(/deeper/);
  });
  it('a deeply nested 1 MiB body is refused, not a crash', () => {
    const deep = '<methodCall>' + '<a>'.repeat(300_000);
    expect(refused(deep).length).toBeGreaterThan(0);
    const closed =
      '<methodCall><methodName>x</methodName><params><param><value>' +
      '<a>'.repeat(100_000) +
      '</a>'.repeat(100_000) +
      '</value></param></params></methodCall>';
    expect(refused(closed).length).toBeGreaterThan(0);
  });
});

/** Reads an encoded answer back with an independent parse, for structure checks. */
const reparse = (xml: string) => new XMLParser({ parseTagValue: false, trimValues: false }).parse(xml);

describe('encodeResponse / encodeFault', () => {
  it('ints as <int>, other numbers as <double>, null as <nil/>, strings escaped, arrays and structs', () => {
    const xml = encodeResponse([{ n: 3, x: 52.38, s: 'a<b & "c"', z: null, ok: true, list: [1, 'two'] }]);
    expect(xml).toContain('<member><name>n</name><value><int>3</int></value></member>');
    expect(xml).toContain('<member><name>x</name><value><double>52.38</double></value></member>');
    expect(xml).toContain('<member><name>s</name><value><string>a&lt;b &amp; "c"</string></value></member>');
    expect(xml).toContain('<member><name>z</name><value><nil/></value></member>');
    expect(xml).toContain('<value><boolean>1</boolean></value>');
    expect(xml).toContain(
      '<value><array><data><value><int>1</int></value><value><string>two</string></value></data></array></value>',
    );
    expect(reparse(xml).methodResponse.params.param.value.array.data.value.struct.member).toHaveLength(6);
  });
  it('\\r survives as a reference; characters XML 1.0 cannot carry become U+FFFD', () => {
    const xml = encodeResponse('a\r\nb\u0001c\ud800');
    expect(xml).toContain('<string>a&#13;\nb\uFFFDc\uFFFD</string>');
  });
  it('the answer is what JSON would carry (toJSON applied, undefined members left out)', () => {
    const xml = encodeResponse({ when: new Date('2025-10-20T00:00:00Z'), gone: undefined });
    expect(xml).toContain('<string>2025-10-20T00:00:00.000Z</string>');
    expect(xml).not.toContain('gone');
  });
  it('a fault carries faultCode and faultString', () => {
    const xml = encodeFault(406, 'Invalid param body: <x> & y');
    expect(xml).toContain('<string>Invalid param body: &lt;x&gt; &amp; y</string>');
    expect(reparse(xml).methodResponse.fault.value.struct.member).toEqual([
      { name: 'faultCode', value: { int: '406' } },
      { name: 'faultString', value: { string: 'Invalid param body: <x> & y' } },
    ]);
  });
});

describe('the XML-RPC path never puts the api key in a log line', () => {
  it('request lines and errors of XML-RPC calls hold no key', async () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const operations: Record<string, Operation> = {
      'list.all': async () => [{ list_id: '1' }],
      'automation.stats': async () => {
        throw new Error('boom');
      },
    };
    const app = createApp({ log, operations, ingest: undefined });
    const server: Server = await new Promise((ok) => {
      const s = app.listen(0, '127.0.0.1', () => ok(s));
    });
    try {
      const port = (server.address() as { port: number }).port;
      const post = (path: string, body: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'text/xml' },
        });
      const ok = await post(
        '/api/1.2/xmlrpc/7/secret-key-123',
        '<methodCall><methodName>list.all</methodName></methodCall>',
      );
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('<string>1</string>');
      const boom = await post(
        '/api/1.2/xmlrpc/7/secret-key-123',
        '<methodCall><methodName>automation.stats</methodName></methodCall>',
      );
      expect(boom.status).toBe(200);
      expect(await boom.text()).toMatch(/<int>500<\/int>.*Internal error \(request [0-9a-f-]+\)/s);
      await post('/API/1.2/XMLRPC/7/secret-key-123', 'not xml');
    } finally {
      await new Promise((ok) => server.close(ok));
    }
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) expect(line).not.toContain('secret-key-123');
  });
});
