import type { Request, Response } from 'express';
import { unknownMethod } from './errors.js';
import { parseBody, parseQuery } from './intake.js';
import { invoke } from './invoke.js';
import { JsonAnswer } from './json-answer.js';
import type { Operation } from './operation.js';
import type { RepeatAnswers } from '../stats/repeat-answers.js';

/**
 * `{base}/api/1.2/rest/{user_id}/{api_key}/{operation}.json`, GET or POST (docs/api.md "Addressing").
 * `repeats`: told of each answer, so that the same request sent again can be answered in front of Express.
 */
export function api12Route(operations: Record<string, Operation>, repeats?: RepeatAnswers) {
  return async (req: Request, res: Response) => {
    const start = repeats?.begin();
    const segment = String(req.params.operation);
    const name = segment.endsWith('.json') ? segment.slice(0, -5) : '';
    const caller = { userId: String(req.params.userId), apiKey: String(req.params.apiKey) };
    // The operation is checked before the body is read: an unknown one is a 404 whatever the body.
    const sources = async () => {
      const q = req.originalUrl.indexOf('?');
      const query = q >= 0 ? parseQuery(req.originalUrl.slice(q + 1)) : {};
      const body = await parseBody(Buffer.isBuffer(req.body) ? req.body : undefined, req.get('content-type'));
      return [query, body]; // the body wins over the query string
    };
    const answer = await invoke(operations, name, caller, sources, () => unknownMethod(segment));
    if (answer instanceof JsonAnswer) {
      if (start) repeats!.remember(req, name, answer, start);
      sendJsonBytes(res, answer.bytes);
    } else res.json(answer);
  };
}

/**
 * An answer already serialised (JsonAnswer: the bytes `res.json` would have made from the object), sent
 * with the headers `res.json` sets; `res.send` still handles HEAD and Content-Length.
 */
function sendJsonBytes(res: Response, bytes: Buffer): void {
  // setHeader, not res.set: the value is already what res.json sets, and res.set parses it again.
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.send(bytes);
}
