import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from './commands.js';

/** A problem the operator must fix (the service, a file): exit 1 with this message. */
export class AdminError extends Error {}

/** ADMIN_TOKEN, else DATA_DIR/admin-token: never an argument (arguments are visible to other users). */
export function adminToken(): string {
  const fromEnv = process.env.ADMIN_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  const file = join(resolve(process.env.DATA_DIR ?? './data'), 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  throw new UsageError(
    `no admin token: set ADMIN_TOKEN, or run where ${file} exists (DATA_DIR of the running service)`,
  );
}

/** A request to the running service's admin endpoints, with the admin token; errors say what to do. */
export async function adminFetch(
  url: string,
  path: string,
  init: { method?: string; body?: string; contentType?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  const token = adminToken();
  const target = `${url.replace(/\/$/, '')}/admin${path}`;
  const res = await fetch(target, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.contentType ? { 'content-type': init.contentType } : {}),
    },
    body: init.body,
    signal: init.signal,
  }).catch((err: unknown) => {
    const cause = err instanceof Error ? (err.cause ?? err) : err;
    throw new AdminError(
      `cannot reach mailstats at ${url} (${cause instanceof Error ? cause.message : String(cause)}): ` +
        'is it running? Give its address with --url, or set MAILSTATS_URL or PORT',
    );
  });
  if (res.status === 401)
    throw new AdminError(
      `mailstats at ${url} refused the admin token: use the service's ADMIN_TOKEN (or its DATA_DIR/admin-token)`,
    );
  if (!res.ok) {
    const body = (await res.json().catch(() => undefined)) as { message?: string } | undefined;
    throw new AdminError(
      `${init.method ?? 'GET'} /admin${path.split('?')[0]} answered ${res.status}: ${body?.message ?? 'no details'}`,
    );
  }
  return res;
}

/** POST JSON, answer JSON. */
export async function adminPost<T>(url: string, path: string, body: unknown): Promise<T> {
  const res = await adminFetch(url, path, {
    method: 'POST',
    body: JSON.stringify(body),
    contentType: 'application/json',
  });
  return (await res.json()) as T;
}
