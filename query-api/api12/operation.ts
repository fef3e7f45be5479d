import type { RawParams } from './params.js';

/** Who calls: the user_id and api_key of the path, checked by each operation against the catalog. */
export interface Caller {
  userId: string;
  apiKey: string;
}

/**
 * An API 1.2 operation: the caller and its raw params in, the answer out. Its own module because the
 * router, invoke() and every operation share it (one place, no import cycle between them).
 */
export type Operation = (caller: Caller, params: RawParams) => Promise<unknown>;
