import { isActivity, type MailstatsRecord } from '../../shared/records/index.js';

/** Events are keyed by list (one partition, hence one writer, per list); catalog records by entity. */
export function messageKey(r: MailstatsRecord): string {
  if (isActivity(r)) return String(r.list_id);
  switch (r.type) {
    case 'list':
      return `list:${r.list_id}`;
    case 'user':
      return `user:${r.user_id}`;
    case 'list_access':
      return `list_access:${r.user_id}:${r.list_id}`;
    case 'smtp_account':
      return `smtp_account:${r.account_id}`;
    case 'template':
      return `template:${r.account_id}/${r.template_id}`;
    case 'workflow':
      return `workflow:${r.workflow_id}`;
  }
}

/**
 * Most bytes of messages per produce request (and per DLQ send). The broker refuses a record batch
 * over `message.max.bytes` (1 MiB by default, per partition and request); staying under 900 KB for
 * the whole request keeps every partition's batch under it whatever the key spread.
 */
export const MAX_REQUEST_BYTES = 900 * 1024;

/** Per-record overhead in a v2 record batch, generously counted (varints, attributes, headers). */
const RECORD_OVERHEAD = 64;

/** The bytes a message takes in a produce request, roughly and on the safe side. */
export function messageBytes(m: { key?: Buffer | string | null; value: Buffer | string | null }): number {
  const len = (b: Buffer | string | null | undefined) =>
    b == null ? 0 : typeof b === 'string' ? Buffer.byteLength(b) : b.length;
  return len(m.key) + len(m.value) + RECORD_OVERHEAD;
}

/** Split `items` in order into groups of at most `maxBytes` (an item larger than that goes alone). */
export function byteBatches<T>(items: T[], size: (item: T) => number, maxBytes = MAX_REQUEST_BYTES): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const n = size(item);
    if (current.length > 0 && bytes + n > maxBytes) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}
