/**
 * One daemon per data directory: a pid file in the data directory, created exclusively. A pid
 * file whose process is gone (or is not a HomeAgent) is stale and taken over.
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { HomeAgentError } from '../shared/errors.js';

/**
 * Lock files held by daemons of this process. The file names this process's pid for every one of
 * them, so it cannot tell a second in-process daemon (a test's) from a stale file of its own.
 */
const HELD_HERE = new Set<string>();

export class PidLock {
  readonly file: string;
  #held = false;

  constructor(file: string) {
    this.file = file;
  }

  acquire(): void {
    if (HELD_HERE.has(resolve(this.file))) {
      throw new HomeAgentError(
        'HA_ERR_DAEMON_ALREADY_RUNNING',
        `another HomeAgent of this process (pid ${process.pid}) is running with this data directory (lock file ${this.file})`,
      );
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(this.file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
        this.#held = true;
        HELD_HERE.add(resolve(this.file));
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = runningOwner(this.file);
      if (owner !== undefined) {
        throw new HomeAgentError(
          'HA_ERR_DAEMON_ALREADY_RUNNING',
          `another HomeAgent (pid ${owner}) is running with this data directory (lock file ${this.file})`,
        );
      }
      unlinkSync(this.file);
    }
    throw new HomeAgentError('HA_ERR_DAEMON_ALREADY_RUNNING', `could not take the lock file ${this.file}`);
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    HELD_HERE.delete(resolve(this.file));
    try {
      if (readFileSync(this.file, 'utf8').trim() === String(process.pid)) unlinkSync(this.file);
    } catch {
      // already gone
    }
  }
}

/** The pid in the lock file if that process is alive and looks like HomeAgent; undefined if stale. */
export function runningOwner(file: string): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // ESRCH: gone. EPERM: another user's process; the daemon always runs as one user, so that
    // process is not a HomeAgent holding this data directory (after a power cut the pid may be
    // reused, and ProtectProc=invisible hides it in /proc too).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return undefined;
  }
  // After a reboot the pid may belong to an unrelated process of our own user; only a HomeAgent counts.
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return existsSync('/proc/self') ? undefined : pid;
  }
  if (!/homeagent|main\.js/.test(cmdline)) return undefined;
  return pid;
}
