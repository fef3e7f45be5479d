import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../shared/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `Authorization: Bearer <token>`, compared in constant time (digests of equal length whatever was
 * sent). Mounted before the body is read, so a caller without the token cannot make the service read
 * or decompress a body. A missing or wrong token is a 401 with `message`, and the connection is closed
 * after it (`Connection: close`): the body is never read, where Node would otherwise drain it before
 * the next request, and a caller without the token could hold the connection until the request deadline
 * (1,000 such requests kept every connection busy).
 */
export function requireBearer(token: string, message: string) {
  const expected = digest(token);
  return (req: Request, res: Response, next: NextFunction) => {
    const presented = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(presented), expected)) {
      res.setHeader('Connection', 'close');
      return next(new ApiError(401, 401, message));
    }
    next();
  };
}
