import type { Request } from 'express';

/**
 * A budget for the bytes that request bodies in flight may hold together (docs/operations.md, HTTP
 * limits). A body reserves, before its first byte is read, what it may grow to: its Content-Length when
 * it is sent as it is, else (chunked, or compressed: inflated up to the limit) the whole limit. The
 * reservation is returned when the request is over, however it ends. A request that does not fit is
 * refused at once rather than letting memory grow with the number of slow uploads.
 *
 * Each holder a body is reserved for (its user, its peer address) may hold at most `share` bytes of it,
 * so that one tenant's or one address's slow bodies cannot take the budget every other caller needs.
 */
export class BodyBudget {
  private held = 0;
  private readonly byHolder = new Map<string, number>();
  /** Bytes one holder may have reserved at once. */
  readonly share: number;

  /**
   * `share`: by default a quarter of the budget, and never less than one body at `minShare` (the largest
   * body limit), so that every holder can send at least one body of any size the routes take.
   */
  constructor(
    readonly bytes: number,
    minShare = 0,
    share = Math.max(Math.floor(bytes / 4), Math.min(bytes, minShare)),
  ) {
    this.share = share;
  }

  /**
   * Reserves room for `req`'s body (at most `limit` bytes once decoded) in the budget and in the share of
   * each of `holders`; false when it does not fit one of them.
   */
  reserve(req: Request, limit: number, holders: string[] = []): boolean {
    const need = BodyBudget.need(req, limit);
    if (need === 0) return true;
    if (this.held + need > this.bytes) return false;
    const keys = [...new Set(holders)];
    if (keys.some((k) => (this.byHolder.get(k) ?? 0) + need > this.share)) return false;
    this.held += need;
    for (const k of keys) this.byHolder.set(k, (this.byHolder.get(k) ?? 0) + need);
    let returned = false;
    const giveBack = () => {
      if (returned) return;
      returned = true;
      this.held -= need;
      for (const k of keys) {
        const left = (this.byHolder.get(k) ?? need) - need;
        if (left > 0) this.byHolder.set(k, left);
        else this.byHolder.delete(k);
      }
    };
    req.once('close', giveBack);
    req.res?.once('close', giveBack);
    return true;
  }

  /** Bytes reserved now. */
  get inFlight(): number {
    return this.held;
  }

  /** Bytes reserved now by one holder. */
  heldBy(holder: string): number {
    return this.byHolder.get(holder) ?? 0;
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
