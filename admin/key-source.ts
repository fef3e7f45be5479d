import { readFileSync } from 'node:fs';
import { UsageError } from './commands.js';

/** Where `user add` may take a key from: never an argument (docs/operations.md "Admin CLI"). */
export const KEY_SOURCES = '--generate-key (preferred), --key-stdin, --key-file PATH or MAILSTATS_API_KEY';

/** `--key K` would leave the key in the process list (ps) and in the shell's history. */
export const KEY_IN_ARGV =
  '--key is not taken: a key in the arguments is visible in the process list and kept in the shell history. ' +
  `Use ${KEY_SOURCES}.`;

export interface KeyOptions {
  key?: string;
  'generate-key'?: boolean;
  'key-stdin'?: boolean;
  'key-file'?: string;
}

/**
 * The key `user add` stores (as its SHA-256): undefined for --generate-key (the command makes one),
 * else read from standard input, a file or MAILSTATS_API_KEY. Exactly one source.
 */
export function readKey(
  o: KeyOptions,
  env: NodeJS.ProcessEnv,
  readStdin: () => string,
): { generate: true } | { generate: false; key: string } {
  if (o.key !== undefined) throw new UsageError(KEY_IN_ARGV);
  const fromEnv = env.MAILSTATS_API_KEY !== undefined && env.MAILSTATS_API_KEY !== '';
  const given = [
    o['generate-key'] && '--generate-key',
    o['key-stdin'] && '--key-stdin',
    o['key-file'] !== undefined && '--key-file',
    fromEnv && 'MAILSTATS_API_KEY',
  ].filter((s): s is string => typeof s === 'string');
  if (given.length === 0) throw new UsageError(`give one of ${KEY_SOURCES.replace(' (preferred)', '')}`);
  if (given.length > 1) {
    const flags = given.filter((g) => g !== 'MAILSTATS_API_KEY').join(' and ');
    throw new UsageError(
      fromEnv
        ? `MAILSTATS_API_KEY is set and ${flags} given: give one key source (unset MAILSTATS_API_KEY or drop ${flags})`
        : `give one key source, not ${flags}`,
    );
  }
  if (o['generate-key']) return { generate: true };
  let key: string;
  if (o['key-stdin']) {
    key = readStdin().trim();
    if (!key) throw new UsageError('--key-stdin: no key on standard input');
  } else if (o['key-file'] !== undefined) {
    const file = o['key-file'];
    try {
      key = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new UsageError(
        `--key-file: cannot read ${file} (${(err as { code?: string }).code ?? String(err)})`,
      );
    }
    if (!key) throw new UsageError(`--key-file: ${file} is empty`);
  } else key = (env.MAILSTATS_API_KEY ?? '').trim();
  return { generate: false, key };
}
