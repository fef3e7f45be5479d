import { isIPv6 } from 'node:net';

/**
 * The key a peer is counted under for per-address limits (the connection share, the failed-attempt
 * buckets: docs/operations.md "HTTP limits"): an IPv4 address as it is (also when it arrives
 * IPv4-mapped, `::ffff:1.2.3.4`), an IPv6 address by its /64, the block one subscriber is usually given,
 * so that walking through the addresses of one's own block does not multiply one's share.
 */
export function peerKey(address: string | undefined): string {
  if (address === undefined || address === '') return '?';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const bare = address.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names an interface, not a peer
  if (!isIPv6(bare)) return address;
  const [head = '', tail] = bare.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  // A trailing IPv4 part (::1.2.3.4) is two groups; only the first four groups count anyway.
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
