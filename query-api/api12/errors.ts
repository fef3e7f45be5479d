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
