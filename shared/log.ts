import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';
import { prettyDestination } from './log-pretty.js';

export type { Logger };

/**
 * What an error may carry into a log line: its class, message, code and stack, never the properties a
 * library hangs on it (body-parser's `body`, Node's `rawPacket` of a refused request, a client's
 * `headers`/`url`), which may hold an api key or the ingest token.
 */
function safeError(err: unknown): Record<string, unknown> | unknown {
  if (!(err instanceof Error)) return err;
  const { type, message, stack } = stdSerializers.err(err);
  const code = (err as { code?: unknown }).code;
  return { type, message, stack, ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}) };
}

/** Fields every log line written while serving a request carries (its `req_id`). */
const context = new AsyncLocalStorage<Record<string, unknown>>();

/** Runs `fn` (and whatever it awaits) with `fields` added to each log line it writes. */
export const withLogContext = <T>(fields: Record<string, unknown>, fn: () => T): T => context.run(fields, fn);

/** LOG_FORMAT's values (shared/config.ts); `auto` is resolved by `chooseLogFormat`. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** auto: a human line when the output is a terminal (someone is reading), JSON for a collector otherwise. */
export function chooseLogFormat(setting: LogFormat, isTTY: boolean | undefined): 'json' | 'pretty' {
  return setting === 'auto' ? (isTTY ? 'pretty' : 'json') : setting;
}

/**
 * JSON lines (pino), or one human line per entry with `format` pretty (or auto on a terminal stdout:
 * docs/operations.md "Logs"). Secrets stay out by construction: request lines are built from fields that cannot
 * hold one (query-api/request-log.ts), errors go through `safeError`, and as a last guard any
 * `headers`/`authorization` field is censored wherever a caller logs one.
 */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  format: LogFormat = 'json',
): Logger {
  const options = {
    level,
    base: undefined,
    serializers: { err: safeError },
    // A copy: pino merges each line's own fields into the object mixin returns, which would otherwise
    // carry them into every later line of the same request.
    mixin: () => ({ ...context.getStore() }),
    redact: { paths: ['headers', '*.headers', 'authorization', '*.authorization'], censor: '[redacted]' },
  };
  // With no destination given, entries go to stdout (pino's default), so its being a terminal decides auto.
  if (chooseLogFormat(format, destination ? false : process.stdout.isTTY) === 'pretty')
    return pino(options, prettyDestination(destination ?? process.stdout));
  return destination ? pino(options, destination) : pino(options);
}
