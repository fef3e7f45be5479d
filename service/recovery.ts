import pRetry from 'p-retry';
import type { Pipeline } from '../ingest/pipeline.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/log.js';

export interface Recovery {
  /** Settles when the start-up recovery (ledger retention, unfinished re-datings) has run. */
  recovered: Promise<void>;
  /** Ends the retry loop (at shutdown). */
  stop(): void;
}

/**
 * Ledger retention and any list re-dating a crash left unfinished (ARCHITECTURE.md, storage), in the
 * processes that write (not an API that hands its ingest to Kafka). Queued ahead of every write, but
 * beside the API: readers only ever read finished generations (docs/records.md "Counted once": the API
 * answers at once after a crash). Retried with backoff while ClickHouse fails; meanwhile each list is still re-dated
 * before its next write.
 */
export function startRecovery(config: Config, pipeline: Pipeline, log: Logger): Recovery {
  const stopRecovery = new AbortController();
  const writes = config.ROLE !== 'api' || config.KAFKA_BROKERS.length === 0;
  const recovered = writes
    ? pRetry(() => pipeline.recover(), {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: 1_000,
        maxTimeout: 30_000,
        signal: stopRecovery.signal,
        onFailedAttempt: ({ error, attemptNumber }) => {
          // Stopping aborts the retry loop, which reports the abort as a failed attempt: not an error.
          if (!stopRecovery.signal.aborted)
            log.error({ err: error, attempt: attemptNumber }, 'start-up recovery failed; retrying');
        },
      }).catch(() => undefined) // only when stopped
    : Promise.resolve();
  return { recovered, stop: () => stopRecovery.abort() };
}
