/**
 * The API's error object, with the HTTP status it travels with (docs/api.md "Errors"). Here, below both sides,
 * because the HTTP edge answers with it and the Kafka sink throws it (503 while Kafka is away).
 */
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
