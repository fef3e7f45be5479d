import type { RequestListener } from 'node:http';
import { createStartingApp } from '../query-api/ops/starting-app.js';
import type { Logger } from '../shared/log.js';

/** The step start-up is at, as /readyz and the 503 name it (docs/operations.md "Start-up"). */
export interface StartStep {
  /** The /readyz check that is not ok yet. */
  check: string;
  /** What the service waits for, e.g. "waiting for ClickHouse". */
  what: string;
}

/**
 * The listener's request handler, swapped once: the starting app (503 with Retry-After) while the store,
 * migrations and roles come up, then the service's own app. The listener is bound before any of them, so
 * probes and load balancers get answers rather than refused connections.
 */
export class ReadyGate {
  private handler: RequestListener;
  private current: StartStep = { check: 'clickhouse', what: 'waiting for ClickHouse' };

  constructor(log: Logger) {
    this.handler = createStartingApp(() => this.current, log);
  }

  readonly listener: RequestListener = (req, res) => this.handler(req, res);

  /** The next start-up step, named in /readyz and in the 503s from now on. */
  step(step: StartStep): void {
    this.current = step;
  }

  /** The service is up: every request from now on goes to `app`. */
  open(app: RequestListener): void {
    this.handler = app;
  }
}
