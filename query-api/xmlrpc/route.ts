import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../shared/log.js';
import { ApiError } from '../../shared/errors.js';
import { unavailableFor } from '../unavailable.js';
import { RetryableError, internalError, invalidParam, tooLarge, unknownMethod } from '../api12/errors.js';
import { invoke } from '../api12/invoke.js';
import type { Operation } from '../api12/operation.js';
import { XmlRpcError, decodeCall, encodeFault, encodeResponse } from './codec.js';

/**
 * `POST {base}/api/1.2/xmlrpc/{user_id}/{api_key}` (docs/api.md "XML-RPC"): the REST operations, called
 * with positional params. Same path from params to answer as REST (`invoke`); only the encoding
 * differs. Every failure is a fault carrying the API's error code and message, with HTTP 200.
 *
 * Returns the route's handlers: the call, then an error handler for what the body reader throws
 * before the call (a body over the limit → fault 413), mounted after the body parser.
 */
export function xmlrpcRoute(operations: Record<string, Operation>, log: Logger) {
  const send = (res: Response, xml: string) => {
    res.status(200).type('text/xml; charset=utf-8').send(xml);
  };
  const fault = (res: Response, err: unknown) => {
    let error: ApiError;
    const bodyErr = err as { type?: string; status?: number; encoding?: string };
    if (err instanceof ApiError) error = err;
    else if (bodyErr.type === 'entity.too.large') error = tooLarge();
    else if (bodyErr.type === 'encoding.unsupported')
      error = new ApiError(415, 415, `Unsupported content encoding ${String(bodyErr.encoding).slice(0, 40)}`);
    // Anything else the body reader refuses (aborted, bad length) is a body that cannot be read.
    else if (typeof bodyErr.status === 'number' && bodyErr.status >= 400 && bodyErr.status < 500)
      error = invalidParam('body', 'could not be read');
    else if (unavailableFor(err)) error = unavailableFor(err)!;
    else {
      const id = String(res.locals.requestId);
      log.error({ req_id: id, err }, 'unexpected error (xml-rpc)');
      error = internalError(id);
    }
    // A fault is HTTP 200 (docs/api.md, XML-RPC); when to retry still travels as a header.
    if (error instanceof RetryableError) res.setHeader('Retry-After', String(error.retryAfterSeconds));
    send(res, encodeFault(error.code, error.message));
  };

  const call = async (req: Request, res: Response) => {
    try {
      let decoded;
      try {
        decoded = decodeCall(Buffer.isBuffer(req.body) ? req.body : '');
      } catch (err) {
        if (err instanceof XmlRpcError)
          throw invalidParam('body', `not an XML-RPC methodCall: ${err.message}`);
        throw err;
      }
      const { methodName, params } = decoded;
      const caller = { userId: String(req.params.userId), apiKey: String(req.params.apiKey) };
      // The method name is the caller's own text, not a path segment: safe to name, but kept short.
      const answer = await invoke(operations, methodName, caller, [params], () =>
        unknownMethod(methodName.slice(0, 100)),
      );
      send(res, encodeResponse(answer));
    } catch (err) {
      fault(res, err);
    }
  };
  const bodyError = (err: unknown, _req: Request, res: Response, _next: NextFunction) => fault(res, err);
  return [call, bodyError];
}
