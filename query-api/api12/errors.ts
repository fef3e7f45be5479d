import { ApiError } from '../../shared/errors.js';

export const missingParam = (name: string) => new ApiError(407, 400, `Missing required param ${name}`);
export const invalidParam = (name: string, reason: string) =>
  new ApiError(406, 400, `Invalid param ${name}: ${reason}`);
export const notAllowed = (listId: number | string) =>
  new ApiError(101, 403, `Not allowed for list_id = ${listId}`);
/**
 * `operation` is the operation segment of a path of the API's shape. Any other path gets a message that
 * quotes nothing from it (docs/api.md "Errors"): a misplaced segment could be an api key.
 */
export const unknownMethod = (operation?: string) =>
  new ApiError(
    404,
    404,
    operation === undefined
      ? `Unknown API method (the path is not /api/1.2/rest/{user_id}/{api_key}/{operation}.json)`
      : `Unknown API method ${operation}`,
  );
export const tooLarge = () => new ApiError(413, 413, 'Request too large');
export const internalError = (requestId: string) =>
  new ApiError(500, 500, `Internal error (request ${requestId})`);

/**
 * A Content-Encoding other than identity, gzip, deflate or br. The header is the client's own text:
 * quoted only as printable ASCII, at most 64 characters, so the answer stays a tidy one-line message.
 */
export const unsupportedEncoding = (encoding: string) =>
  new ApiError(
    415,
    415,
    `Unsupported content encoding ${encoding.replace(/[^\x20-\x7e]/g, '?').slice(0, 64)}`,
  );

// The edge's own errors (docs/api.md "Errors"; ARCHITECTURE.md, "HTTP edge"): the code is the HTTP status.
export const methodNotAllowed = () => new ApiError(405, 405, 'Method not allowed');
export const badRequest = (reason?: string) =>
  new ApiError(400, 400, reason === undefined ? 'Bad request' : `Bad request: ${reason}`);
export const headersTooLarge = () => new ApiError(431, 431, 'Request header fields too large');
export const requestTimeout = () => new ApiError(408, 408, 'Request timeout');

// transactional.templateRender (docs/api.md "Errors", "transactional.templateRender")
export const accountNotFound = () => new ApiError(17003, 404, 'Could not find the SMTP account');
export const accountInactive = () => new ApiError(17004, 409, 'The SMTP account is inactive');
export const templateNotFetched = (status: 404 | 503, reason: string) =>
  new ApiError(17006, status, `The template could not be fetched: ${reason}`);
export const templateNotRendered = (reason: string) =>
  new ApiError(17007, 422, `The template could not be rendered: ${reason}`);

/** 101 for an operation without a list (list.all): nothing says whether the user or the key was wrong. */
export const notAllowedForCaller = () => new ApiError(101, 403, 'Not allowed for this user_id and api_key');

/** A failure the caller may retry later: `Retry-After` (whole seconds) travels with it. */
export class RetryableError extends ApiError {
  constructor(
    code: number,
    status: number,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, status, message);
  }
}

/** Over the caller's rate limit (docs/api.md, rate limits). */
export const tooManyRequests = (retryAfterSeconds: number) =>
  new RetryableError(429, 429, 'Too many requests', retryAfterSeconds);
/** Something the service waits for; `what` names it without any detail of the dependency (hosts, keys). */
export const serviceUnavailable = (what: string, retryAfterSeconds: number) =>
  new RetryableError(503, 503, `Service unavailable: ${what}`, retryAfterSeconds);

/** ClickHouse went away after start (a refused or reset connection): retry shortly (docs/operations.md "Start-up"). */
export const clickHouseUnavailable = () => serviceUnavailable('ClickHouse is not answering', 5);
/** templateRender: no render worker in time (docs/api.md, render limits). */
export const renderWorkersBusy = (retryAfterSeconds: number) =>
  new RetryableError(503, 503, 'Service unavailable: render workers busy', retryAfterSeconds);
