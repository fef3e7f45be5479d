import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CatalogListing, ListingFilter } from '../shared/catalog/listing.js';
import type { CatalogRecord } from '../shared/records/catalog.js';
import { UsageError } from './commands.js';

/** Where the ingest token was found: named in a 401's hint, never printed itself. */
function ingestToken(): { token: string; from: string } {
  const fromEnv = process.env.INGEST_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, from: 'INGEST_TOKEN' };
  const file = join(resolve(process.env.DATA_DIR ?? './data'), 'ingest-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), from: file };
  throw new UsageError(
    `no ingest token: set INGEST_TOKEN, or set DATA_DIR to the running service's data directory ` +
      `(looked for ${file}; DATA_DIR default ./data)`,
  );
}

/**
 * The running service, reached with the ingest token: POST /ingest to write, GET /ingest/catalog to read
 * users, lists and grants (docs/operations.md "Admin CLI").
 */
export class ServiceClient {
  constructor(readonly url: string) {}

  private async call(method: 'GET' | 'POST', path: string, body?: string): Promise<unknown> {
    const { token, from } = ingestToken();
    const res = await fetch(`${this.url.replace(/\/$/, '')}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/x-ndjson' } : {}),
      },
      body,
    }).catch((err: unknown) => {
      throw new Error(
        `cannot reach mailstats at ${this.url} (${err instanceof Error ? String(err.cause ?? err.message) : String(err)}). ` +
          'Is it running? Point the CLI at it with --url URL or MAILSTATS_URL, or set PORT to the port it listens on.',
      );
    });
    const answer = (await res.json().catch(() => undefined)) as { message?: string } | undefined;
    if (res.status === 401)
      throw new Error(
        `${method} ${path.split('?')[0]} answered 401: the service does not take the ingest token from ${from}. ` +
          'After `token rotate`, restart mailstats so it uses the new token (docker compose up -d); ' +
          'otherwise give the CLI the token the service runs with.',
      );
    if (!res.ok)
      throw new Error(
        `${method} ${path.split('?')[0]} answered ${res.status}: ${answer?.message ?? 'no details'}`,
      );
    return answer;
  }

  async write(records: CatalogRecord[]): Promise<void> {
    const body = (await this.call('POST', '/ingest', records.map((r) => JSON.stringify(r)).join('\n'))) as
      { rejected?: { reason: string }[] } | undefined;
    if (body?.rejected?.length) throw new Error(`rejected: ${body.rejected.map((r) => r.reason).join('; ')}`);
  }

  async catalog(filter: ListingFilter = {}): Promise<CatalogListing> {
    const query = new URLSearchParams();
    if (filter.user !== undefined) query.set('user', String(filter.user));
    if (filter.list !== undefined) query.set('list', String(filter.list));
    const q = query.size ? `?${query}` : '';
    return (await this.call('GET', `/ingest/catalog${q}`)) as CatalogListing;
  }
}
