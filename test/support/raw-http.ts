import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../shared/log.js';

export interface RawResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
}

/**
 * One HTTP/1.1 request over a plain socket, bytes exactly as given: fetch and node:http normalise or
 * refuse paths (dot segments, raw unicode, spaces), which is precisely what these tests must send.
 */
export function rawRequest(
  base: string,
  req: { method?: string; target: string; headers?: [string, string][]; body?: Buffer | string },
): Promise<RawResponse> {
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const lines = [`${req.method ?? 'GET'} ${req.target} HTTP/1.1`, 'Host: localhost', 'Connection: close'];
  for (const [name, value] of req.headers ?? []) lines.push(`${name}: ${value}`);
  if (body !== undefined && !(req.headers ?? []).some(([n]) => n.toLowerCase() === 'content-length'))
    lines.push(`Content-Length: ${body.length}`);
  return rawExchange(
    base,
    Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), body ?? Buffer.alloc(0)]),
  );
}

/** Writes `bytes` as they are and reads the answer until the server closes the connection. */
export function rawExchange(base: string, bytes: Buffer): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(60_000, () => socket.destroy(new Error('no answer within 60 s')));
    socket.on('data', (c) => chunks.push(c));
    // The server may answer (and close) before it has read everything we send (e.g. a 431): what it
    // answered is what counts, so a reset after data is not a failure.
    socket.on('error', (err) => {
      if (chunks.length === 0) reject(err);
    });
    socket.on('close', () => {
      if (chunks.length === 0) return reject(new Error('connection closed without an answer'));
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (err) {
        reject(err as Error);
      }
    });
    // No half-close: Node's server aborts a request whose client has ended its side. `Connection:
    // close` makes the server close once it has answered.
    socket.write(bytes);
  });
}

function parseResponse(raw: Buffer): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`no complete response head: ${raw.toString('latin1').slice(0, 200)}`);
  const [statusLine, ...headerLines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine!);
  if (!m) throw new Error(`bad status line: ${statusLine}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = raw.subarray(split + 4);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') body = dechunk(body);
  else if (headers['content-length'] !== undefined)
    body = body.subarray(0, Number(headers['content-length']));
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: Number(m[1]), headers, text, json };
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (!(size > 0)) break;
    out.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** The service's logger at `level`, every line of it in `lines` (what a test inspects for secrets). */
export function capturingLogger(level = 'debug'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}
