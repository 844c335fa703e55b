/** A client for the daemon's CLI socket: newline-delimited JSON requests with ids. */
import { existsSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { ErrorEnvelope } from '../api/errors.js';
import { HomeAgentError } from '../shared/errors.js';
import { LineDecoder } from '../shared/line-decoder.js';

/** An error response from the daemon, with its code kept. */
export class RemoteError extends Error {
  readonly code: string;
  constructor(envelope: ErrorEnvelope) {
    super(envelope.message);
    this.code = envelope.code;
  }
}

/**
 * Where the socket is: --socket, $HOMEAGENT_SOCKET, then the first existing of
 * $HOMEAGENT_RUNTIME_DIR/homeagent.sock, $HOMEAGENT_DATA_DIR/run/homeagent.sock,
 * /run/homeagent/homeagent.sock and ./data/run/homeagent.sock.
 */
export function findSocket(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  if (explicit) return resolve(cwd, explicit);
  if (env.HOMEAGENT_SOCKET) return resolve(cwd, env.HOMEAGENT_SOCKET);
  const candidates = [
    env.HOMEAGENT_RUNTIME_DIR && join(resolve(cwd, env.HOMEAGENT_RUNTIME_DIR), 'homeagent.sock'),
    env.HOMEAGENT_DATA_DIR && join(resolve(cwd, env.HOMEAGENT_DATA_DIR), 'run', 'homeagent.sock'),
    '/run/homeagent/homeagent.sock',
    join(cwd, 'data', 'run', 'homeagent.sock'),
  ].filter((c): c is string => typeof c === 'string' && c !== '');
  return candidates.find((c) => existsSync(c)) ?? (candidates[0] as string);
}

export class RpcClient {
  readonly #socket: Socket;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #nextId = 1;
  /** Why the connection ended, once it has: a call after that fails at once, not at its timeout. */
  #ended: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    const decoder = new LineDecoder(256 * 1024 * 1024);
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) if (frame.kind === 'line') this.#onLine(frame.text);
    });
    socket.on('close', () => this.#end(new Error('the daemon closed the connection')));
    socket.on('error', (error) => this.#end(error));
  }

  /** Connects, or throws HA_ERR_DAEMON_NOT_RUNNING naming the socket that was tried. */
  static connect(path: string, timeoutMs: number): Promise<RpcClient> {
    return new Promise((resolvePromise, reject) => {
      const socket = createConnection(path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new HomeAgentError('HA_ERR_DAEMON_NOT_RUNNING', `no answer from ${path} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolvePromise(new RpcClient(socket));
      });
      socket.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const why =
          error.code === 'ENOENT' || error.code === 'ECONNREFUSED'
            ? 'is HomeAgent running? (systemctl status homeagent, or npm start)'
            : error.code === 'EACCES'
              ? 'permission denied: add yourself to the homeagent group or use sudo'
              : error.message;
        reject(new HomeAgentError('HA_ERR_DAEMON_NOT_RUNNING', `cannot connect to ${path}: ${why}`));
      });
    });
  }

  call(method: string, params: object = {}, timeoutMs = 30_000): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolvePromise, reject) => {
      if (this.#ended !== undefined) {
        reject(this.#ended);
        return;
      }
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolvePromise(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.#socket.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  close(): void {
    this.#socket.end();
  }

  #onLine(line: string): void {
    let response: { id?: unknown; ok?: boolean; result?: unknown; error?: ErrorEnvelope };
    try {
      response = JSON.parse(line);
    } catch {
      return;
    }
    const waiter = typeof response.id === 'number' ? this.#pending.get(response.id) : undefined;
    if (!waiter) {
      // An error without an id concerns the connection itself (busy, frame too large).
      if (response.ok === false && response.error) this.#failAll(new RemoteError(response.error));
      return;
    }
    this.#pending.delete(response.id as number);
    if (response.ok) waiter.resolve(response.result);
    else waiter.reject(new RemoteError(response.error ?? { code: 'HA_ERR_INTERNAL', message: 'malformed error response' }));
  }

  #end(error: Error): void {
    this.#ended ??= error;
    this.#failAll(error);
  }

  #failAll(error: Error): void {
    for (const waiter of this.#pending.values()) waiter.reject(error);
    this.#pending.clear();
  }
}
