import { connect } from 'node:net';
import { request } from 'node:http';

export interface EdgeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/**
 * One request on a fresh connection bound to `localAddress` (another peer address on loopback:
 * 127.0.0.2, 127.0.0.3, …), so a test can say which address a caller is at. Headers as given
 * (X-Forwarded-For included).
 */
export function requestFrom(
  base: string,
  opts: {
    localAddress: string;
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: string;
  },
): Promise<EdgeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      base + opts.path,
      {
        method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
        localAddress: opts.localAddress,
        agent: false,
        headers: {
          ...(opts.body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body) }),
          ...opts.headers,
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * Writes GET requests for `paths` at once on one connection bound to `localAddress`, each with its own
 * headers, the last one closing it; resolves with the status of every answer, in order. Pipelined, the
 * server takes each request's rate-limit token as it parses it, within one tick: what a test sees
 * depends on the order of the requests, not on how loaded the machine is.
 */
export function pipelinedFrom(
  base: string,
  localAddress: string,
  requests: { path: string; headers?: Record<string, string> }[],
): Promise<number[]> {
  const { hostname, port } = new URL(base);
  const bytes = requests
    .map((r, i) => {
      const headers = { ...r.headers, ...(i === requests.length - 1 ? { connection: 'close' } : {}) };
      const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
      return `GET ${r.path} HTTP/1.1\r\nHost: x\r\n${lines.join('')}\r\n`;
    })
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    const chunks: Buffer[] = [];
    socket.setTimeout(30_000, () => socket.destroy(new Error('no answer within 30 s')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks).toString('latin1');
      const statuses = [...all.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
      if (statuses.length !== requests.length)
        return reject(new Error(`${statuses.length} answers to ${requests.length} requests`));
      resolve(statuses);
    });
    socket.write(bytes);
  });
}
