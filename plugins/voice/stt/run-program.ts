/**
 * Runs a speech program (a whisper command line, piper) the safe way: an argument array and no
 * shell, so nothing in a transcript path, a model name or a spoken text is ever parsed as shell
 * syntax; text goes in on stdin. The program gets its own process group, so a timeout or a
 * cancelled turn kills it together with any helper it started (a shell script's children hold its
 * pipes open otherwise). Output beyond a limit stops the program instead of filling memory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { HomeAgentError } from '../../../src/sdk/index.js';

export interface RunProgramOptions {
  program: string;
  args: string[];
  /** Written to stdin, which is then closed; absent: stdin is closed at once. */
  stdin?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** More stdout than this stops the program and fails the run. */
  maxStdoutBytes: number;
  /** How messages name the program's role, e.g. "speech-to-text command". */
  what: string;
  /** Builds the error with the caller's code. */
  fail: (message: string, cause?: unknown) => HomeAgentError;
}

export interface ProgramOutput {
  stdout: Buffer;
  stderr: string;
}

const STDERR_KEEP = 2000;

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

export function runProgram(options: RunProgramOptions): Promise<ProgramOutput> {
  const { program, what, fail } = options;
  if (options.signal?.aborted) return Promise.reject(fail(`${what} was cancelled before it started`));
  return new Promise<ProgramOutput>((resolve, reject) => {
    const child = spawn(program, options.args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env, detached: true });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let settled = false;
    const finish = (error: HomeAgentError | undefined, output?: ProgramOutput): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error) {
        killGroup(child);
        reject(error);
      } else if (output) resolve(output);
    };
    const onAbort = (): void => finish(fail(`${what} was cancelled`));
    const timer = setTimeout(
      () => finish(fail(`${what} "${program}" did not finish within ${options.timeoutMs} ms and was stopped`)),
      options.timeoutMs,
    );
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') finish(fail(`${what}: program "${program}" was not found (not installed, or not on PATH)`, error));
      else if (error.code === 'EACCES') finish(fail(`${what}: program "${program}" is not executable`, error));
      else finish(fail(`${what} "${program}" could not start: ${error.message}`, error));
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > options.maxStdoutBytes) {
        finish(fail(`${what} "${program}" printed more than ${options.maxStdoutBytes} bytes and was stopped`));
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk.toString('utf8');
    });
    // A program that exits without reading its input closes stdin; the exit status tells why.
    child.stdin.on('error', () => {});
    child.on('close', (code, signal) => {
      const message = stderr.trim().slice(0, STDERR_KEEP);
      if (code !== 0) {
        const why = message || (signal ? `killed by ${signal}` : 'no message on stderr');
        finish(fail(`${what} "${program}" failed (exit ${code ?? signal}): ${why}`));
        return;
      }
      finish(undefined, { stdout: Buffer.concat(stdout, Math.min(stdoutBytes, options.maxStdoutBytes)), stderr: message });
    });
    child.stdin.end(options.stdin ?? '', 'utf8');
  });
}
