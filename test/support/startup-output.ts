import { spawn } from 'node:child_process';

/**
 * Start `main.ts` as `npm start` does (PORT 0, no demo data, an environment of only PATH, HOME and `env`),
 * collect what it writes (stdout and stderr) until a line matches `until` or it exits, then stop it.
 * Returns the output, for tests of the start-up banner and log lines.
 */
export async function startupOutput(env: Record<string, string>, until: RegExp): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      SEED_DEMO: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += String(c)));
  child.stderr.on('data', (c) => (output += String(c)));
  const exited = new Promise<void>((ok) => child.on('exit', () => ok()));
  try {
    for (let i = 0; i < 1200 && !until.test(output); i++) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return output;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
