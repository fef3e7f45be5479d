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
