/**
 * The cli plugin: a Unix socket speaking newline-delimited JSON, `{id, method, params}` →
 * `{id, ok, result}` or `{id, ok:false, error:{code, message}}`, in front of the kernel's control
 * methods. Bad frames (malformed JSON, oversized lines) get an error response and the connection
 * stays usable. Whatever a client does to its connection (reset it before the first byte, close it
 * without reading, open more than max_connections) ends that connection only: it is counted, shown
 * in the plugin's health and logged a few times a minute at most, never thrown.
 */
import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import {
  CAPABILITY,
  definePlugin,
  HomeAgentError,
  LineDecoder,
  LogThrottle,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  toErrorEnvelope,
} from '../../src/sdk/index.js';
import type { CliSettings } from './settings-schema.js';

type RequestId = string | number | null;

/**
 * Whoever reaches the socket is the owner: only the service user and the members of its group can
 * open it (plugin.cli.socket_mode, at most 0660, in a directory only they may enter).
 */
const CLI_CALLER = { actor: 'cli', owner: true, proof: 'the CLI socket' } as const;

/**
 * A refused connection stays open this long at most so that its client can send its request and
 * read why it was refused (closing at once would fail that write with EPIPE and lose the answer).
 */
const REFUSED_LINGER_MS = 2000;
/** A connection storm reaches the journal as this many lines per kind and minute, with a count of the rest. */
const LOG_WINDOW_MS = 60_000;
const LOG_PER_WINDOW = 5;

export class CliPlugin implements PluginInstance {
  readonly #ctx: PluginContext<CliSettings>;
  readonly #sockets = new Set<Socket>();
  /** Requests being answered per connection: such a connection is never closed as idle. */
  readonly #inFlight = new WeakMap<Socket, number>();
  readonly #throttle = new LogThrottle({ windowMs: LOG_WINDOW_MS, perWindow: LOG_PER_WINDOW });
  /** Refused connections waiting for their client to read the refusal and close. */
  readonly #refusing = new Set<Socket>();
  #server: Server | undefined;
  #path: string | undefined;
  /** Since start: connections refused over max_connections, and connections ended by a socket error (a peer's reset). */
  #refused = 0;
  #peerErrors = 0;

  constructor(ctx: PluginContext<CliSettings>) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    const path = this.#ctx.settings.get('socket_path') || join(this.#ctx.paths.runtime, 'homeagent.sock');
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
    chmodSync(path, Number.parseInt(this.#ctx.settings.get('socket_mode'), 8));
    // Accept failures (EMFILE under a storm) repeat for every connection tried: a few lines, not one each.
    server.on('error', (error) => this.#log('server_error', 'error', { err: error }, 'CLI socket error'));
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
    for (const socket of [...this.#sockets, ...this.#refusing]) socket.destroy();
    this.#sockets.clear();
    this.#refusing.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    // server.close() unlinks the socket file; this covers a listen that never completed.
    if (this.#path && existsSync(this.#path)) unlinkSync(this.#path);
    this.#path = undefined;
  }

  health(): Required<PluginHealth> {
    if (!this.#server?.listening) return { ok: false, detail: 'not listening', detail_zh: '没有在监听' };
    const path = this.#path ?? '';
    return {
      ok: true,
      detail: `listening at ${path}: ${this.#sockets.size} connections open; since start ${this.#refused} refused over max_connections, ${this.#peerErrors} ended by a client error`,
      detail_zh: `在 ${path} 监听：${this.#sockets.size} 个连接打开；启动以来 ${this.#refused} 个因超过 max_connections 被拒，${this.#peerErrors} 个因客户端出错而结束`,
    };
  }

  #log(kind: string, level: 'debug' | 'info' | 'error', fields: object, message: string): void {
    const admitted = this.#throttle.admit(kind);
    if (admitted) this.#ctx.log[level]({ ...fields, ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}) }, message);
  }

  #accept(socket: Socket): void {
    // First, before anything is written: a client may reset the connection at any moment (even
    // before its first byte), and an 'error' without a listener would be an uncaught exception.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.#peerErrors++;
      this.#log('peer_error', 'debug', { code: error.code }, `CLI connection ended by an error: ${error.message}`);
    });
    const max = this.#ctx.settings.get('max_connections');
    if (this.#sockets.size >= max) {
      this.#refused++;
      this.#log(
        'over_limit',
        'info',
        { open: this.#sockets.size, max_connections: max },
        `CLI connection refused: ${max} are open already (plugin.cli.max_connections)`,
      );
      this.#refuse(socket, max);
      return;
    }
    this.#sockets.add(socket);
    // A connection waiting for a long request (kb import, reindex) is not idle; the reply's write
    // re-arms the timer.
    socket.setTimeout(this.#ctx.settings.get('idle_timeout_ms'), () => {
      if ((this.#inFlight.get(socket) ?? 0) === 0) socket.end();
    });
    const decoder = new LineDecoder(() => this.#ctx.settings.get('max_frame_bytes'));
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (frame.kind === 'too_large') {
          const limit = this.#ctx.settings.get('max_frame_bytes');
          this.#reply(
            socket,
            errorResponse(
              null,
              new HomeAgentError('HA_ERR_RPC_FRAME_TOO_LARGE', `request frame is larger than ${limit} bytes; it was skipped`),
            ),
          );
        } else if (frame.text.trim() !== '') {
          this.#handle(socket, frame.text).catch((error: unknown) =>
            this.#ctx.log.error({ err: error }, 'CLI request could not be answered'),
          );
        }
      }
    });
    socket.on('close', () => this.#sockets.delete(socket));
  }

  /**
   * Answers HA_ERR_RPC_BUSY and closes. What the client sends meanwhile is read and dropped, so its
   * request goes through and it reads the answer; its close ends the socket, or REFUSED_LINGER_MS
   * does. Refusals lingering are capped at max_connections: past that (a storm), a refused
   * connection is closed as soon as the answer is out, whether the client reads it or not.
   */
  #refuse(socket: Socket, max: number): void {
    const busy = `${JSON.stringify(errorResponse(null, new HomeAgentError('HA_ERR_RPC_BUSY', `at most ${max} CLI connections at once`)))}\n`;
    if (this.#refusing.size >= max) {
      socket.end(busy, () => socket.destroy());
      return;
    }
    this.#refusing.add(socket);
    const linger = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
    socket.once('close', () => {
      clearTimeout(linger);
      this.#refusing.delete(socket);
    });
    socket.resume();
    socket.end(busy);
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

export default definePlugin<CliSettings>((ctx) => new CliPlugin(ctx));
