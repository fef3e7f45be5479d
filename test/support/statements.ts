import { CATALOG_FINGERPRINT } from '../../shared/catalog/catalog.js';

const normal = (sql: string) => sql.replace(/\s+/g, ' ').trim();
const poll = normal(CATALOG_FINGERPRINT);

/** Whether a statement is the catalog's change poll, which runs on its own timer beside everything else. */
export const isCatalogPoll = (statement: string): boolean => normal(statement) === poll;
