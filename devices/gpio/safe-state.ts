/**
 * Plain steps that put outputs into their safe state from another process (the crash watcher, or
 * `safe-state-watcher.js --apply <file>` run by systemd's ExecStopPost=). They are data, not code,
 * so the watcher needs nothing but Node's built-ins: this module imports no other project file.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

export type SafeStateStep =
  /** Write `data` to a file (a sysfs attribute, a simulated line). */
  | { kind: 'write'; path: string; data: string }
  /**
   * Stop the process whose pid is in `pid_file` if its command line contains `expect` (so a
   * recycled pid is never killed), e.g. the gpioset that still holds a line at its last value.
   */
  | { kind: 'kill'; pid_file: string; expect: string }
  /** Start a detached process (a gpioset holding the safe value) and record its pid. */
  | { kind: 'spawn'; command: string; args: string[]; pid_file?: string };

export interface SafeStateSpec {
  /** The process whose end triggers the steps. */
  parent_pid: number;
  steps: SafeStateStep[];
  /** Where the watcher records what it did (JSON), for the next start and for tests. */
  report_file?: string;
}

export interface SafeStateReport {
  /** `applied`: the parent ended without disarming. `disarmed`: it stopped cleanly first. */
  outcome: 'applied' | 'disarmed';
  parent_pid: number;
  at: string;
  steps: number;
  errors: string[];
}

/** Printed once on stdout when the watcher is armed; the parent waits for it. */
export const ARMED_LINE = 'armed';
/** Written by the parent before closing the pipe on a clean stop. */
export const DISARM_LINE = 'disarm';

const KILL_WAIT_MS = 2_000;
const POLL_MS = 20;

function isSafeStateStep(value: unknown): value is SafeStateStep {
  if (typeof value !== 'object' || value === null) return false;
  const step = value as Record<string, unknown>;
  if (step.kind === 'write') return typeof step.path === 'string' && typeof step.data === 'string';
  if (step.kind === 'kill') return typeof step.pid_file === 'string' && typeof step.expect === 'string';
  if (step.kind === 'spawn') {
    return (
      typeof step.command === 'string' &&
      Array.isArray(step.args) &&
      step.args.every((a) => typeof a === 'string') &&
      (step.pid_file === undefined || typeof step.pid_file === 'string')
    );
  }
  return false;
}

/** Parses and checks a spec; throws a plain Error (the watcher has no error catalogue). */
export function parseSafeStateSpec(text: string): SafeStateSpec {
  const value = JSON.parse(text) as unknown;
  if (typeof value !== 'object' || value === null) throw new Error('the safe-state spec is not an object');
  const spec = value as Record<string, unknown>;
  if (!Number.isInteger(spec.parent_pid) || (spec.parent_pid as number) <= 0) throw new Error('parent_pid must be a positive integer');
  if (!Array.isArray(spec.steps) || !spec.steps.every(isSafeStateStep)) throw new Error('steps must be a list of write/kill/spawn steps');
  if (spec.report_file !== undefined && typeof spec.report_file !== 'string') throw new Error('report_file must be a string');
  return value as SafeStateSpec;
}

function alive(pid: number): boolean {
  try {
    // A zombie still answers kill(0); its /proc status says Z.
    const status = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(status);
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function killRecorded(step: { pid_file: string; expect: string }): Promise<void> {
  let text: string;
  try {
    text = readFileSync(step.pid_file, 'utf8');
  } catch {
    return; // nothing recorded: nothing holds the line
  }
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return; // already gone
  }
  if (!cmdline.includes(step.expect)) return;
  process.kill(pid, 'SIGTERM');
  for (let waited = 0; waited < KILL_WAIT_MS && alive(pid); waited += POLL_MS) await sleep(POLL_MS);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

function spawnDetached(step: { command: string; args: string[]; pid_file?: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(step.command, step.args, { detached: true, stdio: 'ignore' });
    child.once('error', reject);
    child.once('spawn', () => {
      child.unref();
      if (step.pid_file !== undefined && child.pid !== undefined) writeFileSync(step.pid_file, `${child.pid}\n`);
      resolve();
    });
  });
}

/** Runs every step; a failing step is recorded and the rest still run (best effort for safety). */
export async function applySafeStateSteps(steps: readonly SafeStateStep[]): Promise<string[]> {
  const errors: string[] = [];
  for (const step of steps) {
    try {
      if (step.kind === 'write') writeFileSync(step.path, step.data);
      else if (step.kind === 'kill') await killRecorded(step);
      else await spawnDetached(step);
    } catch (error) {
      const where = step.kind === 'write' ? step.path : step.kind === 'kill' ? step.pid_file : step.command;
      errors.push(`${step.kind} ${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return errors;
}
