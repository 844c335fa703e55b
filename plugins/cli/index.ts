/**
 * The cli plugin: a Unix socket speaking newline-delimited JSON, `{id, method, params}` →
 * `{id, ok, result}` or `{id, ok:false, error:{code, message}}`, in front of the kernel's control
 * methods. Bad frames (malformed JSON, oversized lines) get an error response and the connection
 * stays usable.
 */
import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import {
  CAPABILITY,
  definePlugin,
  HomeAgentError,
  LineDecoder,
  type PluginContext,
  type PluginInstance,
  toErrorEnvelope,
} from '../../src/sdk/index.js';

type RequestId = string | number | null;

/**
 * Whoever reaches the socket is the owner: only the service user and the members of its group can
 * open it (plugin.cli.socket_mode, at most 0660, in a directory only they may enter).
 */
const CLI_CALLER = { actor: 'cli', owner: true, proof: 'the CLI socket' } as const;

interface Settings {
  socket_path: string;
  socket_mode: string;
  max_frame_bytes: number;
  max_connections: number;
  idle_timeout_ms: number;
}

export class CliPlugin implements PluginInstance {
  readonly #ctx: PluginContext;
  readonly #sockets = new Set<Socket>();
  /** Requests being answered per connection: such a connection is never closed as idle. */
  readonly #inFlight = new WeakMap<Socket, number>();
  #server: Server | undefined;
  #path: string | undefined;

  constructor(ctx: PluginContext) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    const path = this.#setting('socket_path') || join(this.#ctx.paths.runtime, 'homeagent.sock');
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    await removeStaleSocket(path);
    const server = createServer((socket) => this.#accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(path, Number.parseInt(this.#setting('socket_mode'), 8));
    server.on('error', (error) => this.#ctx.log.error({ err: error }, 'CLI socket error'));
    this.#server = server;
    this.#path = path;
    // Answers to `homeagentctl chat` travel back as the receipt of agent.chat, so the channel is
    // synchronous: the agent answers in text and never needs to send to it.
    this.#ctx.io.registerOutputChannel({
      name: 'cli',
      description: 'the homeagentctl command line (plain text, no colours or markup)',
      capabilities: CAPABILITY.TEXT,
      synchronous: true,
      send: async () => {
        throw new HomeAgentError('HA_ERR_IO_CAPABILITY', 'the cli channel shows only your final answer: answer in text instead of sending');
      },
    });
    this.#ctx.log.info({ socket: path }, `CLI socket listening at ${path}`);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    // server.close() unlinks the socket file; this covers a listen that never completed.
    if (this.#path && existsSync(this.#path)) unlinkSync(this.#path);
    this.#path = undefined;
  }

  #setting<K extends keyof Settings>(key: K): Settings[K] {
    return this.#ctx.settings.get<Settings[K]>(key);
  }

  #accept(socket: Socket): void {
    if (this.#sockets.size >= this.#setting('max_connections')) {
      socket.end(
        `${JSON.stringify(errorResponse(null, new HomeAgentError('HA_ERR_RPC_BUSY', `at most ${this.#setting('max_connections')} CLI connections at once`)))}\n`,
      );
      return;
    }
    this.#sockets.add(socket);
    // A connection waiting for a long request (kb import, reindex) is not idle; the reply's write
    // re-arms the timer.
    socket.setTimeout(this.#setting('idle_timeout_ms'), () => {
      if ((this.#inFlight.get(socket) ?? 0) === 0) socket.end();
    });
    const decoder = new LineDecoder(() => this.#setting('max_frame_bytes'));
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (frame.kind === 'too_large') {
          const limit = this.#setting('max_frame_bytes');
          this.#reply(
            socket,
            errorResponse(
              null,
              new HomeAgentError('HA_ERR_RPC_FRAME_TOO_LARGE', `request frame is larger than ${limit} bytes; it was skipped`),
            ),
          );
        } else if (frame.text.trim() !== '') {
          void this.#handle(socket, frame.text);
        }
      }
    });
    socket.on('error', (error) => this.#ctx.log.debug({ err: error }, 'CLI connection error'));
    socket.on('close', () => this.#sockets.delete(socket));
  }

  async #handle(socket: Socket, line: string): Promise<void> {
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch (error) {
      this.#reply(socket, errorResponse(null, new HomeAgentError('HA_ERR_RPC_BAD_REQUEST', `malformed JSON: ${(error as Error).message}`)));
      return;
    }
    const id = requestId(request);
    if (
      typeof request !== 'object' ||
      request === null ||
      Array.isArray(request) ||
      typeof (request as { method?: unknown }).method !== 'string'
    ) {
      this.#reply(
        socket,
        errorResponse(
          id,
          new HomeAgentError('HA_ERR_RPC_BAD_REQUEST', 'a request is an object {"id", "method", "params"} with a string method'),
        ),
      );
      return;
    }
    const { method, params } = request as { method: string; params?: unknown };
    this.#inFlight.set(socket, (this.#inFlight.get(socket) ?? 0) + 1);
    try {
      const result = await this.#ctx.control.call(method, params ?? {}, CLI_CALLER);
      this.#reply(socket, { id, ok: true, result: result ?? null });
    } catch (error) {
      this.#ctx.log.debug({ method, err: error }, 'CLI request failed');
      this.#reply(socket, errorResponse(id, error));
    } finally {
      this.#inFlight.set(socket, (this.#inFlight.get(socket) ?? 1) - 1);
    }
  }

  #reply(socket: Socket, response: object): void {
    if (!socket.destroyed) socket.write(`${JSON.stringify(response)}\n`);
  }
}

function requestId(request: unknown): RequestId {
  const id = (request as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function errorResponse(id: RequestId, error: unknown): object {
  return { id, ok: false, error: toErrorEnvelope(error) };
}

/** A socket file left by a crashed daemon is removed; one that still answers means another daemon. */
async function removeStaleSocket(path: string): Promise<void> {
  if (!existsSync(path)) return;
  const alive = await new Promise<boolean>((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) throw new HomeAgentError('HA_ERR_DAEMON_ALREADY_RUNNING', `another process is serving ${path}`);
  unlinkSync(path);
}

export default definePlugin((ctx) => new CliPlugin(ctx));
