/** Network failures that mean "ClickHouse is not there right now", not "the query is wrong". */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether `err` (or an error in its `cause` chain) is a failed connection to ClickHouse: a server gone
 * away, restarting or unreachable. Callers answer it as 503 with Retry-After (docs/operations.md "Start-up"):
 * waiting fixes it, and it is nobody's mistake.
 */
export function isClickHouseUnreachable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (/^(socket hang up|Timeout error\.?)$/i.test(e.message)) return true;
  }
  return false;
}
