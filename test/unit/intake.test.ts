import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors.js';
import {
  FORM_LIMITS,
  namedParams,
  parseBody,
  parseForm,
  parseQuery,
  phpFalsy,
} from '../../query-api/api12/intake.js';

/**
 * The parameter intake of docs/api.md "Parameters": every shape the platform's clients send (query string, JSON
 * body under any header, form fields nested as http_build_query writes them, multipart, positional
 * params), the precedence between them, the limits, and PHP's false values.
 */

/** What a client would see of the ApiError that `p` rejects with (or fn throws). */
async function rejection(p: Promise<unknown> | (() => unknown)) {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, status: err.status, message: err.message };
    throw err;
  }
  throw new Error('expected an ApiError, got a value');
}

async function expectInvalidBody(p: Promise<unknown> | (() => unknown), name = 'body'): Promise<string> {
  const e = await rejection(p);
  expect(e.code).toBe(406);
  expect(e.status).toBe(400);
  expect(e.message).toMatch(new RegExp(`^Invalid param ${name}: .+`));
  return e.message;
}

const buf = (s: string) => Buffer.from(s, 'utf8');
const FORM = 'application/x-www-form-urlencoded';
/** Plain objects, for toEqual against the intake's null-prototype ones. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

/** A multipart body as PHP's curl writes it. */
function multipart(fields: [string, string][], boundary = '------------------------4ebf00fbcf09') {
  const parts = fields.map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return {
    body: buf(`${parts.join('')}--${boundary}--\r\n`),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

describe('parseForm: query strings and form bodies as PHP clients send them', () => {
  it('reads plain fields as strings, decoding + and percent escapes', () => {
    const p = parseForm('list_id=5&start_date=2026-11-02+10%3A15%3A00&days=7');
    expect({ ...p }).toEqual({ list_id: '5', start_date: '2026-11-02 10:15:00', days: '7' });
  });
  it('collects repeated `name[]` fields into a list, in order', () => {
    expect({ ...parseForm('workflow_ids[]=3&workflow_ids[]=1&workflow_ids[]=2') }).toEqual({
      workflow_ids: ['3', '1', '2'],
    });
  });
  it('collects percent-encoded brackets and indexed fields `name[0]` too', () => {
    expect(parseForm('workflow_ids%5B%5D=1&workflow_ids%5B%5D=2').workflow_ids).toEqual(['1', '2']);
    expect(parseForm('workflow_ids[0]=7&workflow_ids[1]=8').workflow_ids).toEqual(['7', '8']);
  });
  it('a single `name[]` field is still a list', () => {
    expect(parseForm('workflow_ids[]=9').workflow_ids).toEqual(['9']);
  });
  it('reads `p[key]=value` as an object', () => {
    expect({ ...(parseForm('params[name]=Ann&params[city]=Cluj').params as object) }).toEqual({
      name: 'Ann',
      city: 'Cluj',
    });
  });
  it('keeps a PHP JSON-encoded array as the string it is (decoded later by the id list)', () => {
    expect(parseForm('workflow_ids=%5B1%2C2%5D').workflow_ids).toBe('[1,2]');
  });
  it('an empty string is no params', () => {
    expect(Object.keys(parseForm(''))).toEqual([]);
  });
});

describe('parseForm: nesting and limits (qs)', () => {
  it('nests fields as http_build_query writes them, encoded brackets too', () => {
    const p = parseForm(
      'params%5Bitems%5D%5B0%5D=a&params%5Bitems%5D%5B1%5D=b&params%5Bcustomer%5D%5Bname%5D=Ana',
    );
    expect(plain(p)).toEqual({ params: { items: ['a', 'b'], customer: { name: 'Ana' } } });
  });
  it('a field repeated without brackets: the last one, as PHP reads it', () => {
    expect(plain(parseForm('list_id=1&list_id=2'))).toEqual({ list_id: '2' });
  });
  it('20 levels of nesting are read; 21 are a 406 naming the source', async () => {
    const key = (n: number) => 'params' + Array.from({ length: n }, (_, i) => `[k${i}]`).join('');
    let p: any = parseForm(`${key(20)}=deep`).params;
    for (let i = 0; i < 20; i++) p = p[`k${i}`];
    expect(p).toBe('deep');
    expect(await expectInvalidBody(() => parseForm(`${key(21)}=deep`, 'body'))).toMatch(/deeper than 20/);
    await expectInvalidBody(() => parseForm(`${key(21)}=deep`, 'query'), 'query');
  });
  it('1,001 repeated workflow_ids[] stay a list (the id check, not the parser, refuses 1,001)', () => {
    const text = Array.from({ length: 1001 }, (_, i) => `workflow_ids[]=${i + 1}`).join('&');
    const ids = parseForm(text).workflow_ids as string[];
    expect(ids).toHaveLength(1001);
    expect(ids[1000]).toBe('1001');
  });
  it('more fields than the limit → 406, never a silent truncation', async () => {
    const many = Array.from({ length: FORM_LIMITS.parameterLimit + 1 }, (_, i) => `f${i}=1`).join('&');
    expect(await expectInvalidBody(() => parseForm(many))).toMatch(/more than 20000 fields/);
    const list = Array.from({ length: FORM_LIMITS.arrayLimit + 1 }, () => 'a[]=1').join('&');
    expect(await expectInvalidBody(() => parseForm(list))).toMatch(/more than 10000 items/);
  });
  it('__proto__ and constructor keys do not reach an object prototype', () => {
    const p = parseForm('__proto__[polluted]=1&params[__proto__][x]=1&constructor[prototype][y]=2');
    expect(({} as any).polluted).toBeUndefined();
    expect(({} as any).y).toBeUndefined();
    expect(Object.getPrototypeOf(p)).toBeNull();
  });
});

describe('parseQuery: query strings read again are not parsed again', () => {
  it('reads what parseForm reads, flat and nested', () => {
    for (const text of [
      'list_id=5&days=30',
      'a=1&a=2&b=%C8%99+x',
      'workflow_ids[]=1&workflow_ids[]=2',
      'p[k][j]=v',
    ])
      expect(parseQuery(text)).toEqual(parseForm(text, 'query'));
  });
  it('a flat query read again is the same frozen object; a nested one is read anew each time', () => {
    const flat = parseQuery('list_id=7&days=3');
    expect(parseQuery('list_id=7&days=3')).toBe(flat);
    expect(Object.isFrozen(flat)).toBe(true);
    const nested = parseQuery('workflow_ids[]=1&workflow_ids[]=2');
    (nested.workflow_ids as string[]).push('3');
    expect(parseQuery('workflow_ids[]=1&workflow_ids[]=2')).toEqual({ workflow_ids: ['1', '2'] });
  });
  it('a query over a limit is refused every time, naming the query', async () => {
    const deep = `a${'[x]'.repeat(FORM_LIMITS.depth + 1)}=1`;
    for (let i = 0; i < 2; i++) await expectInvalidBody(() => parseQuery(deep), 'query');
  });
});

describe('parseBody: a body is read by what it is', () => {
  it('no body, an empty body and a blank body are no params', async () => {
    expect(await parseBody(undefined, undefined)).toEqual({});
    expect(await parseBody(buf(''), 'application/json')).toEqual({});
    expect(await parseBody(buf('  \n '), 'application/json')).toEqual({});
  });
  it('reads a JSON object, keeping the JSON types', async () => {
    expect(await parseBody(buf('{"list_id":5,"workflow_ids":[1,2],"days":"7"}'), 'application/json')).toEqual(
      {
        list_id: 5,
        workflow_ids: [1, 2],
        days: '7',
      },
    );
  });
  it('a JSON object is JSON whatever the header: none, text/plain, form-urlencoded (the PHP client), multipart', async () => {
    const wire = '{"__0__":101,"__1__":[1001],"__2__":false,"__3__":"2025-10-20","__4__":"2025-11-05"}';
    const expected = { __0__: 101, __1__: [1001], __2__: false, __3__: '2025-10-20', __4__: '2025-11-05' };
    for (const type of [
      undefined,
      'text/plain',
      FORM,
      `${FORM}; charset=UTF-8`,
      'multipart/form-data; boundary=x',
    ])
      expect(await parseBody(buf(wire), type)).toEqual(expected);
  });
  it('`[]` (PHP json_encode of no arguments) is no params; another JSON array is positional params', async () => {
    expect(await parseBody(buf('[]'), FORM)).toEqual([]);
    expect(await parseBody(buf('[101, false, "x"]'), 'application/json')).toEqual([101, false, 'x']);
  });
  it('reads a form-urlencoded body, with or without a charset', async () => {
    expect(plain(await parseBody(buf('list_id=5&workflow_ids[]=1&workflow_ids[]=2'), FORM))).toEqual({
      list_id: '5',
      workflow_ids: ['1', '2'],
    });
    expect(plain(await parseBody(buf('list_id=6'), `${FORM}; charset=UTF-8`))).toEqual({ list_id: '6' });
  });
  it('reads form fields sent without a content type', async () => {
    expect(plain(await parseBody(buf('list_id=5&days=3'), undefined))).toEqual({ list_id: '5', days: '3' });
  });
  it('a form body labelled JSON (the WordPress plugin, the Magento 2 module) is read as a form body (issue 32)', async () => {
    // http_build_query of ['list_id' => 1, 'workflow_ids' => [3, 4], 'start_date' => '2025-10-20'].
    const wire = 'list_id=1&workflow_ids%5B0%5D=3&workflow_ids%5B1%5D=4&start_date=2025-10-20';
    for (const type of ['application/json', 'application/json; charset=utf-8', 'text/json'])
      expect(plain(await parseBody(buf(wire), type))).toEqual({
        list_id: '1',
        workflow_ids: ['3', '4'],
        start_date: '2025-10-20',
      });
    expect(
      plain(await parseBody(buf('params%5Bcustomer%5D%5Bname%5D=Ana+Maria&x='), 'application/json')),
    ).toEqual({
      params: { customer: { name: 'Ana Maria' } },
      x: '',
    });
    expect(plain(await parseBody(buf('list_id=5'), 'application/json'))).toEqual({ list_id: '5' });
  });
  it('a body labelled JSON that is neither JSON nor a well-formed form body → 406', async () => {
    for (const body of [
      'list_id = 5', // spaces: no form encoder writes them
      'list_id=5&days', // a field without =
      '=5', // no name
      'list_id=5&&days=3', // an empty field
      'list_id=%zz', // a broken %-escape
      'list_id=5\ndays=3', // a control character (lines)
      'list_id="5"', // a quote: an encoder escapes it
      'hello',
    ])
      await expectInvalidBody(parseBody(buf(body), 'application/json'));
  });
  it('a body that is not JSON but meant as JSON → 406 naming the body', async () => {
    await expectInvalidBody(parseBody(buf('{"list_id": 5'), 'application/json'));
    await expectInvalidBody(parseBody(buf('[list_id]=5'), 'application/json'));
    await expectInvalidBody(parseBody(buf('{"__0__": 101'), FORM)); // a truncated PHP client body
    await expectInvalidBody(parseBody(buf('hello'), undefined));
  });
  it('JSON that is neither an object nor an array → 406', async () => {
    await expectInvalidBody(parseBody(buf('"list_id"'), 'application/json'));
    await expectInvalidBody(parseBody(buf('null'), 'application/json'));
    await expectInvalidBody(parseBody(buf('5'), undefined));
  });
});

describe('parseBody: multipart/form-data (the 2019 PHP client, busboy)', () => {
  it('reads every field as text, JSON-encoded values kept as the strings they are', async () => {
    const { body, type } = multipart([
      ['__0__', '101'],
      ['__1__', '[1001]'],
      ['__2__', 'false'],
      ['__3__', '2025-10-20T00:00:00+0000'],
    ]);
    expect(plain(await parseBody(body, type))).toEqual({
      __0__: '101',
      __1__: '[1001]',
      __2__: 'false',
      __3__: '2025-10-20T00:00:00+0000',
    });
  });
  it('nests bracketed field names like a form body, and keeps UTF-8 names and values', async () => {
    const { body, type } = multipart([
      ['workflow_ids[]', '1'],
      ['workflow_ids[]', '2'],
      ['params[client][nume]', 'Ștefan „Ș”'],
    ]);
    expect(plain(await parseBody(body, type))).toEqual({
      workflow_ids: ['1', '2'],
      params: { client: { nume: 'Ștefan „Ș”' } },
    });
  });
  it('a value with CRLFs and boundary-like text inside stays whole', async () => {
    const { body, type } = multipart([['__4__', '{"a":"line1\\r\\nline2 --x"}']]);
    expect(plain(await parseBody(body, type))).toEqual({ __4__: '{"a":"line1\\r\\nline2 --x"}' });
  });
  it('a truncated body, a missing boundary and a file upload → 406 naming the body', async () => {
    const { body, type } = multipart([['__0__', '101']]);
    await expectInvalidBody(parseBody(body.subarray(0, body.length - 10), type));
    await expectInvalidBody(parseBody(body, 'multipart/form-data'));
    const file = buf(
      '--b\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--\r\n',
    );
    expect(await expectInvalidBody(parseBody(file, 'multipart/form-data; boundary=b'))).toMatch(/file/);
  });
  it('more than 20 levels of nesting in a field name → 406', async () => {
    const name = 'params' + '[k]'.repeat(21);
    const { body, type } = multipart([[name, 'x']]);
    expect(await expectInvalidBody(parseBody(body, type))).toMatch(/deeper than 20/);
  });
});

describe('phpFalsy: the values PHP treats as false (docs/api.md "Parameters")', () => {
  it.each([
    [undefined],
    [null],
    [false],
    [0],
    [-0],
    [''],
    ['0'],
    ['false'],
    [[]],
    [{}],
    [Object.create(null)],
  ])('%j is false', (v) => {
    expect(phpFalsy(v)).toBe(true);
  });
  it.each([[true], [1], ['1'], ['00'], [' '], ['0.0'], ['true'], [[0]], [{ a: 0 }], [0.5]])(
    '%j is not',
    (v) => {
      expect(phpFalsy(v)).toBe(false);
    },
  );
});

describe('namedParams: positions, names and sources', () => {
  const STATS = 'automation.stats';
  const RENDER = 'transactional.templateRender';

  it('positions follow each operation’s parameter table', () => {
    expect(
      plain(
        namedParams(STATS, [
          { __0__: 101, __1__: [1001], __2__: 55, __3__: 'a', __4__: 'b', __5__: 7, __6__: 11 },
        ]),
      ),
    ).toEqual({
      list_id: 101,
      workflow_ids: [1001],
      trigger_id: 55,
      start_date: 'a',
      stop_date: 'b',
      days: 7,
      month: 11,
    });
    expect(plain(namedParams(RENDER, [[101, 'acc', 'tpl', 'handlebars', { x: 1 }]]))).toEqual({
      list_id: 101,
      account_id: 'acc',
      template_id: 'tpl',
      template_engine: 'handlebars',
      params: { x: 1 },
    });
  });
  it('a name wins over its position in the same source', () => {
    expect(plain(namedParams(STATS, [{ __0__: 103, list_id: 101, __5__: 9 }]))).toEqual({
      list_id: 101,
      days: 9,
    });
    expect(plain(namedParams(STATS, [{ list_id: 101, __0__: 103 }]))).toEqual({ list_id: 101 });
  });
  it('the body wins over the query string, by name or by position', () => {
    expect(plain(namedParams(STATS, [{ list_id: '1', days: '7' }, { list_id: 2 }]))).toEqual({
      list_id: 2,
      days: '7',
    });
    expect(plain(namedParams(STATS, [{ list_id: '1' }, { __0__: 2 }]))).toEqual({ list_id: 2 });
    expect(plain(namedParams(STATS, [{ __0__: '1', days: '7' }, { list_id: 2 }]))).toEqual({
      list_id: 2,
      days: '7',
    });
  });
  it('a false value in the body still wins over the query string, and means not given', () => {
    expect(plain(namedParams(STATS, [{ list_id: '1', days: '7' }, { days: '0' }]))).toEqual({ list_id: '1' });
  });
  it('PHP-false optional params are dropped; required ones are left to their own checks', () => {
    const falsy = [false, 0, '', '0', 'false', null, [], {}];
    for (const v of falsy) {
      const p = namedParams(STATS, [
        { list_id: v, workflow_ids: v, trigger_id: v, start_date: v, days: v, month: v },
      ]);
      expect(Object.keys(p)).toEqual(['list_id']);
      expect(p.list_id).toEqual(v);
      const r = namedParams(RENDER, [[101, v, v, v, v]]);
      expect(plain(r)).toEqual(plain({ list_id: 101, template_id: v }));
    }
  });
  it('unknown names are passed on; positions beyond the table and non-canonical ones are not params', () => {
    expect(plain(namedParams(STATS, [{ __0__: 1, __7__: 'x', __00__: 2, ___1__: 3, pad: 'y' }]))).toEqual({
      list_id: 1,
      __00__: 2,
      ___1__: 3,
      pad: 'y',
    });
    expect(plain(namedParams('list.all', [[1, 2]]))).toEqual({});
  });
  it('does not modify its sources', () => {
    const query = { list_id: '1', days: '0' };
    const body = { __0__: 2 };
    namedParams(STATS, [query, body]);
    expect(query).toEqual({ list_id: '1', days: '0' });
    expect(body).toEqual({ __0__: 2 });
  });
});
