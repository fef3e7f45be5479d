import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../shared/errors.js';
import { tooLarge, unsupportedEncoding } from './api12/errors.js';

/** docs/api.md "Parameters" (bodies). body-parser also knows zstd on newer Node versions; the API does not. */
const SUPPORTED_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/** How a body that cannot be read is answered: 406 `Invalid param body: …` on the API, 400 on /ingest. */
export type Unreadable = (reason: string) => ApiError;

/**
 * What a body-parser (raw-body, zlib) failure means for the client. Every failure it reports is the
 * client's: a body over the limit, an encoding, a body that does not decode or does not match its
 * Content-Length, an aborted upload. Only a failure with no client-side status is left for the 500 path.
 */
export function bodyError(err: unknown, unreadable: Unreadable): ApiError | undefined {
  const e = err as { type?: unknown; status?: unknown; code?: unknown; encoding?: unknown };
  switch (e.type) {
    case 'entity.too.large':
      return tooLarge();
    case 'encoding.unsupported':
      return unsupportedEncoding(String(e.encoding ?? ''));
    case 'request.aborted':
      return unreadable('the request was aborted before its body was complete');
    case 'request.size.invalid':
      return unreadable('its length does not match Content-Length');
    case 'charset.unsupported':
      return unreadable('unsupported charset');
  }
  // zlib's failures on a corrupt gzip/deflate/br stream carry its code (Z_DATA_ERROR, Z_BUF_ERROR,
  // ERR_BROTLI_…, ERR__ERROR for a truncated brotli stream); body-parser gives them status 400.
  if (typeof e.code === 'string' && /^(Z_|ERR_BROTLI|ERR__ERROR|ERR_ZLIB)/.test(e.code))
    return unreadable('it could not be decoded with its Content-Encoding');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500)
    return unreadable('it could not be read');
  return undefined;
}

/**
 * The request body as a Buffer in `req.body` (empty bodies leave it undefined), decoded from identity,
 * gzip, deflate or br, at most `limit` bytes once decoded (so a small compressed "bomb" is a 413, not
 * 1 GiB of memory). Every failure becomes the API's error object (docs/api.md "Errors").
 */
export function readBody(limit: string, unreadable: Unreadable): RequestHandler[] {
  const raw = express.raw({ type: () => true, limit });
  return [
    (req: Request, _res: Response, next: NextFunction) => {
      const encoding = (req.get('content-encoding') ?? '').trim().toLowerCase();
      if (encoding !== '' && !SUPPORTED_ENCODINGS.has(encoding))
        return next(unsupportedEncoding(req.get('content-encoding')!.trim()));
      next();
    },
    (req: Request, res: Response, next: NextFunction) => {
      raw(req, res, (err?: unknown) => {
        if (err === undefined || err === null) return next();
        next(bodyError(err, unreadable) ?? err);
      });
    },
  ];
}
