import { describe, expect, it } from 'vitest';
import { peerKey } from '../../query-api/peer-address.js';

describe('peerKey: NAT64 (64:ff9b::/96)', () => {
  it('an IPv4 client behind NAT64 is its embedded IPv4 address, not the one /64 every such client shares', () => {
    // Before: all of them were 64:ff9b:0:0::/64, one share and one failed-attempt budget for every IPv4 client.
    expect(peerKey('64:ff9b::c000:201')).toBe('192.0.2.1');
    expect(peerKey('64:ff9b::192.0.2.1')).toBe('192.0.2.1');
    expect(peerKey('64:FF9B:0:0:0:0:C633:6407')).toBe('198.51.100.7');
    expect(peerKey('0064:ff9b:0000:0000:0000:0000:0a00:0001')).toBe('10.0.0.1');
    expect(peerKey('64:ff9b::c000:201')).not.toBe(peerKey('64:ff9b::c000:202'));
    // The same client directly over IPv4 (or IPv4-mapped) is the same key.
    expect(peerKey('64:ff9b::c000:201')).toBe(peerKey('::ffff:192.0.2.1'));
  });

  it('only the /96 prefix: other addresses of 64:ff9b::/64 and the local-use prefix stay /64 blocks', () => {
    expect(peerKey('64:ff9b::1:c000:201')).toBe('64:ff9b:0:0::/64');
    expect(peerKey('64:ff9b:1::c000:201')).toBe('64:ff9b:1:0::/64');
    expect(peerKey('2001:db8::c000:201')).toBe('2001:db8:0:0::/64');
  });
});
