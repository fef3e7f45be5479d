import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { DecodedItem, IngestSink } from '../ingest/sink.js';
import { countIngest } from '../shared/metrics.js';
import { ApiError } from '../shared/errors.js';
import { decodeBody, UnreadableBody } from './ingest-body.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `Authorization: Bearer <INGEST_TOKEN>`, compared in constant time. Mounted before the body is read,
 * so a caller without the token cannot make the service read or decompress 10 MiB.
 */
export function requireIngestToken(token: string) {
  const expected = digest(token);
  return (req: Request, _res: Response, next: NextFunction) => {
    const presented = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(presented), expected))
      return next(new ApiError(401, 401, 'Missing or wrong ingest token'));
    next();
  };
}

/** POST /ingest (docs/records.md "Ingest over HTTP"): NDJSON or a JSON array, per-line rejections. */
export function ingestRoute(sink: IngestSink) {
  return async (req: Request, res: Response) => {
    let items: DecodedItem[];
    try {
      items = decodeBody(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
    } catch (err) {
      if (err instanceof UnreadableBody) throw new ApiError(400, 400, `Unreadable body: ${err.message}`);
      throw err;
    }
    res.json(countIngest('http', await sink.ingest(items)));
  };
}
