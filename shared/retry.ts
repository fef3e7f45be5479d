import pRetry, { AbortError } from 'p-retry';
import type { Logger } from './log.js';

/** An error that no amount of waiting fixes (e.g. a ClickHouse server that is too old): stop at once. */
export class PermanentError extends Error {}

export interface WaitOptions {
  log: Logger;
  /** Give up after this many seconds in total; 0 waits forever. */
  waitSeconds: number;
  /** First and longest pause between attempts (ms). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Start-up waits for a dependency (ClickHouse, Kafka) instead of exiting on the first refused
 * connection: exponential backoff (×2, jittered, capped), one log line per failed attempt, bounded by
 * `waitSeconds` in total so that a supervisor (compose, systemd, Kubernetes) sees a process that
 * cannot reach its dependencies exit non-zero instead of hanging unnoticed. 0 waits forever.
 */
export async function waitFor<T>(what: string, attempt: () => Promise<T>, options: WaitOptions): Promise<T> {
  const { log, waitSeconds, minDelayMs = 500, maxDelayMs = 10_000 } = options;
  const started = Date.now();
  try {
    return await pRetry(
      async () => {
        try {
          return await attempt();
        } catch (err) {
          // p-retry does not retry TypeErrors; a refused fetch is one. Only PermanentError stops early.
          if (err instanceof PermanentError) throw new AbortError(err);
          throw err instanceof TypeError ? Object.assign(new Error(err.message), { cause: err }) : err;
        }
      },
      {
        retries: Number.POSITIVE_INFINITY,
        factor: 2,
        minTimeout: minDelayMs,
        maxTimeout: maxDelayMs,
        randomize: true,
        maxRetryTime: waitSeconds === 0 ? Number.POSITIVE_INFINITY : waitSeconds * 1000,
        onFailedAttempt: ({ error, attemptNumber }) => {
          log.warn(
            {
              attempt: attemptNumber,
              waitedSeconds: Math.round((Date.now() - started) / 1000),
              err: describe(error),
            },
            `waiting for ${what}`,
          );
        },
      },
    );
  } catch (err) {
    if (err instanceof PermanentError) throw err;
    const seconds = Math.round((Date.now() - started) / 1000);
    throw new Error(`${what} did not answer within ${seconds} s (STARTUP_WAIT_SECONDS): ${describe(err)}`, {
      cause: err,
    });
  }
}

/**
 * The pause before retry `attempt` (1-based) of a dependency that runs beside the service rather than
 * before it (Kafka): 0.5 s doubling to 10 s, jittered ±20%, the same curve as `waitFor`.
 */
export function backoffMs(attempt: number, minDelayMs = 500, maxDelayMs = 10_000): number {
  const base = Math.min(maxDelayMs, minDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** The error's message and, for network failures, its cause's code (ECONNREFUSED, ENOTFOUND…). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: string; message?: string } | undefined;
  const code = (err as { code?: string }).code ?? cause?.code;
  return code && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
}
