import { spawn, type ChildProcess } from 'node:child_process';
import { expect, vi } from 'vitest';
import { freePort } from '../../scripts/kafka/broker.mjs';
import { serverEnv } from './service.js';

/** The service as an operator runs it: `main.ts` in a child process, on a free port. */
export interface ChildService {
  proc: ChildProcess;
  base: string;
  /** The last lines the process wrote (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<number | string>;
}

export const INGEST_TOKEN = 'child-ingest-token-abcdef0123456789';

/**
 * Spawn main.ts with `env` on DATA_DIR `dataDir` (with CLICKHOUSE_URL in the test environment: on that
 * server, in the database of `dataDir`, see serverEnv); does not wait for it to serve (see `untilServing`).
 * The child's environment is only PATH, HOME, TMPDIR, the settings below and `env`, as an operator's
 * unit file would give it: nothing else of the test runner's environment leaks in (an exported
 * KAFKA_BROKERS would otherwise turn a child meant to run without Kafka into a second consumer).
 */
export async function spawnService(
  env: Record<string, string>,
  dataDir: string,
  port?: number,
): Promise<ChildService> {
  port ??= await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    env: {
      ...runnerBasics(),
      DATA_DIR: dataDir,
      PORT: String(port),
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      INGEST_TOKEN,
      // In the `server` project: a database of its own per data dir (children on one DATA_DIR share it).
      ...serverEnv(dataDir),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n'));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | string>((resolve) =>
    proc.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return { proc, base: `http://127.0.0.1:${port}`, output: () => lines.join('\n'), exited };
}

/** What any process needs from the runner's environment to start at all (no setting of the service). */
function runnerBasics(): Record<string, string> {
  const keys = ['PATH', 'HOME', 'TMPDIR'] as const;
  return Object.fromEntries(keys.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
}

/** Wait until GET /health answers 200 (the process must stay alive meanwhile). */
export async function untilServing(child: ChildService, timeout = 180_000): Promise<void> {
  try {
    await vi.waitFor(
      async () => {
        expect(child.proc.exitCode).toBeNull();
        const res = await fetch(`${child.base}/health`);
        expect(res.status).toBe(200);
        // Alive while starting too (docs/operations.md "Start-up"): serving once no start-up step is named.
        expect(((await res.json()) as { starting?: string }).starting).toBeUndefined();
      },
      { timeout, interval: 100 },
    );
  } catch (err) {
    throw new Error(`the service did not serve: ${(err as Error).message}\n${child.output()}`, {
      cause: err,
    });
  }
}

/** SIGTERM and wait for the exit. */
export async function stopService(child: ChildService | undefined): Promise<void> {
  if (!child || child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 30_000);
  await child.exited;
  clearTimeout(timer);
}
