/** The contract's error object, with the HTTP status it travels with (contract §2.2). */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  toJSON() {
    return { err: true, message: this.message, code: this.code };
  }
}

export const missingParam = (name: string) => new ApiError(407, 400, `Missing required param ${name}`);
export const invalidParam = (name: string, reason: string) =>
  new ApiError(406, 400, `Invalid param ${name}: ${reason}`);
export const notAllowed = (listId: number | string) =>
  new ApiError(101, 403, `Not allowed for list_id = ${listId}`);
export const unknownMethod = (operation: string) => new ApiError(404, 404, `Unknown API method ${operation}`);
export const tooLarge = () => new ApiError(413, 413, 'Request too large');
export const internalError = (requestId: string) =>
  new ApiError(500, 500, `Internal error (request ${requestId})`);

// transactional.templateRender (contract §2.2, §2.5)
export const accountNotFound = () => new ApiError(17003, 404, 'Could not find the SMTP account');
export const accountInactive = () => new ApiError(17004, 409, 'The SMTP account is inactive');
export const templateNotFetched = (status: 404 | 503, reason: string) =>
  new ApiError(17006, status, `The template could not be fetched: ${reason}`);
export const templateNotRendered = (reason: string) =>
  new ApiError(17007, 422, `The template could not be rendered: ${reason}`);

/** 101 for an operation without a list (list.all): nothing says whether the user or the key was wrong. */
export const notAllowedForCaller = () => new ApiError(101, 403, 'Not allowed for this user_id and api_key');
