import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's version from the nearest package.json above this file (works from sources and dist/). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file))
      return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version);
    dir = dirname(dir);
  }
  return '0.0.0';
}
