import { describe, expect, it } from 'vitest';
import { hmacOf } from '../../shared/clickhouse/backup-digest.js';
import {
  serverManifestSchema,
  serverSignedText,
  verifyServerManifest,
  type ServerManifest,
} from '../../shared/clickhouse/backup-server.js';

const KEY = 'unit-hmac-key-0123456789-abcdef0123456789';

/** A server backup's manifest (docs/lifecycle.md, "With CLICKHOUSE_URL"): its schema and its signature. */
describe('server backup manifest', () => {
  const fields: Omit<ServerManifest, 'hmac'> = {
    format: 'mailstats-backup',
    schema_version: 7,
    database: 'mailstats',
    created_at: '2026-11-25T03:00:00.000Z',
    ledger_ttl_days: 31,
    backup: { num_files: 72, total_size: 28282, num_entries: 60, uncompressed_size: 39191 },
    tables: {
      events: { rows: 1000, hash: '11357279821126744425' },
      catalog: { rows: 0, hash: '0' },
    },
  };
  const signed = { ...fields, hmac: hmacOf(KEY, serverSignedText(fields)) };

  it('the signature covers every field whatever the order of keys, and nothing else', () => {
    const reordered = {
      hmac: signed.hmac,
      tables: { catalog: fields.tables.catalog!, events: fields.tables.events! },
      backup: { ...fields.backup },
      created_at: fields.created_at,
      database: fields.database,
      ledger_ttl_days: 31,
      schema_version: 7,
      format: 'mailstats-backup' as const,
    };
    expect(serverSignedText(reordered)).toBe(serverSignedText(fields));
    expect(verifyServerManifest('/b', reordered, KEY)).toEqual([]);
  });

  it.each([
    ['a table hash', { tables: { ...fields.tables, events: { rows: 1000, hash: '1' } } }],
    ['a row count', { tables: { ...fields.tables, catalog: { rows: 1, hash: '0' } } }],
    ['the time', { created_at: '2020-01-01T00:00:00.000Z' }],
    ['the figures', { backup: { ...fields.backup, total_size: 1 } }],
    ['the retention', { ledger_ttl_days: 2 }],
  ])('a change of %s without the key is refused', (_, change) => {
    expect(() => verifyServerManifest('/b', { ...signed, ...change }, KEY)).toThrow(
      /signature does not match BACKUP_HMAC_KEY/,
    );
  });

  it('unsigned with a key set is refused; signed without a key set is a warning', () => {
    expect(() => verifyServerManifest('/b', fields, KEY)).toThrow(
      /is not signed, and BACKUP_HMAC_KEY is set/,
    );
    expect(verifyServerManifest('/b', signed)).toEqual([
      '/b is signed, but BACKUP_HMAC_KEY is not set: its signature was not checked',
    ]);
    expect(verifyServerManifest('/b', fields)).toEqual([]);
  });

  it('a database that is not a plain name, a table name with SQL in it, or an unknown field is refused', () => {
    expect(serverManifestSchema.safeParse(signed).success).toBe(true);
    for (const bad of [
      { ...signed, database: "mailstats AS x FROM File('/etc')" },
      { ...signed, tables: { 'events; DROP': { rows: 1, hash: '1' } } },
      { ...signed, extra: 1 },
      { ...signed, tables: { events: { rows: -1, hash: '1' } } },
    ])
      expect(serverManifestSchema.safeParse(bad).success).toBe(false);
  });
});
