import { describe, expect, it } from 'vitest';
import { invalidParam } from '../../query-api/api12/errors.js';
import { bodyError } from '../../query-api/body.js';

/** Every failure body-parser / raw-body / zlib reports maps to the API's error object (docs/api.md "Errors"). */
const unreadable = (reason: string) => invalidParam('body', reason);
const httpError = (status: number, props: Record<string, unknown>) =>
  Object.assign(new Error('x'), { status, statusCode: status, expose: true, ...props });

describe('bodyError', () => {
  it.each([
    [httpError(413, { type: 'entity.too.large' }), 413, 413, 'Request too large'],
    [
      httpError(415, { type: 'encoding.unsupported', encoding: 'zstd' }),
      415,
      415,
      'Unsupported content encoding zstd',
    ],
    [httpError(400, { type: 'request.aborted' }), 400, 406, /^Invalid param body: /],
    [httpError(400, { type: 'request.size.invalid' }), 400, 406, /^Invalid param body: /],
    [httpError(415, { type: 'charset.unsupported' }), 400, 406, /^Invalid param body: /],
    [httpError(403, { type: 'entity.verify.failed' }), 400, 406, /^Invalid param body: /],
    [httpError(400, { type: 'entity.parse.failed' }), 400, 406, /^Invalid param body: /],
    [
      httpError(400, { code: 'Z_DATA_ERROR' }),
      400,
      406,
      'Invalid param body: it could not be decoded with its Content-Encoding',
    ],
    [httpError(400, { code: 'ERR_BROTLI_DECOMPRESSION_FAILED' }), 400, 406, /could not be decoded/],
  ])('%o → %i/%i', (err, status, code, message) => {
    const mapped = bodyError(err, unreadable);
    expect(mapped?.status).toBe(status);
    expect(mapped?.code).toBe(code);
    if (typeof message === 'string') expect(mapped?.message).toBe(message);
    else expect(mapped?.message).toMatch(message);
  });
  it("leaves failures that are not the client's to the 500 path", () => {
    expect(bodyError(new Error('boom'), unreadable)).toBeUndefined();
    expect(bodyError(httpError(500, { type: 'stream.encoding.set' }), unreadable)).toBeUndefined();
  });
  it('quotes an unsupported encoding only as short printable text', () => {
    const mapped = bodyError(
      httpError(415, { type: 'encoding.unsupported', encoding: `x\u0000\n${'y'.repeat(200)}` }),
      unreadable,
    );
    expect(mapped?.message).toMatch(/^Unsupported content encoding x\?\?y+$/);
    expect(mapped!.message.length).toBeLessThan(100);
  });
});
