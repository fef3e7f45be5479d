/**
 * Packages measured only as peers (not used by the service, not in package.json): installed on first use
 * into .cache/bench-peers at a pinned version, so a plain `npm install` stays free of them and of their
 * engine warnings (@platformatic/kafka's own dependencies declare Node >= 22.19).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const DIR = resolve(import.meta.dirname, '../.cache/bench-peers');

/** The module `name@version`, installed into .cache/bench-peers when missing. */
export async function importPeer<T>(name: string, version: string): Promise<T> {
  const installed = join(DIR, 'node_modules', name, 'package.json');
  if (!existsSync(installed) || JSON.parse(readFileSync(installed, 'utf8')).version !== version) {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(join(DIR, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
    console.error(`bench: installing the peer ${name}@${version} into .cache/bench-peers`);
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `${name}@${version}`],
      {
        cwd: DIR,
        stdio: ['ignore', 'ignore', 'inherit'],
        // npm checks engines against the Node that runs it: the bench's own (Node 26 in BENCHMARKS.md).
        env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` },
      },
    );
  }
  // Resolved from inside .cache/bench-peers, where the package lives.
  const entry = join(DIR, `entry-${name.replace(/[^a-z0-9]/gi, '_')}.mjs`);
  writeFileSync(entry, `export * from ${JSON.stringify(name)};\n`);
  return (await import(pathToFileURL(entry).href)) as T;
}
