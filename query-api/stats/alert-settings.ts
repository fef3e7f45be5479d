import { LRUCache } from 'lru-cache';
import type { MarketerStore } from '../../shared/clickhouse/marketer-store.js';
import type { AlertSettingsSource } from './totals.js';

/**
 * Lists' stored alert thresholds, each read at most once a second (a change made through any process is
 * in every answer within that second: the thresholds are part of the totals answer's cache key).
 */
export function alertSettingsSource(
  store: Pick<MarketerStore, 'alertSettings'>,
  ttlMs = 1_000,
): AlertSettingsSource {
  const held = new LRUCache<number, { settings: string | undefined }>({ max: 10_000, ttl: ttlMs });
  return {
    async of(listId) {
      let hit = held.get(listId);
      if (!hit) {
        hit = { settings: await store.alertSettings(listId) };
        held.set(listId, hit);
      }
      return hit.settings;
    },
  };
}
