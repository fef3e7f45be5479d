import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, trustProxy } from '../../shared/config.js';

const load = (TRUST_PROXY?: string) =>
  loadConfig({
    DATA_DIR: '/tmp/mailstats-trust-proxy',
    ...(TRUST_PROXY === undefined ? {} : { TRUST_PROXY }),
  });

describe('TRUST_PROXY', () => {
  it('unset, empty or 0: no proxy is trusted', () => {
    for (const v of [undefined, '', '0']) expect(trustProxy(load(v).TRUST_PROXY)).toBeUndefined();
  });

  it('a hop count: the peer and the hops before it up to the count', () => {
    const trust = trustProxy(load('1').TRUST_PROXY)!;
    expect(trust('203.0.113.9', 0)).toBe(true);
    expect(trust('203.0.113.9', 1)).toBe(false);
  });

  it("addresses, CIDRs and Express's names, comma-separated, as Express's trust proxy takes them", () => {
    const trust = trustProxy(load('loopback, 10.0.0.0/8,192.168.1.7, fd00::/8').TRUST_PROXY)!;
    expect(trust('127.0.0.1', 0)).toBe(true);
    expect(trust('::1', 0)).toBe(true);
    expect(trust('10.20.30.40', 0)).toBe(true);
    expect(trust('192.168.1.7', 3)).toBe(true);
    expect(trust('::ffff:10.1.1.1', 0)).toBe(true);
    expect(trust('fd12::1', 0)).toBe(true);
    expect(trust('192.168.1.8', 0)).toBe(false);
    expect(trust('203.0.113.9', 0)).toBe(false);
  });

  it('refuses what Express would not parse, and true (any client could name itself)', () => {
    for (const bad of ['nginx', '10.0.0.0/33', 'true', '1.2.3']) {
      expect(() => load(bad), bad).toThrow(ConfigError);
      expect(() => load(bad), bad).toThrow(/TRUST_PROXY: /);
    }
  });
});
