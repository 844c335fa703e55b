/**
 * The isolated cmd runner: a small program that starts commands the daemon's cmd plugin already
 * approved, as its own user (homeagent-cmd.service runs it as `homeagent-cmd`, with ProtectProc=
 * invisible and the daemon's data, configuration and runtime folders inaccessible). A command
 * that runs as the daemon's user can read whatever the daemon can (its environment with the API
 * keys, its databases); one that runs here can read none of it, whatever its arguments say.
 *
 * It speaks runner-protocol.ts over a Unix socket: one connection per command, never a shell, a
 * fixed environment (PATH, LANG, HOME), output capped, a timeout and a cancel (or a dropped
 * connection) that end the command's whole process group, as runner.ts does in-process. Policy
 * (the allowlist, the argument rules, the audit) stays in the daemon. A bad frame gets an error
 * frame and a closed connection; nothing a client sends stops the service.
 *
 * Usage:
 *   node runner-service.js                socket-activated: systemd passes the listening socket (fd 3)
 *   node runner-service.js --socket PATH  listens on PATH itself (development, tests)
 * Options: --max-runs N (commands at once, default 8), --request-timeout-ms N (how long a new
 * connection may take to send its run frame, default 10000).
 */
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LineDecoder, ToolError, type ToolErrorInfo } from '../../src/sdk/index.js';
import { runCommand } from './runner.js';
import { encodeFrame, MAX_REQUEST_BYTES, parseClientFrame, type RunFrame, type RunnerFrame } from './runner-protocol.js';
import { resolveWorkdir } from './workdir.js';

/** The environment every command gets, and nothing else: the runner's own never reaches it. */
const CHILD_PATH = '/usr/local/bin:/usr/bin:/bin';
export const DEFAULT_MAX_RUNS = 8;
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** sd_listen_fds(3): the first socket systemd passes. */
const SD_LISTEN_FDS_START = 3;
const EXIT_USAGE = 64;
const EXIT_SOFTWARE = 70;

export interface RunnerServiceOptions {
  /** Where commands run when a request names no base folder: the runner's own working directory. */
  home: string;
  maxRuns: number;
  requestTimeoutMs: number;
  log: (level: 'info' | 'warn' | 'error', message: string, details?: Record<string, unknown>) => void;
}

export class RunnerService {
  readonly #options: RunnerServiceOptions;
  readonly #server: Server;
  readonly #connections = new Set<Socket>();
  readonly #runs = new Set<Promise<unknown>>();
  readonly #stopping = new AbortController();

  constructor(options: RunnerServiceOptions) {
    this.#options = options;
    this.#server = createServer((socket) => this.#connection(socket));
    // A failing accept() (EMFILE) must not end the service; the connection is lost, the next one works.
    this.#server.on('error', (error) => options.log('error', 'the runner socket failed', { err: String(error) }));
  }

  /** Listens on an inherited socket (`{fd}`) or a path of its own. */
  listen(target: { fd: number } | { path: string }): Promise<void> {
    return new Promise((resolvePromise, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(target, () => {
        this.#server.off('error', reject);
        resolvePromise();
      });
    });
  }

