import { isIPv6 } from 'node:net';

/**
 * The key a peer is counted under for per-address limits (the connection share, the body share, the
 * failed-attempt buckets: docs/operations.md "HTTP limits"): an IPv4 address as it is (also when it
 * arrives IPv4-mapped, `::ffff:1.2.3.4`, or through NAT64, `64:ff9b::/96`, which carries the IPv4
 * client in its last 32 bits), an IPv6 address by its /64, the block one subscriber is usually given,
 * so that walking through the addresses of one's own block does not multiply one's share.
 */
export function peerKey(address: string | undefined): string {
  if (address === undefined || address === '') return '?';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const bare = address.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names an interface, not a peer
  if (!isIPv6(bare)) return address;
  const groups = ipv6Groups(bare);
  // The well-known NAT64 prefix (RFC 6052): every IPv4 client of a NAT64 gateway arrives under it, so
  // its /64 would put all of them under one key.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0))
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 part as two). */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const part = (s: string) => {
    if (s === '') return [];
    return s.split(':').flatMap((g) => {
      if (!g.includes('.')) return [parseInt(g, 16)];
      const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
}
