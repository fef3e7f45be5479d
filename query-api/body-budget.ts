import type { Request } from 'express';

/**
 * A budget for the bytes that request bodies in flight may hold together (docs/operations.md, HTTP
 * limits). A body reserves, before its first byte is read, what it may grow to: its Content-Length when
 * it is sent as it is, else (chunked, or compressed: inflated up to the limit) the whole limit. The
 * reservation is returned when the request is over, however it ends. A request that does not fit is
 * refused at once rather than letting memory grow with the number of slow uploads.
 */
export class BodyBudget {
  private held = 0;

  constructor(readonly bytes: number) {}

  /** Reserves room for `req`'s body (at most `limit` bytes once decoded); false when it does not fit. */
  reserve(req: Request, limit: number): boolean {
    const need = BodyBudget.need(req, limit);
    if (need === 0) return true;
    if (this.held + need > this.bytes) return false;
    this.held += need;
    let returned = false;
    const giveBack = () => {
      if (returned) return;
      returned = true;
      this.held -= need;
    };
    req.once('close', giveBack);
    req.res?.once('close', giveBack);
    return true;
  }

  /** Bytes reserved now. */
  get inFlight(): number {
    return this.held;
  }

  private static need(req: Request, limit: number): number {
    const length = req.headers['content-length'];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked && (length === undefined || length === '0')) return 0;
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const declared = Number(length);
    if (chunked || encoding !== 'identity' || !Number.isSafeInteger(declared)) return limit;
    return Math.min(declared, limit);
  }
}
