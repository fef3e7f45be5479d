import { adminToken } from './admin-http.js';
import { backup, restore } from './backup.js';
import { UsageError } from './commands.js';
import { dlqExport, dlqStats } from './dlq.js';
import { erase, erasuresExport } from './erase.js';
import { importFiles } from './import.js';

/** The data's life cycle commands (docs/lifecycle.md), dispatched from cli.ts. */

/** Each life cycle command's help, printed alone by `admin <command> --help` and together by --help. */
export const LIFECYCLE_COMMANDS: Record<string, string> = {
  import: `  import [--resume] FILE…            .ndjson/.jsonl, .json (an array), .csv, each optionally .gz;
                                     - = NDJSON on stdin. Rejections go to FILE.rejected.ndjson`,
  erase: `  erase --list N --subscriber S      erase a subscriber's activity on a list (or --file F of
                                     list_id,subscriber_id[,erased_at] lines); --at TIME (RFC 3339, or
                                     epoch milliseconds): replay an earlier erasure with its original time`,
  erasures: `  erasures export [FILE]             the erasure log as CSV (list_id,subscriber_id,erased_at): keep the
                                     newest; after restoring an older backup, restore --erasures FILE`,
  backup: `  backup DIR                         a point-in-time copy of the running service's store (DIR inside
                                     BACKUP_ROOT, default DATA_DIR/backups)`,
  restore: `  restore DIR [--erasures FILE]      (service stopped) fill an empty DATA_DIR from a backup; the
                                     erasures of FILE made after it are re-applied at the next start;
                                     with CLICKHOUSE_URL: into CLICKHOUSE_DATABASE, a new database`,
  dlq: `  dlq export [--reason TEXT] [--since TIME] [FILE]   dead letters as NDJSON (Kafka mode)
  dlq stats                          dead letters counted by reason`,
};

const LIFECYCLE_AUTH =
  'authorised by ADMIN_TOKEN, else DATA_DIR/admin-token (restore needs none: it works on DATA_DIR)';

export const LIFECYCLE_HELP = `
The data's life cycle (docs/lifecycle.md); ${LIFECYCLE_AUTH}:
${Object.values(LIFECYCLE_COMMANDS).join('\n')}`;

/** One life cycle command's help (`admin erase --help`), or undefined when `command` is not one. */
export const lifecycleCommandHelp = (command: string): string | undefined =>
  LIFECYCLE_COMMANDS[command] && `${LIFECYCLE_COMMANDS[command]}\n\n  (docs/lifecycle.md; ${LIFECYCLE_AUTH})`;

export const LIFECYCLE_OPTIONS = {
  resume: { type: 'boolean' },
  subscriber: { type: 'string' },
  file: { type: 'string' },
  reason: { type: 'string' },
  since: { type: 'string' },
  at: { type: 'string' },
  erasures: { type: 'string' },
  'chunk-records': { type: 'string' },
} as const;

type Values = Partial<Record<string, string | boolean | undefined>>;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** Runs a life cycle command and gives its exit status, or undefined when the command is not one. */
export async function runLifecycle(
  positionals: string[],
  values: Values,
  url: string,
): Promise<number | undefined> {
  const [command, ...rest] = positionals;
  // The token first: without one nothing is read or sent (restore needs none: it works on DATA_DIR).
  if (['import', 'erase', 'erasures', 'backup', 'dlq'].includes(command ?? '')) adminToken();
  switch (command) {
    case 'import': {
      const chunk = str(values['chunk-records']);
      const chunkRecords = chunk === undefined ? undefined : Number(chunk);
      if (chunkRecords !== undefined && !(Number.isSafeInteger(chunkRecords) && chunkRecords > 0))
        throw new UsageError('--chunk-records must be a positive integer');
      return importFiles(rest, { url, resume: values.resume === true, chunkRecords });
    }
    case 'erase':
      if (rest.length > 0)
        throw new UsageError(`erase takes no positional arguments (got "${rest.join(' ')}")`);
      return erase(
        {
          list: str(values.list),
          subscriber: str(values.subscriber),
          file: str(values.file),
          at: str(values.at),
        },
        url,
      );
    case 'erasures':
      if (rest[0] !== 'export' || rest.length > 2)
        throw new UsageError('erasures: give export [FILE] (the erasure log as CSV)');
      return erasuresExport(rest[1], url);
    case 'backup':
      if (rest.length > 1) throw new UsageError('backup takes one directory');
      return backup(rest[0], url);
    case 'restore':
      if (rest.length > 1) throw new UsageError('restore takes one directory');
      return restore(rest[0], str(values.erasures));
    case 'dlq': {
      const filter = { reason: str(values.reason), since: str(values.since) };
      if (rest[0] === 'export') return dlqExport(filter, rest[1], url);
      if (rest[0] === 'stats') return dlqStats(filter, url);
      throw new UsageError('dlq: give export or stats');
    }
    default:
      return undefined;
  }
}
