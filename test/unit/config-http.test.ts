import { describe, expect, it } from 'vitest';
import { loadConfig, maxConnectionsPerAddress } from '../../shared/config.js';

describe('HTTP edge settings (issue 19)', () => {
  it('defaults: rate limit off, 15 s for a head, 30 s for a request, 1000 connections, 64 MiB of bodies', () => {
    const c = loadConfig({});
    expect([
      c.RATE_LIMIT_PER_KEY,
      c.HTTP_HEADERS_TIMEOUT_MS,
      c.HTTP_REQUEST_TIMEOUT_MS,
      c.HTTP_MAX_CONNECTIONS,
      c.HTTP_BODY_BUDGET_MB,
    ]).toEqual([0, 15_000, 30_000, 1_000, 64]);
  });
  it('one address gets a quarter of HTTP_MAX_CONNECTIONS unless set; a socket past its answer 2 s (issue 32)', () => {
    expect(maxConnectionsPerAddress(loadConfig({}))).toBe(250);
    expect(maxConnectionsPerAddress(loadConfig({ HTTP_MAX_CONNECTIONS: '3' }))).toBe(1);
    expect(maxConnectionsPerAddress(loadConfig({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '40' }))).toBe(40);
    expect(loadConfig({}).HTTP_CLOSE_GRACE_MS).toBe(2_000);
    expect(() =>
      loadConfig({ HTTP_MAX_CONNECTIONS: '100', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '101' }),
    ).toThrow('HTTP_MAX_CONNECTIONS_PER_ADDRESS: must not exceed HTTP_MAX_CONNECTIONS (100)');
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' })).toThrow(
      /HTTP_MAX_CONNECTIONS_PER_ADDRESS/,
    );
    expect(() => loadConfig({ HTTP_CLOSE_GRACE_MS: '10' })).toThrow(/HTTP_CLOSE_GRACE_MS/);
  });
  it('names a bad value', () => {
    expect(() => loadConfig({ RATE_LIMIT_PER_KEY: '-1' })).toThrow(/RATE_LIMIT_PER_KEY/);
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS: '0' })).toThrow(/HTTP_MAX_CONNECTIONS/);
    expect(() => loadConfig({ HTTP_BODY_BUDGET_MB: 'lots' })).toThrow(/HTTP_BODY_BUDGET_MB/);
  });
  it('a head may not have longer than the whole request', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(
      'HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS (10000)',
    );
  });
});
