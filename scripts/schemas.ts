/**
 * `npm run schemas`: writes schemas/records.json, the JSON Schema of the records producers send,
 * generated from the zod schemas in shared/records. A test fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { recordsJsonSchema } from '../query-api/openapi/document.js';

export const RECORDS_SCHEMA_FILE = fileURLToPath(new URL('../schemas/records.json', import.meta.url));
export const recordsSchemaText = () => JSON.stringify(recordsJsonSchema(), null, 2) + '\n';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(RECORDS_SCHEMA_FILE, recordsSchemaText());
  console.log(`wrote ${RECORDS_SCHEMA_FILE}`);
}
