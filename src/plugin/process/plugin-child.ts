/**
 * One plugin process: spawned from its {@link ChildCommand}, its stdout carried by an RpcPeer, its
 * stderr written line by line to the plugin's logger, and one `exited` promise that settles once
 * however it ends (exit, signal, spawn failure, killed for breaking the protocol). When it ends,
 * every call still waiting for it fails at once with HA_ERR_PLUGIN_DEAD. What an exit means
 * (crash or requested stop) is for the owner to decide.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import type { Logger } from '../../log/logger.js';
import { type ErrorCode, HomeAgentError } from '../../shared/errors.js';
import { LineDecoder } from '../../shared/line-decoder.js';
import type { ChildCommand } from './child-command.js';
import type { HostRequestName, HostRequests } from './protocol.js';
import { errorFromChild } from './remote-error.js';
import { type RequestId, RpcPeer } from './rpc-peer.js';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why it ended, for logs and for the error calls get (`exited with code 1`, `ran out of heap memory`, ...). */
  reason: string;
}

/** Answers the child's own requests and notifications (see host-bridge.ts). */
export interface ChildMessageHandler {
  request(method: string, params: unknown, id: RequestId): unknown;
  notification(method: string, params: unknown): void;
}

export interface CallOptions {
  timeoutMs: number;
  /** The error code of a failure the plugin reported without a code of its own. */
  fallback: ErrorCode;
}

/** Plugin processes run at a lower priority so a busy plugin cannot starve the daemon's own work (voice, IO). */
const CHILD_NICENESS = 10;
const MAX_STDERR_LINE = 16 * 1024;
/** Kept to explain an exit: the last lines usually carry the uncaught error. */
const STDERR_TAIL_LINES = 20;
const OUT_OF_MEMORY = /JavaScript heap out of memory|Reached heap limit|Allocation failed/;

export class PluginChild {
  readonly peer: RpcPeer;
  readonly exited: Promise<ChildExit>;
  readonly #process: ChildProcessWithoutNullStreams;
  readonly #plugin: string;
  readonly #log: Logger;
  readonly #heapMb: number;
  readonly #stderr = new LineDecoder(MAX_STDERR_LINE);
  readonly #stderrTail: string[] = [];
  #resolveExit: (exit: ChildExit) => void = () => {};
  #exit: ChildExit | undefined;
  #killReason: string | undefined;
  #outOfMemory = false;

  private constructor(process: ChildProcessWithoutNullStreams, plugin: string, handler: ChildMessageHandler, log: Logger, heapMb: number) {
    this.#process = process;
    this.#plugin = plugin;
    this.#log = log;
    this.#heapMb = heapMb;
    this.exited = new Promise((resolve) => {
      this.#resolveExit = resolve;
    });
    this.peer = new RpcPeer({
      write: (line) => {
        if (this.#exit === undefined && this.#process.stdin.writable) this.#process.stdin.write(line);
      },
      onRequest: (method, params, id) => handler.request(method, params, id),
      onNotification: (method, params) => handler.notification(method, params),
      onProtocolError: (detail) => {
        this.#log.error({ detail }, `plugin ${plugin} broke the protocol; killing it`);
        this.kill(`broke the protocol: ${detail}`);
      },
    });
  }

  static spawn(command: ChildCommand, plugin: string, handler: ChildMessageHandler, log: Logger, heapMb: number): PluginChild {
    const process = spawn(command.file, command.args, { cwd: command.cwd, env: command.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const child = new PluginChild(process, plugin, handler, log, heapMb);
    child.#wire();
    return child;
  }

  get pid(): number | undefined {
    return this.#process.pid;
  }

  /** True once the process has ended. */
  get done(): boolean {
    return this.#exit !== undefined;
  }

  /** Sends a request; its failure is the daemon's error for it (timeout, dead, or what the plugin threw). */
  call<M extends HostRequestName>(
    method: M,
    params: HostRequests[M]['params'],
    options: CallOptions,
  ): { id: number; result: Promise<unknown> } {
    const { id, result } = this.peer.request(method, params, {
      timeoutMs: options.timeoutMs,
      timeoutError: () =>
        new HomeAgentError('HA_ERR_PLUGIN_TIMEOUT', `plugin ${this.#plugin}: ${method} did not finish within ${options.timeoutMs} ms`),
    });
    return {
      id,
      result: result.catch((error: unknown) => {
        throw errorFromChild(error, options.fallback);
      }),
    };
  }

  /** Ends the process now; `reason` becomes its exit reason. */
  kill(reason: string, signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.#exit !== undefined) return;
    this.#killReason ??= reason;
    this.#process.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it is gone. */
  async terminate(graceMs: number): Promise<ChildExit> {
    if (this.#exit !== undefined) return this.#exit;
    this.#process.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([this.exited, graceOver]);
    clearTimeout(timer);
    if (this.#exit === undefined) this.#process.kill('SIGKILL');
    return this.exited;
  }

  #wire(): void {
    const proc = this.#process;
    proc.stdout.on('data', (chunk: Buffer) => this.peer.receive(chunk));
    proc.stderr.on('data', (chunk: Buffer) => this.#onStderr(chunk));
    // Writes to a process that just died fail with EPIPE; its exit is handled by 'close'.
    proc.stdin.on('error', (error) => this.#log.debug({ err: error }, `plugin ${this.#plugin}: write to the process failed`));
    proc.on('error', (error) => {
      if (proc.pid === undefined) this.#finish({ code: null, signal: null, reason: `could not be started: ${error.message}` });
      else this.#log.warn({ err: error }, `plugin ${this.#plugin}: process error`);
    });
    // 'close', not 'exit': everything the process wrote has been read by then.
    proc.on('close', (code, signal) => this.#finish({ code, signal, reason: this.#reason(code, signal) }));
    if (proc.pid !== undefined) {
      try {
        setPriority(proc.pid, CHILD_NICENESS);
      } catch {
        // Not allowed on this system: the plugin runs at normal priority.
      }
    }
  }

  #onStderr(chunk: Buffer): void {
    for (const frame of this.#stderr.push(chunk)) {
      if (frame.kind === 'too_large') {
        this.#log.warn(
          { stream: 'stderr', bytes: frame.bytes },
          `plugin ${this.#plugin}: a stderr line of more than ${MAX_STDERR_LINE} bytes was dropped`,
        );
        continue;
      }
      if (frame.text === '') continue;
      if (OUT_OF_MEMORY.test(frame.text)) this.#outOfMemory = true;
      this.#stderrTail.push(frame.text);
      if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
      this.#log.warn({ stream: 'stderr' }, frame.text);
    }
  }

  #reason(code: number | null, signal: NodeJS.Signals | null): string {
    if (this.#killReason) return this.#killReason;
    if (this.#outOfMemory) return `ran out of heap memory (limit ${this.#heapMb} MB)`;
    const what = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const error = [...this.#stderrTail].reverse().find((line) => /\b\w*Error\b/.test(line));
    return error ? `${what} (${error.trim().slice(0, 300)})` : what;
  }

  #finish(exit: ChildExit): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    this.peer.close(new HomeAgentError('HA_ERR_PLUGIN_DEAD', `plugin ${this.#plugin} stopped running: ${exit.reason}`));
    this.#resolveExit(exit);
  }
}
