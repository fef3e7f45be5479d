import { CatalogNotFresh } from '../shared/catalog/catalog.js';
import { ChangeSignalNotStored } from '../shared/clickhouse/list-changes.js';
import { clickHouseUnavailable, serviceUnavailable, type RetryableError } from './api12/errors.js';
import { isClickHouseUnreachable } from '../shared/clickhouse/unreachable.js';

/**
 * Failures that waiting fixes, as the 503 (with Retry-After) they are answered with (docs/operations.md):
 * ClickHouse not answering; the catalog's poll failing for longer than CATALOG_FRESHNESS_MS (the grants and
 * keys held may be old); a write stored whose change signal is not yet (resending it is safe, and the
 * signal is retried by itself). Undefined for anything else.
 */
export function unavailableFor(err: unknown): RetryableError | undefined {
  if (isClickHouseUnreachable(err)) return clickHouseUnavailable();
  if (err instanceof CatalogNotFresh) return serviceUnavailable('the catalog could not be read recently', 1);
  if (err instanceof ChangeSignalNotStored)
    return serviceUnavailable(
      'the write is stored but not yet announced to other processes; send it again',
      1,
    );
  return undefined;
}
