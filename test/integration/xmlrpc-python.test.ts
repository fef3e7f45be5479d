// Modes: embedded only — the Python XML-RPC client at the HTTP edge, independent of the store
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256, startTestService, type TestService } from '../support/service.js';

/**
 * XML-RPC (docs/api.md "XML-RPC") with the platform's official Python client as it is written: Python's
 * standard `xmlrpc.client.ServerProxy(url, allow_none=True)`, run as a real python3 process against
 * the real service. Its answers must equal the JSON API's for the same calls, and failures must be
 * `xmlrpc.client.Fault`s carrying the API's error codes.
 *
 * Data: list 101 (Bucharest, RON): sends at 10:00 UTC on 2025-10-20 (wf1001 subs 1,2; wf1002 sub 3) and
 * 2025-11-05 (wf1001 sub 4); one purchase of 199.90 RON / 40.18 EUR on 2025-10-20 (so the answer
 * carries doubles); a template with props; list 102 (New York, EUR).
 */
const USER = 7;
const KEY = 'python-client-key';
const run = promisify(execFile);

const send = (day: string, workflow: number, sub: number) => ({
  type: 'send',
  event_id: `py-${day}-${workflow}-${sub}`,
  list_id: 101,
  workflow_id: workflow,
  subscriber_id: sub,
  timestamp: `${day}T10:00:00Z`,
});

/**
 * The Python side: each call of CALLS is made through ServerProxy; its result (or its Fault as
 * {"fault": code, "message": string}) is printed as JSON. `raw` posts bytes with urllib and reads
 * the answer with xmlrpc.client's own parser, for bodies ServerProxy cannot produce.
 */
const PYTHON = String.raw`
import datetime, json, sys, urllib.request, xmlrpc.client
base = sys.argv[1]
def proxy(user, key):
    return xmlrpc.client.ServerProxy(f"{base}/api/1.2/xmlrpc/{user}/{key}", allow_none=True)
def outcome(fn):
    try:
        return {"ok": fn()}
    except xmlrpc.client.Fault as f:
        return {"fault": f.faultCode, "message": f.faultString}
def raw(body):
    req = urllib.request.Request(f"${'{'}base${'}'}/api/1.2/xmlrpc/${USER}/${KEY}", data=body.encode(), headers={"Content-Type": "text/xml"})
    with urllib.request.urlopen(req) as res:
        status, text = res.status, res.read().decode()
    try:
        xmlrpc.client.loads(text)
        return {"status": status, "ok": True}
    except xmlrpc.client.Fault as f:
        return {"status": status, "fault": f.faultCode, "message": f.faultString}
p = proxy(${USER}, "${KEY}")
params = {"customer": {"name": "Ana & <Ion>"}, "items": ["a", "b"], "note": None}
calls = {
    "stats": lambda: p.automation.stats(101, False, False, "2025-10-20", "2025-11-05"),
    "stats_wf": lambda: p.automation.stats(101, [1001], None, "2025-10-20", "2025-11-05"),
    "stats_datetime": lambda: p.automation.stats(101, False, False, datetime.datetime(2025, 10, 20, 23, 0), datetime.datetime(2025, 11, 5)),
    "render": lambda: p.transactional.templateRender(101, None, "order", "handlebars", params),
    "render_false": lambda: p.transactional.templateRender(101, False, "order", False, False),
    "lists": lambda: p.list.all(),
    "f101_key": lambda: proxy(${USER}, "wrong-key").automation.stats(101, False, False, "2025-10-20", "2025-11-05"),
    "f101_list": lambda: p.automation.stats(103),
    "f101_lists": lambda: proxy(999, "${KEY}").list.all(),
    "f407": lambda: p.automation.stats(),
    "f407_false": lambda: p.automation.stats(False, [1001]),
    "f407_template": lambda: p.transactional.templateRender(101, None, None),
    "f406_date": lambda: p.automation.stats(101, False, False, "2025-02-30"),
    "f406_days": lambda: p.automation.stats(101, False, False, False, False, 9999),
    "f404": lambda: p.automation.nope(101),
    "f17006": lambda: p.transactional.templateRender(101, None, "missing"),
}
out = {name: outcome(fn) for name, fn in calls.items()}
out["malformed"] = raw("<?xml version='1.0'?><methodCall><methodName>automation.stats</methodName><params>")
out["not_a_call"] = raw("<methodResponse/>")
out["dtd"] = raw('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><methodCall><methodName>&a;</methodName></methodCall>')
out["big"] = raw("<methodCall><methodName>list.all</methodName><params><param><value><string>" + "x" * (1024 * 1024) + "</string></value></param></params></methodCall>")
print(json.dumps(out))
`;

let svc: TestService;
let py: Record<string, any>;

