import { CATALOG_FINGERPRINT } from '../../shared/catalog/catalog.js';
import { LIST_CHANGES_POLL } from '../../shared/clickhouse/list-changes.js';

const normal = (sql: string) => sql.replace(/\s+/g, ' ').trim();
const poll = normal(CATALOG_FINGERPRINT);

/** Whether a statement is the catalog's change poll, which runs on its own timer beside everything else. */
export const isCatalogPoll = (statement: string): boolean => normal(statement) === poll;

const changePoll = normal(LIST_CHANGES_POLL);

/** Whether a statement is the change signal's poll (server mode), which runs on its own timer too. */
export const isChangePoll = (statement: string): boolean => normal(statement) === changePoll;
