/**
 * Runs one approved command: never through a shell, stdin closed, in its own process group so a
 * timeout or cancellation ends everything it started (SIGTERM, then SIGKILL after a grace period),
 * with each output stream capped.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ToolError } from '../../src/sdk/index.js';

export interface RunRequest {
  executable: string;
  argv0: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Kept per stream; the rest is counted and cut. */
  maxOutputBytes: number;
  /** Between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** Aborting it ends the command like a timeout does. */
  signal: AbortSignal;
  /** Called once the program runs, with its pid (also its process group's id). */
  onStart?: (pid: number) => void;
}

export interface RunResult {
  /** Null when a signal ended the program. */
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  duration_ms: number;
  /** Some output was cut at the cap. */
  truncated: boolean;
  timed_out: boolean;
  cancelled: boolean;
}

export function runCommand(request: RunRequest): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const stdout = new CappedOutput(request.maxOutputBytes);
    const stderr = new CappedOutput(request.maxOutputBytes);
    let timedOut = false;
    let cancelled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;

    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(request.executable, [...request.args], {
        argv0: request.argv0,
        cwd: request.cwd,
        env: request.env,
        shell: false,
        // A new session and process group: signalling -pid reaches everything the command started.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      reject(startFailure(error));
      return;
    }
    const signalGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const terminate = () => {
      signalGroup('SIGTERM');
      killTimer ??= setTimeout(() => signalGroup('SIGKILL'), request.killGraceMs);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, request.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      terminate();
    };
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener('abort', onAbort, { once: true });

    const finish = () => {
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      request.signal.removeEventListener('abort', onAbort);
    };

    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // Whatever the program left behind (background children holding the pipes) ends with it.
    child.on('exit', () => signalGroup('SIGKILL'));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      finish();
      signalGroup('SIGKILL');
      reject(startFailure(error));
    });
    child.on('close', (code, signal) => {
      if (settled) return;
      finish();
      resolve({
        exit_code: code,
        signal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        duration_ms: Math.round(performance.now() - started),
        truncated: stdout.cut > 0 || stderr.cut > 0,
        timed_out: timedOut,
        cancelled,
      });
    });
    if (child.pid !== undefined) request.onStart?.(child.pid);
  });
}

function startFailure(error: unknown): ToolError {
  const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new ToolError({ reason: 'failed', field: 'argv', detail: `the program could not be started: ${why}` });
}

/** Keeps the first `limit` bytes of a stream and counts the rest. */
export class CappedOutput {
  readonly #limit: number;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #cut = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get cut(): number {
    return this.#cut;
  }

  push(chunk: Buffer): void {
    const room = Math.max(0, this.#limit - this.#kept);
    if (room > 0) {
      const part = chunk.subarray(0, room);
      this.#chunks.push(part);
      this.#kept += part.length;
    }
    this.#cut += Math.max(0, chunk.length - room);
  }

  /** The kept text (never ending in half a UTF-8 character), with a visible marker if anything was cut. */
  text(): string {
    let kept = Buffer.concat(this.#chunks);
    let cut = this.#cut;
    if (cut > 0) {
      const whole = completeUtf8Length(kept);
      cut += kept.length - whole;
      kept = kept.subarray(0, whole);
    }
    const text = kept.toString('utf8');
    return cut > 0 ? `${text}\n[… ${cut} bytes cut]` : text;
  }
}

/** The length of `buffer` without a trailing incomplete UTF-8 sequence. */
function completeUtf8Length(buffer: Buffer): number {
  for (let back = 1; back <= Math.min(4, buffer.length); back++) {
    const byte = buffer[buffer.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? buffer.length - back : buffer.length;
  }
  return buffer.length;
}
