import type { z } from 'zod';
import { activitySchemas, catalogSchemas } from '../shared/records/index.js';

/** How a CSV cell of a field becomes a JSON value: decided from the record schemas, not listed by hand. */
export type CellKind = 'string' | 'boolean' | 'number' | 'instant' | 'json';

const ok = (s: z.ZodType, v: unknown) => s.safeParse(v).success;

/** Every field name any record may carry, with the kind its cells are read as. */
export const CSV_FIELDS: ReadonlyMap<string, CellKind> = (() => {
  const kinds = new Map<string, CellKind>();
  for (const schema of [...activitySchemas, ...catalogSchemas]) {
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      if (kinds.has(name)) continue;
      let kind: CellKind = 'string';
      if (ok(field, true) && !ok(field, 'x')) kind = 'boolean';
      else if (ok(field, { a: 1 })) kind = 'json';
      else if (ok(field, 1) && ok(field, '2026-01-01T00:00:00Z') && !ok(field, '1')) kind = 'instant';
      else if (ok(field, 1) && !ok(field, '1')) kind = 'number';
      kinds.set(name, kind);
    }
  }
  return kinds;
})();

/** A cell as its field's JSON value (an empty cell is an absent field: undefined). */
export function cellValue(kind: CellKind, cell: string): unknown {
  if (cell === '') return undefined;
  switch (kind) {
    case 'boolean':
      return cell === 'true' ? true : cell === 'false' ? false : cell;
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(cell) ? Number(cell) : cell;
    case 'instant':
      return /^\d+$/.test(cell) ? Number(cell) : cell;
    case 'json':
      try {
        return JSON.parse(cell) as unknown;
      } catch {
        return cell;
      }
    default:
      return cell;
  }
}
