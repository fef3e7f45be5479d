// A real ClickHouse server (the engine version chdb ships, 26.x) for server-mode tests, benchmarks and
// local development, started from the engine library the project already installs
// (`@chdb/lib-linux-x64-gnu/libchdb.so`). Nothing is downloaded.
//
// How: the library exports `query_stable_v2(argc, argv)`, which runs `clickhouse-local` with a command
// line. `clickhouse-local` opens real HTTP and native TCP listeners with `SYSTEM START LISTEN HTTP/TCP`;
// they live while its last query runs. That query reads standard input to its end, so the server lives
// exactly as long as the pipe from its parent: when the parent dies (even by SIGKILL), the pipe closes and
// the server stops by itself. Node has no FFI of its own, so the call is made from Python's standard
// `ctypes` (python3, present on the machines this project runs on). See docs/development.md, "A real
// ClickHouse server".
//
// A replicated cluster cannot be built this way: clickhouse-local opens no interserver listener and runs
// no DDL worker (docs/deployment.md, "Cluster mode").
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The engine library that `chdb` installed (linux-x64-gnu is the platform the project ships for). */
export function engineLibrary() {
  try {
    return join(dirname(require.resolve('@chdb/lib-linux-x64-gnu/package.json')), 'libchdb.so');
  } catch {
    throw new Error(
      'clickhouse-server: the engine library @chdb/lib-linux-x64-gnu is not installed (it comes with ' +
        'the optional dependency chdb on linux-x64): run npm install',
    );
  }
}

// Runs clickhouse-local's main with argv[2:]; its exit code becomes ours.
// Node's stdin pipe is a socket, which clickhouse-local cannot open as /dev/stdin: a thread copies it
// into a real pipe on fd 0 and closes that pipe when the socket ends (the parent is gone).
const PYTHON = `
import ctypes, os, sys, threading
r, w = os.pipe()
parent = os.dup(0)
os.dup2(r, 0)
def watch():
    while os.read(parent, 4096):
        pass
    os.close(w)
threading.Thread(target=watch, daemon=True).start()
lib = ctypes.CDLL(sys.argv[1])
args = [b'clickhouse'] + [a.encode() for a in sys.argv[2:]]
argv = (ctypes.c_char_p * len(args))(*args)
lib.query_stable_v2.restype = ctypes.c_void_p
lib.query_stable_v2(len(args), argv)
`;

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolvePort(port));
    });
  });
}

async function answers(url) {
  try {
    const res = await fetch(`${url}/?query=SELECT%20version()`, { signal: AbortSignal.timeout(1_000) });
    return res.ok ? (await res.text()).trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Start a server on free loopback ports with `dir` as its data path (a fresh temp dir when omitted).
 * `kill()` SIGKILLs it (a crash: what it had not written is lost, as on a real server); `restart()`
 * starts it again on the same path and ports; `stop()` ends it and removes a temp dir it made.
 */
export async function startClickHouseServer({ dir, backupsDir, timeoutMs = 60_000, log = () => {} } = {}) {
  const ownDir = !dir;
  const path = resolve(dir ?? mkdtempSync(join(tmpdir(), 'mailstats-clickhouse-')));
  const backups = resolve(backupsDir ?? join(path, 'backups'));
  mkdirSync(backups, { recursive: true });
  const library = engineLibrary();
  const [httpPort, tcpPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${httpPort}`;
  let child;
  let stderr = '';

  const launch = async () => {
    stderr = '';
    child = spawn(
      'python3',
      [
        '-c',
        PYTHON,
        library,
        '--multiquery',
        `--path=${path}/`,
        `--http_port=${httpPort}`,
        `--tcp_port=${tcpPort}`,
        '--listen_host=127.0.0.1',
        '--query=SYSTEM START LISTEN HTTP; SYSTEM START LISTEN TCP; ' +
          "SELECT * FROM file('/dev/stdin', 'LineAsString') FORMAT Null",
        // Server settings go after `--`.
        '--',
        `--backups.allowed_path=${backups}/`,
        '--background_pool_size=16',
      ],
      { stdio: ['pipe', 'ignore', 'pipe'] },
    );
    const proc = child;
    proc.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-4_000);
    });
    proc.on('error', (err) => {
      stderr += `\n${err.message}`;
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (proc.exitCode !== null || proc.signalCode !== null || proc.spawnfile === undefined)
        throw new Error(`clickhouse-server: exited before it answered (is python3 installed?)\n${stderr}`);
      const version = await answers(url);
      if (version) return version;
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`clickhouse-server: no answer on ${url} within ${timeoutMs} ms\n${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const exited = (proc) =>
    proc.exitCode !== null || proc.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => proc.once('exit', r));

  const version = await launch();
  log(`clickhouse-server: ClickHouse ${version} at ${url} (data ${path})`);
  return {
    url,
    httpPort,
    tcpPort,
    dir: path,
    backupsDir: backups,
    version,
    /** The server process's pid (python3 running the engine). */
    get pid() {
      return child.pid;
    },
    /** SIGKILL: a crash at whatever the server was doing. */
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    /** Start again on the same data path and ports (after kill() or stop({ keepData: true })). */
    async restart() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited(child);
      }
      return launch();
    },
    /** End the server (closing its stdin lets it shut down cleanly); remove the data dir it made. */
    async stop({ keepData = false } = {}) {
      const proc = child;
      proc.stdin.end();
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await exited(proc);
      clearTimeout(timer);
      if (ownDir && !keepData) rmSync(path, { recursive: true, force: true });
    },
  };
}

const HELP = `Usage: node scripts/clickhouse-server.mjs start [--dir DIR]

Starts a real ClickHouse server (the engine chdb ships) on free loopback ports, prints
CLICKHOUSE_URL=…, and runs until Ctrl-C. Data in DIR (default: a fresh temp dir, removed at exit).
Needs python3 and npm install (the engine library).`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args[0] !== 'start') {
    console.log(HELP);
    process.exit(args[0] ? 1 : 0);
  }
  const di = args.indexOf('--dir');
  const server = await startClickHouseServer({
    dir: di >= 0 ? args[di + 1] : undefined,
    log: (m) => console.error(m),
  });
  console.log(`CLICKHOUSE_URL=${server.url}`);
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
