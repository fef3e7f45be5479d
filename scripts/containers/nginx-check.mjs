// nginx in front of the compose stack's API (docs/deployment.md, "Behind a reverse proxy"): Debian's
// nginx with the server block of the docs as written, only its `listen` port changed to a free loopback
// port, run in the foreground with a configuration of its own (the machine's nginx is left alone). Then
// TRUST_PROXY as the docs set it, word for word: the client nginx names is the API's client (the request
// log's `client_ip`, the failed-attempt budget), where before it was the address nginx's connections
// arrive from.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../clickhouse-server.mjs';
import { docBlocks, fetchRetried, run, sh, until } from './lib.mjs';

/** Two clients of nginx, each on an address of its own (the loopback network is all of 127/8). */
const CLIENT_A = '127.0.0.2';
const CLIENT_B = '127.0.0.3';
/** An address client A writes into its own X-Forwarded-For: nginx appends A's; only that is believed. */
const FORGED = '198.51.100.23';

/** GET `url` from the local address `from`, with `headers`: { status, body }. */
function getFrom(url, from, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer within 60 s: ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * @param {object} o
 * @param {string} o.root the clone
 * @param {import('./lib.mjs').CheckRun} o.checks
 * @param {string} o.apiKey user 1's key (granted list 1, 33 sends on 2026-03-10)
 * @param {Record<string, string>} o.env the environment the compose commands run with
 * @param {(svc: string) => Promise<string[]>} o.healthy waits for a service's containers to be healthy
 */
export async function nginxCheck({ root, checks, apiKey, env, healthy }) {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-nginx-check-'));
  let nginx;
  let base;
  const statsPath = (key) =>
    `/api/1.2/rest/1/${key}/automation.stats.json?list_id=1&start_date=2026-03-10&stop_date=2026-03-10`;
  /** The API's `request` log line of the request with id `reqId` (the api container's stdout, JSON). */
  const requestLine = async (reqId) => {
    let found;
    await until(`the api's request line of ${reqId}`, 60_000, async () => {
      const ids = sh('docker-compose', ['ps', '-q', 'api'], { cwd: root, env, quiet: true })
        .split('\n')
        .filter(Boolean);
      for (const id of ids)
        for (const line of sh('podman', ['logs', id], { quiet: true }).split('\n')) {
          if (!line.includes(reqId) || !line.startsWith('{')) continue;
          const entry = JSON.parse(line);
          if (entry.msg === 'request' && entry.req_id === reqId) found = entry;
        }
      return found !== undefined;
    });
    return found;
  };
  let probes = 0;
  /**
   * A request of client A through nginx (with an X-Forwarded-For of its own making): the `client_ip` the
   * API logged for it. The assertion of this check: that address is A's.
   */
  const clientIpOfA = async () => {
    const reqId = `nginx-check-${process.pid}-${++probes}`;
    const r = await getFrom(`${base}${statsPath(apiKey)}`, CLIENT_A, {
      host: 'stats.example.com',
      'x-request-id': reqId,
      'x-forwarded-for': FORGED,
    });
    if (r.status !== 200) throw new Error(`automation.stats through nginx from ${CLIENT_A}: ${r.status}`);
    return (await requestLine(reqId)).client_ip;
  };
  const expectClientA = async () => {
    const ip = await clientIpOfA();
    if (ip !== CLIENT_A)
      throw new Error(`request through nginx from ${CLIENT_A}: the API logged client_ip ${ip}`);
    return ip;
  };

  try {
    const serving = await checks.step(
      'nginx: the docs server block in front of the API, requests answered through it',
      async () => {
        const [block] = docBlocks(join(root, 'docs/deployment.md'), 'nginx-server');
        if (!block) throw new Error('docs/deployment.md has no nginx-server block');
        if (!/^ {4}listen 80;$/m.test(block)) throw new Error('the server block has no `listen 80;` line');
        const port = await freePort();
        writeFileSync(
          join(dir, 'mailstats.conf'),
          block.replace(/^ {4}listen 80;$/m, `    listen 127.0.0.1:${port};`),
        );
        writeFileSync(
          join(dir, 'nginx.conf'),
          [
            `pid ${dir}/nginx.pid;`,
            `error_log ${dir}/error.log;`,
            'events {}',
            'http {',
            `  access_log ${dir}/access.log;`,
            `  client_body_temp_path ${dir}/body;`,
            `  proxy_temp_path ${dir}/proxy;`,
            `  include ${dir}/mailstats.conf;`,
            '}',
          ].join('\n'),
        );
        sh('nginx', ['-t', '-c', join(dir, 'nginx.conf')], { quiet: true });
        nginx = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'inherit' });
        base = `http://127.0.0.1:${port}`;
        await until('nginx answering', 30_000, async () => (await fetch(`${base}/healthz`)).status === 200);
        const r = await fetch(`${base}${statsPath(apiKey)}`, { headers: { host: 'stats.example.com' } });
        const body = await r.json();
        if (r.status !== 200 || !Array.isArray(body) || body.reduce((n, d) => n + d.sends_total, 0) !== 33)
          throw new Error(`automation.stats through nginx: ${r.status} ${JSON.stringify(body)}`);
        // A POST through it too: the ingest token is checked by the API behind it (a wrong one: 401).
        const post = await fetchRetried(`${base}/ingest`, {
          method: 'POST',
          headers: { authorization: 'Bearer not-the-token', 'content-type': 'application/json' },
          body: '[]',
        });
        if (post.status !== 401)
          throw new Error(`POST /ingest with a wrong token through nginx: ${post.status}`);
      },
    );

    await checks.step(
      'nginx: TRUST_PROXY (docs/deployment.md, word for word): the client nginx names is client_ip, with a failed-attempt budget of its own',
      async () => {
        if (!serving) throw new Error('not run: nginx did not serve the API');
        const [block] = docBlocks(join(root, 'docs/deployment.md'), 'nginx-trust-proxy');
        if (!block) throw new Error('docs/deployment.md has no nginx-trust-proxy block');
        // The control: as the stack came up (no TRUST_PROXY), the assertion below fails — the API logs
        // the address nginx's connections arrive from, whatever nginx forwards.
        const before = await clientIpOfA();
        if (typeof before !== 'string' || before === CLIENT_A)
          throw new Error(`without TRUST_PROXY the API logged client_ip ${before}: the check proves nothing`);
        console.log(
          `container-check: without TRUST_PROXY the API logs client_ip ${before} for ${CLIENT_A} (the assertion fails, as it must)`,
        );

        run(block, { cwd: root, env });
        await healthy('api');
        await until('the recreated api answering through nginx', 120_000, async () => {
          const r = await fetch(`${base}${statsPath(apiKey)}`, { headers: { host: 'stats.example.com' } });
          return r.status === 200;
        });
        // The client nginx saw, not what the client wrote into X-Forwarded-For itself.
        console.log(`container-check: with TRUST_PROXY: client_ip ${await expectClientA()}`);

        // The failed-attempt budget (RATE_LIMIT_PER_KEY above): client A spends its own with wrong keys
        // until it is refused; client B, through the same nginx, still has its whole budget.
        const wrong = (i) =>
          getFrom(`${base}${statsPath(`wrong-key-${i}`)}`, CLIENT_A, {
            host: 'stats.example.com',
            'x-request-id': `nginx-check-${process.pid}-wrong-${i}`,
          });
        let refused;
        for (let burst = 0; burst < 10 && !refused; burst++) {
          const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => wrong(burst * 60 + i)));
          const bad = answers.find((a) => a.status !== 403 && a.status !== 429);
          if (bad) throw new Error(`a wrong key through nginx: ${bad.status} ${bad.body}`);
          const i = answers.findIndex((a) => a.status === 429);
          if (i >= 0) refused = `nginx-check-${process.pid}-wrong-${burst * 60 + i}`;
        }
        if (!refused) throw new Error(`${CLIENT_A}: 600 wrong keys, never 429 (is RATE_LIMIT_PER_KEY set?)`);
        const line = await requestLine(refused);
        if (line.client_ip !== CLIENT_A || line.status !== 429)
          throw new Error(`the 429 was logged as ${JSON.stringify(line)}`);
        const b = await getFrom(`${base}${statsPath(apiKey)}`, CLIENT_B, { host: 'stats.example.com' });
        if (b.status !== 200)
          throw new Error(
            `${CLIENT_B} with the right key, after ${CLIENT_A}'s wrong ones: ${b.status} ${b.body}`,
          );
      },
    );
  } finally {
    nginx?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}
