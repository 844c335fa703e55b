/** Whether the processes a test started (or made a program start) have really ended. */
import { readFileSync } from 'node:fs';
import { until } from './until.js';

/**
 * Whether a process still runs. A zombie has ended: once its parent is gone it waits for init
 * to reap it, and a container's init may not hurry.
 */
export function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') !== true;
  } catch {
    return false;
  }
}

/**
 * Waits until a signalled process has ended; throws if it still runs after `timeoutMs`. A process
 * closes its files before it becomes a zombie, so the end of its pipe (which settles a command)
 * can be seen a moment before /proc shows it dead.
 */
export async function ended(pid: number, timeoutMs = 10_000): Promise<true> {
  return until(`process ${pid} to end`, () => (alive(pid) ? undefined : true), timeoutMs);
}
