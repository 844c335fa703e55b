/**
 * The listening socket of the web server, kept apart from the fastify app that answers on it so
 * that a hot reload of the webui plugin can hand the socket over. A reload starts the new instance
 * while the old one still runs; both want the same address, and Node 20 cannot listen twice on
 * one port. So listeners live in a process-wide table (on globalThis: a reload imports this module
 * afresh) by address; the newest holder's app answers every new request, and when it stops, the one
 * before it answers again (a reload whose new instance failed to start). The socket closes when its
 * last holder stops.
 *
 * The server itself is the hardened node:http one kbtree uses: header, request and idle deadlines,
 * checked every second rather than Node's 30 s, a connection cap, and an inactivity timeout.
 * node:http owns every connection's 'error' event (a reset ends that connection only); what a
 * storm leaves to us is logging it: connections over the cap (Node drops them) and requests the
 * parser refuses are counted and logged a few times a minute at most.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { HomeAgentError, type Logger, LogThrottle, urlHost } from '../../src/sdk/index.js';
import { clientErrorHandler } from './http-errors.js';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface ListenerLimits {
  header_timeout_ms: number;
  request_timeout_ms: number;
  idle_timeout_ms: number;
  max_connections: number;
}

/** How often Node looks for connections past their header or request deadline (its default, 30 s, would make a 5 s limit mean 35 s). */
const DEADLINE_CHECK_MS = 1000;
/** Request headers at most; a browser sends about 20. */
const MAX_HEADERS = 100;
const TABLE = Symbol.for('homeagent.webui.listeners');
const LOG_WINDOW_MS = 60_000;
const LOG_PER_WINDOW = 5;

interface Holder {
  owner: object;
  handler: RequestHandler;
}

interface Entry {
  key: string;
  server: Server;
  sockets: Set<Socket>;
  /** Oldest first; the last one answers. */
  holders: Holder[];
  /** Since the socket opened: connections dropped over max_connections, requests the HTTP parser refused. */
  dropped: number;
  malformed: number;
}

function table(): Map<string, Entry> {
  const scope = globalThis as { [TABLE]?: Map<string, Entry> };
  scope[TABLE] ??= new Map();
  return scope[TABLE];
}

export class WebListener {
  readonly #entry: Entry;
  readonly #owner: object;
  readonly handedOver: boolean;

  private constructor(entry: Entry, owner: object, handedOver: boolean) {
    this.#entry = entry;
    this.#owner = owner;
    this.handedOver = handedOver;
  }

  /**
   * Listens on host:port, or takes over the listener another holder in this process has there
   * (`handedOver`; its limits stay those it was made with: they need a restart anyway). Port 0
   * always makes a new listener.
   */
  static async acquire(options: {
    host: string;
    port: number;
    limits: ListenerLimits;
    owner: object;
    handler: RequestHandler;
    log: Logger;
  }): Promise<WebListener> {
    const key = urlHost(options.host, options.port);
    const holder: Holder = { owner: options.owner, handler: options.handler };
    const existing = options.port === 0 ? undefined : table().get(key);
    if (existing) {
      existing.holders.push(holder);
      return new WebListener(existing, options.owner, true);
    }
    const entry: Entry = { key, server: undefined as unknown as Server, sockets: new Set(), holders: [holder], dropped: 0, malformed: 0 };
    entry.server = createHardenedServer(options.limits, entry, options.log);
    await listen(entry.server, options.host, options.port);
    entry.server.on('error', (error) => options.log.error({ err: error }, 'web server error'));
    const bound = (entry.server.address() as AddressInfo).port;
    entry.key = urlHost(options.host, bound);
    if (options.port !== 0) table().set(entry.key, entry);
    return new WebListener(entry, options.owner, false);
  }

  address(): AddressInfo | undefined {
    return (this.#entry.server.address() as AddressInfo | null) ?? undefined;
  }

  get listening(): boolean {
    return this.#entry.server.listening;
  }

  /** Open connections (of every holder). */
  connections(): number {
    return this.#entry.sockets.size;
  }

  /** Connections dropped over max_connections and requests refused as malformed, since the socket opened. */
  refusals(): { dropped: number; malformed: number } {
    return { dropped: this.#entry.dropped, malformed: this.#entry.malformed };
  }

  /** Whether this holder's app is the one answering. */
  get answering(): boolean {
    return this.#entry.holders.at(-1)?.owner === this.#owner;
  }

  /** Lets go; the previous holder answers again, or, when none is left, the socket and every connection close. */
  async release(): Promise<void> {
    const entry = this.#entry;
    entry.holders = entry.holders.filter((h) => h.owner !== this.#owner);
    if (entry.holders.length > 0) return;
    if (table().get(entry.key) === entry) table().delete(entry.key);
    const closed = new Promise<void>((resolve) => entry.server.close(() => resolve()));
    // Open keep-alive and streaming (SSE) connections would hold close() until they end.
    entry.server.closeAllConnections();
    for (const socket of entry.sockets) socket.destroy();
    entry.sockets.clear();
    await closed;
  }
}

function createHardenedServer(limits: ListenerLimits, entry: Entry, log: Logger): Server {
  const throttle = new LogThrottle({ windowMs: LOG_WINDOW_MS, perWindow: LOG_PER_WINDOW });
  const note = (kind: string, level: 'debug' | 'info', fields: object, message: string) => {
    const admitted = throttle.admit(kind);
    if (admitted) log[level]({ ...fields, ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}) }, message);
  };
  const headerMs = limits.header_timeout_ms;
  const requestMs = limits.request_timeout_ms;
  const server = createServer(
    {
      // Node refuses a header deadline later than the request deadline.
      headersTimeout: Math.min(headerMs, requestMs),
      requestTimeout: requestMs,
      keepAliveTimeout: limits.idle_timeout_ms,
      connectionsCheckingInterval: Math.min(DEADLINE_CHECK_MS, headerMs),
    },
    (request, response) => {
      const holder = entry.holders.at(-1);
      if (holder) holder.handler(request, response);
      else response.destroy();
    },
  );
  server.maxConnections = limits.max_connections;
  server.maxHeadersCount = MAX_HEADERS;
  // A client that stops reading its answer holds a socket too; inactivity past the request deadline ends it (SSE streams send heartbeats).
  server.timeout = requestMs;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    entry.malformed++;
    note('client_error', 'debug', { code: error.code }, `web request refused by the HTTP parser: ${error.message}`);
    clientErrorHandler(error, socket);
  });
  server.on('drop', (peer?: { remoteAddress?: string }) => {
    entry.dropped++;
    note(
      'over_limit',
      'info',
      { remote: peer?.remoteAddress, max_connections: limits.max_connections },
      `web connection refused: ${limits.max_connections} are open already (plugin.webui.max_connections)`,
    );
  });
  server.on('connection', (socket: Socket) => {
    entry.sockets.add(socket);
    socket.once('close', () => entry.sockets.delete(socket));
  });
  return server;
}

async function listen(server: Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    server.closeAllConnections();
    server.close();
    const hint =
      (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ' (the port is taken by another program; set plugin.webui.port)' : '';
    throw new HomeAgentError(
      'HA_ERR_PLUGIN_START',
      `the web server cannot listen on ${urlHost(host, port)}: ${(error as Error).message}${hint}`,
      {
        cause: error,
      },
    );
  });
}
