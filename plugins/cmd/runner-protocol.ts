/**
 * The wire protocol between the daemon's cmd plugin and the isolated runner service
 * (runner-service.ts): newline-delimited JSON frames over a Unix stream socket, one connection
 * per command, the way the CLI socket frames its requests.
 *
 *   daemon → runner  {"type":"run","v":1,"executable":"/usr/bin/ls","argv0":"ls","args":["-l"],
 *                     "base":"","workdir":"","timeout_ms":30000,"max_output_bytes":32000,"kill_grace_ms":2000}
 *   runner → daemon  {"type":"started","pid":4711,"workdir":"/var/lib/homeagent-cmd"}
 *   daemon → runner  {"type":"cancel"}                                    (optional)
 *   runner → daemon  {"type":"result","workdir":"...","result":{exit_code, signal, stdout, ...}}
 *               or   {"type":"error","error":{reason, field?, detail, hint?}}    then it closes
 *
 * The policy (allowlist, argument rules, audit) stays in the daemon: the runner starts exactly the
 * approved executable with exactly these arguments, never through a shell, in a working directory
 * it checks itself against its own view of the file system. A connection that closes before the
 * result ends the command like a cancel does.
 */
import type { ToolErrorInfo } from '../../src/sdk/index.js';
import { MAX_ARG_LENGTH, MAX_ARGV_ITEMS } from './policy.js';
import type { RunResult } from './runner.js';

export const PROTOCOL_VERSION = 1;
/** The largest frame the runner reads: a full argv (128 × 4096 characters) fits several times over. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** The largest frame the daemon reads: two capped streams of 1 MiB, JSON-escaped. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** The runner's own ceilings, whatever a request asks (the schema's maxima plus the kill grace). */
export const MAX_TIMEOUT_MS = 600_000;
export const MAX_OUTPUT_BYTES = 1_048_576;
export const MAX_KILL_GRACE_MS = 60_000;

export interface RunFrame {
  type: 'run';
  v: typeof PROTOCOL_VERSION;
  /** Absolute path of the approved program (its real path, as the policy resolved it). */
  executable: string;
  /** The argv[0] it sees: the listed name. */
  argv0: string;
  args: string[];
  /** The folder commands run in and are confined to; empty: the runner's own working directory. */
  base: string;
  /** cmd_run's workdir: absolute or relative to `base`, inside it; empty: `base`. */
  workdir: string;
  timeout_ms: number;
  max_output_bytes: number;
  kill_grace_ms: number;
}

export interface CancelFrame {
  type: 'cancel';
}

export type ClientFrame = RunFrame | CancelFrame;

export type RunnerFrame =
  | { type: 'started'; pid: number; workdir: string }
  | { type: 'result'; workdir: string; result: RunResult }
  | { type: 'error'; error: ToolErrorInfo };

/** One frame as written on the socket. */
export function encodeFrame(frame: ClientFrame | RunnerFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/** The client frame a line holds, or why it is not one. */
export function parseClientFrame(line: string): ClientFrame | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { problem: 'the frame is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'the frame is not a JSON object' };
  const frame = value as Record<string, unknown>;
  if (frame.type === 'cancel') return { type: 'cancel' };
  if (frame.type !== 'run') return { problem: `unknown frame type ${JSON.stringify(frame.type)}` };
  if (frame.v !== PROTOCOL_VERSION) return { problem: `protocol version ${JSON.stringify(frame.v)} is not ${PROTOCOL_VERSION}` };
  const problem = runFrameProblem(frame);
  return problem === undefined ? (frame as unknown as RunFrame) : { problem };
}

function runFrameProblem(frame: Record<string, unknown>): string | undefined {
  const { executable, argv0, args, base, workdir } = frame;
  if (typeof executable !== 'string' || !executable.startsWith('/') || executable.includes('\0') || executable.length > MAX_ARG_LENGTH) {
    return 'executable must be an absolute path';
  }
  if (typeof argv0 !== 'string' || argv0 === '' || argv0.includes('\0') || argv0.length > MAX_ARG_LENGTH)
    return 'argv0 must be a program name';
  if (!Array.isArray(args) || args.length > MAX_ARGV_ITEMS) return `args must be an array of at most ${MAX_ARGV_ITEMS} strings`;
  for (const [index, arg] of args.entries()) {
    if (typeof arg !== 'string' || arg.includes('\0') || arg.length > MAX_ARG_LENGTH) {
      return `args[${index}] must be a string of at most ${MAX_ARG_LENGTH} characters without NUL`;
    }
  }
  if (typeof base !== 'string' || (base !== '' && !base.startsWith('/')) || base.includes('\0'))
    return 'base must be empty or an absolute path';
  if (typeof workdir !== 'string' || workdir.includes('\0') || workdir.length > MAX_ARG_LENGTH) return 'workdir must be a string';
  const bounds: Array<[string, number, number]> = [
    ['timeout_ms', 1, MAX_TIMEOUT_MS],
    ['max_output_bytes', 0, MAX_OUTPUT_BYTES],
    ['kill_grace_ms', 0, MAX_KILL_GRACE_MS],
  ];
  for (const [key, min, max] of bounds) {
    const value = frame[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return `${key} must be an integer from ${min} to ${max}`;
    }
  }
  return undefined;
}
