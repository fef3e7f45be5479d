import type { Request, Response } from 'express';
import type { CatalogListing, ListingFilter } from '../shared/catalog/listing.js';
import { ApiError } from '../shared/errors.js';

export type ReadListing = (filter: ListingFilter) => Promise<CatalogListing>;

function idParam(req: Request, name: 'user' | 'list'): number | undefined {
  const raw = req.query[name];
  if (raw === undefined) return undefined;
  const n = typeof raw === 'string' && /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new ApiError(400, 400, `Invalid parameter ${name}: must be a positive integer`);
  return n;
}

/**
 * GET /ingest/catalog[?user=N][&list=N] (behind the ingest token): the users, lists and grants the
 * service knows, for the admin CLI's checks and listings (docs/operations.md "Admin CLI"). Read-only; it
 * shows no key or key digest, so the ingest token (which may already write users) reveals nothing more.
 */
export function catalogRoute(read: ReadListing) {
  return async (req: Request, res: Response) => {
    res.json(await read({ user: idParam(req, 'user'), list: idParam(req, 'list') }));
  };
}
