import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Who holds the embedded store's directory. The engine locks `<DATA_DIR>/status` for as long as a process
 * has the store open and writes that process's id into it; a second process is refused with the engine's
 * raw "Cannot lock file" exception, which is why start-up asks here first (docs/operations.md "Start-up").
 */
export interface DataDirHolder {
  pid: number;
  /** Its command line, when /proc shows it. */
  command?: string;
}

/** The live process, other than this one, that has `dir`'s store open; undefined when there is none. */
export function dataDirHolder(dir: string): DataDirHolder | undefined {
  const status = join(dir, 'status');
  let pid: number;
  try {
    pid = Number(/^PID: (\d+)$/m.exec(readFileSync(status, 'utf8'))?.[1]);
  } catch {
    return undefined; // no store there yet
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  // A file left by a process that ended (even SIGKILLed) holds no lock: its pid must still have it open.
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined; // no such process (or no /proc: the engine's own check still refuses a real holder)
  }
  const holds = fds.some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === status;
    } catch {
      return false;
    }
  });
  if (!holds) return undefined;
  let command: string | undefined;
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') || undefined;
  } catch {
    command = undefined;
  }
  return { pid, command };
}

/** The start-up error for a store in use: by whom, and how to start on another directory. */
export function dataDirInUseMessage(dir: string, holder: DataDirHolder): string {
  const who = holder.command ? `pid ${holder.pid}: ${holder.command}` : `pid ${holder.pid}`;
  return (
    `DATA_DIR ${dir} is in use by another process (${who}). The embedded store belongs to one process: ` +
    `stop that one, or start this one on another directory, e.g. DATA_DIR=./data-2 npm start`
  );
}
