import type { Request, Response } from 'express';
import type { DecodedItem, IngestSink } from '../ingest/sink.js';
import { countIngest } from '../shared/metrics.js';
import { ApiError } from '../shared/errors.js';
import { requireBearer } from './bearer-token.js';
import { decodeBody, UnreadableBody } from './ingest-body.js';

/** The ingest token (INGEST_TOKEN), checked before the body is read (docs/records.md "Ingest over HTTP"). */
export const requireIngestToken = (token: string) => requireBearer(token, 'Missing or wrong ingest token');

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
