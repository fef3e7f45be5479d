import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: undefined });
}

/**
 * The API key is a path segment (`/api/1.2/rest/{user}/{key}/…`, `/api/1.2/xmlrpc/{user}/{key}`):
 * never let it reach a log line.
 * Case-insensitive, as Express routing is (`/API/1.2/REST/…` reaches the same route).
 */
export function redactApiKey(path: string): string {
  return path.replace(/(\/api\/[^/]+\/(?:rest|xmlrpc)\/[^/]*\/)[^/?]*/i, '$1[redacted]');
}
