import { checkRecord, type MailstatsRecord } from '../shared/records/index.js';
import type { DecodedItem, Rejection } from './sink.js';

/** Validate decoded items: the records that pass (with their original JSON value), and why the rest fail. */
export function validateItems(items: DecodedItem[]): {
  valid: { record: MailstatsRecord; value: unknown }[];
  rejected: Rejection[];
} {
  const valid: { record: MailstatsRecord; value: unknown }[] = [];
  const rejected: Rejection[] = [];
  for (const item of items) {
    if ('error' in item) {
      rejected.push({ line: item.line, reason: item.error });
      continue;
    }
    const check = checkRecord(item.value);
    if (check.ok) valid.push({ record: check.record, value: item.value });
    else rejected.push({ line: item.line, reason: check.reason });
  }
  return { valid, rejected };
}