const rest = async (op: string, params: Record<string, unknown>) => {
  const res = await svc.call(`/api/1.2/rest/${USER}/${KEY}/${op}.json`, {
    method: 'POST',
    body: JSON.stringify(params),
    contentType: 'application/json',
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.ingest([
    { type: 'user', user_id: USER, api_key_sha256: sha256(KEY) },
    { type: 'list', list_id: 101, name: 'Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
    { type: 'list', list_id: 102, name: 'Outlet', timezone: 'America/New_York', currency: 'EUR' },
    { type: 'list', list_id: 103, name: 'Not granted' },
    { type: 'list_access', user_id: USER, list_id: 101, granted: true },
    { type: 'list_access', user_id: USER, list_id: 102, granted: true },
    { type: 'workflow', workflow_id: 1001, list_id: 101, name: 'welcome' },
    { type: 'workflow', workflow_id: 1002, list_id: 101, name: 'cart' },
    { type: 'smtp_account', account_id: 'acc-1', list_id: 101, active: true, is_default: true },
    {
      type: 'template',
      template_id: 'order',
      account_id: 'acc-1',
      content: '<p>Hi {{customer.name}}:{{#each items}} [{{this}}]{{/each}}</p>\r\n',
      props: { subject: 'Order for {{customer.name}}', priority: 2, ratio: 0.5, tags: ['x'], empty: null },
    },
    send('2025-10-20', 1001, 1),
    send('2025-10-20', 1001, 2),
    send('2025-10-20', 1002, 3),
    send('2025-11-05', 1001, 4),
    {
      type: 'purchase',
      event_id: 'py-purchase-1',
      list_id: 101,
      workflow_id: 1001,
      subscriber_id: 1,
      timestamp: '2025-10-20T11:00:00Z',
      sent_at: '2025-10-20T10:00:00Z',
      order_id: 'o-1',
      value_ron: '199.90',
      value_eur: '40.18',
    },
  ]);
  expect(res.status).toBe(200);
  expect(res.body.rejected).toEqual([]);
  const { stdout } = await run('python3', ['-c', PYTHON, svc.url!], { maxBuffer: 16 * 1024 * 1024 });
  py = JSON.parse(stdout);
}, 180_000);

afterAll(() => svc?.stop());

const fault = (code: number, message: string | RegExp) =>
  typeof message === 'string'
    ? { fault: code, message }
    : { fault: code, message: expect.stringMatching(message) };

describe('Python xmlrpc.client against the XML-RPC endpoint', () => {
  it('automation.stats(101, False, False, "2025-10-20", "2025-11-05") equals the JSON answer', async () => {
    const json = await rest('automation.stats', {
      list_id: 101,
      start_date: '2025-10-20',
      stop_date: '2025-11-05',
    });
    expect(json.map((r: any) => [r.date, r.sends_total, r.purchases_value_ron])).toEqual([
      ['2025-10-20', 3, 199.9],
      ['2025-11-05', 1, 0],
    ]);
    expect(py.stats).toEqual({ ok: json });
  });
  it('a workflow list and None, and Python datetimes (dateTime.iso8601), by the date as written', async () => {
    const wf = await rest('automation.stats', {
      list_id: 101,
      workflow_ids: [1001],
      start_date: '2025-10-20',
      stop_date: '2025-11-05',
    });
    expect(wf.map((r: any) => r.sends_total)).toEqual([2, 1]);
    expect(py.stats_wf).toEqual({ ok: wf });
    expect(py.stats_datetime).toEqual(py.stats);
  });
  it('transactional.templateRender with a dict of params: strings escaped and \\r kept, props with int/double/nil', async () => {
    const json = await rest('transactional.templateRender', {
      list_id: 101,
      template_id: 'order',
      template_engine: 'handlebars',
      params: { customer: { name: 'Ana & <Ion>' }, items: ['a', 'b'], note: null },
    });
    expect(json.content).toBe('<p>Hi Ana &amp; &lt;Ion&gt;: [a] [b]</p>\r\n');
    expect(json.props).toEqual({
      subject: 'Order for Ana & <Ion>',
      priority: 2,
      ratio: 0.5,
      tags: ['x'],
      empty: null,
    });
    expect(py.render).toEqual({ ok: json });
  });
  it('False for optional params means not given', async () => {
    const json = await rest('transactional.templateRender', { list_id: 101, template_id: 'order' });
    expect(py.render_false).toEqual({ ok: json });
  });
  it('list.all() equals the JSON answer', async () => {
    const json = await rest('list.all', {});
    expect(json).toEqual([
      { list_id: '101', list_name: 'Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
      { list_id: '102', list_name: 'Outlet', timezone: 'America/New_York', currency: 'EUR' },
    ]);
    expect(py.lists).toEqual({ ok: json });
  });
  it('faults carry the codes and messages of docs/api.md "Errors": 101', () => {
    // A wrong key is answered before the call (and its list_id) is read (docs/api.md "Errors").
    expect(py.f101_key).toEqual(fault(101, 'Not allowed for this user_id and api_key'));
    expect(py.f101_list).toEqual(fault(101, 'Not allowed for list_id = 103'));
    expect(py.f101_lists).toEqual(fault(101, 'Not allowed for this user_id and api_key'));
  });
  it('faults: 407 for a missing or False required param', () => {
    expect(py.f407).toEqual(fault(407, 'Missing required param list_id'));
    expect(py.f407_false).toEqual(fault(407, 'Missing required param list_id'));
    expect(py.f407_template).toEqual(fault(407, 'Missing required param template_id'));
  });
  it('faults: 406 for a malformed param, 404 for an unknown method, 17006 for a missing template', () => {
    expect(py.f406_date).toEqual(fault(406, /^Invalid param start_date: /));
    expect(py.f406_days).toEqual(fault(406, /^Invalid param days: /));
    expect(py.f404).toEqual(fault(404, 'Unknown API method automation.nope'));
    expect(py.f17006).toEqual(fault(17006, 'The template could not be fetched: template missing not found'));
  });
  it('a malformed XML body, a body that is not a methodCall and a DTD are fault 406, with HTTP 200', () => {
    for (const name of ['malformed', 'not_a_call', 'dtd']) {
      expect(py[name], name).toEqual({
        status: 200,
        ...fault(406, /^Invalid param body: not an XML-RPC methodCall: /),
      });
    }
    expect(py.dtd.message).toMatch(/DTD/);
  });
  it('a body over 1 MiB is fault 413', () => {
    expect(py.big).toEqual({ status: 200, ...fault(413, 'Request too large') });
  });
});
