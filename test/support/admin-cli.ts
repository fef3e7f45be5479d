import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

/** How one run of the admin CLI ended, with everything it wrote. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

export interface CliOptions {
  /** Written to the CLI's stdin, which is then closed (empty when absent). */
  stdin?: string;
  /** Called once the process is spawned; `kill` sends it SIGKILL. */
  onSpawn?: (kill: () => void) => void;
  /** SIGTERM after this many milliseconds, so that a CLI that hangs fails its test instead of the run. */
  timeout?: number;
}

/**
 * The admin CLI (`admin/cli.ts`) as an operator runs it: a child process whose environment is only PATH,
 * HOME and `env`, so that nothing of the test runner's own environment (KAFKA_BROKERS among it) leaks in.
 */
export function adminCli(
  args: string[],
  env: Record<string, string> = {},
  opts: CliOptions = {},
): Promise<CliRun> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'admin/cli.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.stdin.end(opts.stdin ?? '');
    const timer =
      opts.timeout === undefined ? undefined : setTimeout(() => child.kill('SIGTERM'), opts.timeout);
    opts.onSpawn?.(() => child.kill('SIGKILL'));
    // 'close', not 'exit': both pipes are drained by then, so `out` and `err` are complete.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      ok({ code, signal, out, err });
    });
  });
}
