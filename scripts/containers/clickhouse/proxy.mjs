// The stand-in's entry point: starts the server on loopback inside the container and serves port 8123,
// checking the credentials the compose file gives the real image (CLICKHOUSE_USER, CLICKHOUSE_PASSWORD)
// and forwarding each request as the server's only user. SIGTERM closes the server's input: it stops.
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';

const INNER = 18123;
const user = process.env.CLICKHOUSE_USER || 'default';
const password = process.env.CLICKHOUSE_PASSWORD || '';
const server = spawn(
  'python3',
  [
    '/opt/chdb/server.py',
    '/opt/chdb/libchdb.so',
    '--multiquery',
    '--path=/var/lib/clickhouse/',
    `--http_port=${INNER}`,
    '--tcp_port=19000',
    '--listen_host=127.0.0.1',
    "--query=SYSTEM START LISTEN HTTP; SYSTEM START LISTEN TCP; SELECT * FROM file('/dev/stdin', 'LineAsString') FORMAT Null",
    '--',
    '--background_pool_size=16',
  ],
  { stdio: ['pipe', 'inherit', 'inherit'] },
);
server.on('exit', (code, signal) => {
  console.error(`clickhouse stand-in: server exited (${code ?? signal})`);
  process.exit(code ?? 1);
});

/** The credentials of a request, in any of the forms ClickHouse's HTTP interface takes. */
function credentials(req, url) {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Basic ')) {
    const text = Buffer.from(auth.slice(6), 'base64').toString();
    const i = text.indexOf(':');
    return [text.slice(0, i), text.slice(i + 1)];
  }
  if (req.headers['x-clickhouse-user'])
    return [req.headers['x-clickhouse-user'], req.headers['x-clickhouse-key'] ?? ''];
  return [url.searchParams.get('user') ?? 'default', url.searchParams.get('password') ?? ''];
}

createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const [u, p] = credentials(req, url);
  if (u !== user || p !== password) {
    res.writeHead(516, { 'content-type': 'text/plain', 'x-clickhouse-exception-code': '516' });
    res.end(
      `Code: 516. DB::Exception: ${u}: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)\n`,
    );
    req.resume();
    return;
  }
  url.searchParams.delete('user');
  url.searchParams.delete('password');
  const headers = { ...req.headers };
  for (const h of ['authorization', 'x-clickhouse-user', 'x-clickhouse-key']) delete headers[h];
  const inner = request(
    { host: '127.0.0.1', port: INNER, method: req.method, path: url.pathname + url.search, headers },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  inner.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`clickhouse stand-in: ${err.message}\n`);
  });
  req.pipe(inner);
}).listen(8123, '0.0.0.0');

for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.stdin.end());
