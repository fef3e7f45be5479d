import type { Request, Response } from 'express';
import { unknownMethod } from './errors.js';
import { mergeParams, parseBody, parseForm, type RawParams } from './params.js';
import type { Caller } from '../stats/handler.js';

export type Operation = (caller: Caller, params: RawParams) => Promise<unknown>;

/** `{base}/api/1.2/rest/{user_id}/{api_key}/{operation}.json`, GET or POST (contract §2.1). */
export function api12Route(operations: Record<string, Operation>) {
  return async (req: Request, res: Response) => {
    const segment = String(req.params.operation);
    const name = segment.endsWith('.json') ? segment.slice(0, -5) : undefined;
    const operation = name !== undefined && Object.hasOwn(operations, name) ? operations[name] : undefined;
    if (!operation) throw unknownMethod(segment);
    const query = req.originalUrl.includes('?')
      ? parseForm(req.originalUrl.slice(req.originalUrl.indexOf('?') + 1))
      : {};
    const body = parseBody(Buffer.isBuffer(req.body) ? req.body : undefined, req.get('content-type'));
    const caller = { userId: String(req.params.userId), apiKey: String(req.params.apiKey) };
    res.json(await operation(caller, mergeParams(query, body)));
  };
}
