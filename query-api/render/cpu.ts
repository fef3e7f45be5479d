/**
 * CPU time of one thread, from Linux's /proc (Node 20 has no per-thread CPU clock for worker threads):
 * utime + stime in clock ticks, -1 where it cannot be read. Ticks are 1/100 s on Linux (USER_HZ).
 */
import { closeSync, openSync, readSync } from 'node:fs';

export const TICK_MS = 10;

const buffer = Buffer.alloc(1024);

/** From an open `/proc/…/stat` file descriptor. */
function threadCpuTicks(fd: number): number {
  if (fd < 0) return -1;
  try {
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString('latin1', 0, n);
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks : -1;
  } catch {
    return -1;
  }
}

/** CPU ticks of thread `tid` of this process, -1 when unknown. */
export function cpuTicksOfThread(tid: number): number {
  if (tid < 0) return -1;
  let fd = -1;
  try {
    fd = openSync(`/proc/self/task/${tid}/stat`, 'r');
    return threadCpuTicks(fd);
  } catch {
    return -1;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