  /** Stops accepting, ends every running command (SIGTERM, then SIGKILL) and waits for them. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolvePromise) => this.#server.close(() => resolvePromise()));
    this.#stopping.abort();
    await Promise.allSettled([...this.#runs]);
    for (const socket of this.#connections) socket.destroy();
    await closed;
  }

  #connection(socket: Socket): void {
    this.#connections.add(socket);
    const decoder = new LineDecoder(MAX_REQUEST_BYTES);
    const ended = new AbortController();
    let state: 'waiting' | 'running' | 'done' = 'waiting';
    const send = (frame: RunnerFrame) => {
      if (!socket.destroyed) socket.write(encodeFrame(frame));
    };
    const finish = (frame: RunnerFrame) => {
      if (state === 'done') return;
      state = 'done';
      send(frame);
      socket.end();
    };
    const refuse = (problem: string) => {
      this.#options.log('warn', 'refused a request', { problem });
      finish({ type: 'error', error: { reason: 'rejected', detail: `HA_ERR_CMD_RUNNER_PROTOCOL: ${problem}` } });
    };
    const idle = setTimeout(() => refuse(`no run frame within ${this.#options.requestTimeoutMs} ms`), this.#options.requestTimeoutMs);

    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (state === 'done') return;
        if (frame.kind === 'too_large') {
          refuse(`a frame of more than ${MAX_REQUEST_BYTES} bytes`);
          return;
        }
        const parsed = parseClientFrame(frame.text);
        if ('problem' in parsed) {
          refuse(parsed.problem);
          return;
        }
        if (parsed.type === 'cancel') {
          if (state === 'running') ended.abort();
          else refuse('cancel before any run');
          continue;
        }
        if (state === 'running') {
          refuse('one run per connection');
          return;
        }
        clearTimeout(idle);
        if (this.#runs.size >= this.#options.maxRuns) {
          finish({
            type: 'error',
            error: {
              reason: 'unavailable',
              detail: `HA_ERR_CMD_RUNNER_UNAVAILABLE: ${this.#runs.size} commands are running, the most the runner takes at once`,
            },
          });
          return;
        }
        state = 'running';
        const run = this.#run(parsed, ended.signal, send).then(finish, (error: unknown) =>
          finish({ type: 'error', error: errorInfo(error) }),
        );
        this.#runs.add(run);
        void run.finally(() => this.#runs.delete(run));
      }
    });
    // A client that goes away (or half-closes) ends its command like a cancel.
    socket.on('end', () => ended.abort());
    socket.on('close', () => {
      clearTimeout(idle);
      ended.abort();
      this.#connections.delete(socket);
    });
    socket.on('error', () => {
      // EPIPE/ECONNRESET from a client that left: 'close' follows and ends its command.
    });
  }

  async #run(frame: RunFrame, ended: AbortSignal, send: (frame: RunnerFrame) => void): Promise<RunnerFrame> {
    const workdir = resolveWorkdir(frame.base || this.#options.home, frame.workdir);
    const signal = AbortSignal.any([ended, this.#stopping.signal]);
    const result = await runCommand({
      executable: frame.executable,
      argv0: frame.argv0,
      args: frame.args,
      cwd: workdir,
      env: { PATH: CHILD_PATH, LANG: 'C.UTF-8', HOME: workdir },
      timeoutMs: frame.timeout_ms,
      maxOutputBytes: frame.max_output_bytes,
      killGraceMs: frame.kill_grace_ms,
      signal,
      onStart: (pid) => send({ type: 'started', pid, workdir }),
    });
    return { type: 'result', workdir, result };
  }
}

function errorInfo(error: unknown): ToolErrorInfo {
  if (error instanceof ToolError) return error.info;
  return { reason: 'failed', detail: `HA_ERR_CMD_FAILED: ${error instanceof Error ? error.message : String(error)}` };
}

/** One JSON line per event on stdout (the journal), as the daemon logs. */
function log(level: 'info' | 'warn' | 'error', message: string, details: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ level, time: new Date().toISOString(), name: 'cmd-runner', msg: message, ...details })}\n`);
}

async function main(): Promise<number> {
  let values: { socket?: string; 'max-runs'?: string; 'request-timeout-ms'?: string };
  try {
    ({ values } = parseArgs({
      options: { socket: { type: 'string' }, 'max-runs': { type: 'string' }, 'request-timeout-ms': { type: 'string' } },
    }));
  } catch (error) {
    process.stderr.write(`cmd-runner: ${(error as Error).message}\n`);
    return EXIT_USAGE;
  }
  const maxRuns = positive(values['max-runs'], DEFAULT_MAX_RUNS);
  const requestTimeoutMs = positive(values['request-timeout-ms'], DEFAULT_REQUEST_TIMEOUT_MS);
  if (maxRuns === undefined || requestTimeoutMs === undefined) {
    process.stderr.write('cmd-runner: --max-runs and --request-timeout-ms take a positive integer\n');
    return EXIT_USAGE;
  }
  // sd_listen_fds(3): the sockets are ours only when LISTEN_PID names this process.
  const activated = process.env.LISTEN_PID === String(process.pid) && Number(process.env.LISTEN_FDS) >= 1;
  for (const name of ['LISTEN_PID', 'LISTEN_FDS', 'LISTEN_FDNAMES']) delete process.env[name];
  if (!activated && values.socket === undefined) {
    process.stderr.write('cmd-runner: no socket: run it from homeagent-cmd.socket, or pass --socket PATH\n');
    return EXIT_USAGE;
  }
  const service = new RunnerService({ home: process.cwd(), maxRuns, requestTimeoutMs, log });
  if (activated) {
    await service.listen({ fd: SD_LISTEN_FDS_START });
    log('info', 'listening on the socket systemd passed', { max_runs: maxRuns });
  } else {
    const path = resolve(values.socket as string);
    removeStaleSocket(path);
    await service.listen({ path });
    // Owner and group: the daemon's user starts it in development and is in its own group.
    chmodSync(path, 0o660);
    log('info', `listening on ${path}`, { max_runs: maxRuns });
  }
  await new Promise<void>((resolvePromise) => {
    process.once('SIGTERM', resolvePromise);
    process.once('SIGINT', resolvePromise);
  });
  await service.close();
  return 0;
}

function positive(text: string | undefined, fallback: number): number | undefined {
  if (text === undefined) return fallback;
  return /^[1-9][0-9]{0,8}$/.test(text) ? Number(text) : undefined;
}

/** A socket left by a runner that was killed; anything else at the path is kept (listen then fails). */
function removeStaleSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // nothing there
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.on('uncaughtException', (error) => {
    log('error', 'uncaught exception: exiting so that systemd restarts the runner', { err: String(error) });
    process.exit(EXIT_SOFTWARE);
  });
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      log('error', 'the runner could not start', { err: String(error) });
      process.exit(EXIT_SOFTWARE);
    },
  );
}
