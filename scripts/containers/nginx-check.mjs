// nginx in front of the compose stack's API (docs/deployment.md, "Behind a reverse proxy"): Debian's
// nginx with the server block of the docs as written, only its `listen` port changed to a free loopback
// port, run in the foreground with a configuration of its own (the machine's nginx is left alone).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../clickhouse-server.mjs';
import { docBlocks, fetchRetried, sh, until } from './lib.mjs';

export async function nginxCheck({ root, checks, apiKey }) {
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-nginx-check-'));
  let nginx;
  try {
    await checks.step(
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
        const base = `http://127.0.0.1:${port}`;
        await until('nginx answering', 30_000, async () => (await fetch(`${base}/healthz`)).status === 200);
        const r = await fetch(
          `${base}/api/1.2/rest/1/${apiKey}/automation.stats.json?list_id=1&start_date=2026-03-10&stop_date=2026-03-10`,
          { headers: { host: 'stats.example.com' } },
        );
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
  } finally {
    nginx?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}
