import { unknownMethod } from './errors.js';
import { namedParams, type Source } from './intake.js';
import type { Caller, Operation } from './operation.js';

/**
 * One code path from params to answer for every encoding (REST JSON, XML-RPC): the operation by
 * name (404 when unknown), its params by name from the sources, then the operation itself, whose
 * answer or ApiError each edge encodes its own way.
 */
export function lookupOperation(operations: Record<string, Operation>, name: string | undefined) {
  return name !== undefined && Object.hasOwn(operations, name) ? operations[name] : undefined;
}

export async function invoke(
  operations: Record<string, Operation>,
  name: string,
  caller: Caller,
  sources: readonly Source[] | (() => Promise<readonly Source[]>),
  unknown = () => unknownMethod(name),
): Promise<unknown> {
  const operation = lookupOperation(operations, name);
  if (!operation) throw unknown();
  const read = typeof sources === 'function' ? await sources() : sources;
  return operation(caller, namedParams(name, read));
}
