import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { decodeBody, UnreadableBody, type DecodedItem } from '../ingest/decode.js';
import type { IngestResult } from '../ingest/pipeline.js';
import { countIngest } from '../shared/metrics.js';
import { ApiError } from './api12/errors.js';

/** Where accepted records go: the pipeline (embedded) or Kafka (when KAFKA_BROKERS is set). */
export interface IngestSink {
  ingest(items: DecodedItem[]): Promise<IngestResult>;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** POST /ingest (contract §3.3): bearer token, NDJSON or a JSON array, per-line rejections. */
export function ingestRoute(sink: IngestSink, token: string) {
  const expected = digest(token);
  return async (req: Request, res: Response) => {
    const presented = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(presented), expected))
      throw new ApiError(401, 401, 'Missing or wrong ingest token');
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
