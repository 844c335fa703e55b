/**
 * The kbtree plugin: the household knowledge library, read-only, over HTTP for other agents on the
 * machine (or, when configured, on the LAN). Every request needs the service's own token (not the
 * daemon's); only GET is served; slow or idle clients are cut off by the header, request and idle
 * timeouts, so a crowd of them cannot hold the service. The owner reads the token with
 * `homeagentctl kb token` (control method `kbtree.token`). node:http owns every connection's
 * 'error' event (a client's reset ends its own connection) and answers what its parser refuses;
 * connections over max_connections and requests without a valid token are counted for health()
 * and logged a few times a minute at most.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Type } from '@sinclair/typebox';
import {
  type AddressScope,
  checkListenHost,
  definePlugin,
  HomeAgentError,
  isHomeAgentError,
  LogThrottle,
  offeredTokens,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  randomToken,
  TokenCheck,
  urlHost,
  WEAK_TOKEN_CHARS,
} from '../../src/sdk/index.js';
import { answer, ENDPOINTS, type EndpointResult, type ServiceInfo } from './endpoints.js';
import type { KbtreeSettings } from './settings-schema.js';

export { ENDPOINTS } from './endpoints.js';

export interface KbtreePluginOptions {
  /** Replaces plugin.kbtree.port (tests listen on port 0, which the setting does not allow). */
  port?: number;
}

/** What `kbtree.token` answers. */
export interface TokenInfo {
  token: string;
  url: string;
  /** `random`: made at this start; `configured`: plugin.kbtree.token. */
  source: 'random' | 'configured';
}

/** The one caller `kbtree.token` answers: homeagentctl on the control socket, that is the box's admin. */
const TOKEN_CALLER = 'cli';
/** How often Node looks for connections past their header or request deadline (its default, 30 s, would make a 5 s limit mean 35 s). */
const DEADLINE_CHECK_MS = 1000;
const LOG_WINDOW_MS = 60_000;
const LOG_PER_WINDOW = 5;

export class KbtreePlugin implements PluginInstance {
  readonly #ctx: PluginContext<KbtreeSettings>;
  readonly #options: KbtreePluginOptions;
  readonly #sockets = new Set<Socket>();
  readonly #throttle = new LogThrottle({ windowMs: LOG_WINDOW_MS, perWindow: LOG_PER_WINDOW });
  /** Since start: connections dropped over max_connections, requests refused without a valid token. */
  #dropped = 0;
  #unauthorized = 0;
  #server: Server | undefined;
  #check: TokenCheck | undefined;
  #token: TokenInfo | undefined;
  #info: ServiceInfo = { name: 'kbtree', version: '0.0.0' };

  constructor(ctx: PluginContext<KbtreeSettings>, options: KbtreePluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = options;
  }

  async start(): Promise<void> {
    if (!this.#ctx.knowledge.available()) {
      throw new HomeAgentError(
        'HA_ERR_UNAVAILABLE',
        'kbtree serves the knowledge library, and this daemon runs without one; it was not started (disable plugin.kbtree or fix the knowledge library)',
      );
    }
    const { host, scope } = checkListenHost(this.#ctx.settings.get('host'), 'plugin.kbtree.host');
    const configured = this.#ctx.settings.get('token');
    const token = configured || randomToken();
    this.#check = new TokenCheck(token);
    this.#info = { name: this.#ctx.name, version: readVersion() };

    this.#registerTokenMethod();
    const server = this.#createServer();
    const port = this.#options.port ?? this.#ctx.settings.get('port');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port }, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((error: unknown) => {
      server.closeAllConnections();
      server.close();
      // A hot reload starts the new instance while the old one still holds the port.
      const hint =
        (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
          ? ' (the port is taken; if kbtree itself holds it, disable and enable the plugin instead of reloading it)'
          : '';
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_START',
        `kbtree cannot listen on ${urlHost(host, port)}: ${(error as Error).message}${hint}`,
        {
          cause: error,
        },
      );
    });
    server.on('error', (error) => this.#ctx.log.error({ err: error }, 'kbtree server error'));
    this.#server = server;
    const bound = (server.address() as AddressInfo).port;
    const url = `http://${urlHost(host, bound)}/`;
    this.#token = { token, url, source: configured ? 'configured' : 'random' };
    this.#announce(url, scope);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#token = undefined;
    this.#check = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    // closeAllConnections covers the connections the HTTP parser knows; this covers the rest.
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await closed;
  }

  health(): Required<PluginHealth> {
    if (!this.#server?.listening) return { ok: false, detail: 'not listening', detail_zh: '没有在监听' };
    const url = this.#token?.url ?? '';
    return {
      ok: true,
      detail: `serving ${url} (${this.#sockets.size} connections; since start ${this.#dropped} refused over max_connections, ${this.#unauthorized} without a valid token)`,
      detail_zh: `正在服务 ${url}（${this.#sockets.size} 个连接；启动以来 ${this.#dropped} 个因超过 max_connections 被拒，${this.#unauthorized} 个没有有效令牌）`,
    };
  }

  /** The bound address (tests read the port back after listening on port 0). */
  address(): AddressInfo | undefined {
    return (this.#server?.address() as AddressInfo | null) ?? undefined;
  }

  /** Open connections, for tests and health. */
  connections(): number {
    return this.#sockets.size;
  }

  #createServer(): Server {
    const headerMs = this.#ctx.settings.get('header_timeout_ms');
    const requestMs = this.#ctx.settings.get('request_timeout_ms');
    const server = createServer(
      {
        // Node refuses a header deadline later than the request deadline.
        headersTimeout: Math.min(headerMs, requestMs),
        requestTimeout: requestMs,
        keepAliveTimeout: this.#ctx.settings.get('idle_timeout_ms'),
        connectionsCheckingInterval: Math.min(DEADLINE_CHECK_MS, headerMs),
      },
      (request, response) => void this.#handle(request, response),
    );
    const max = this.#ctx.settings.get('max_connections');
    server.maxConnections = max;
    // A client that stops reading its answer holds a socket too; inactivity past the request deadline ends it.
    server.timeout = requestMs;
    server.on('drop', (peer?: { remoteAddress?: string }) => {
      this.#dropped++;
      this.#log(
        'over_limit',
        'info',
        { remote: peer?.remoteAddress, max_connections: max },
        `kbtree connection refused: ${max} are open already (plugin.kbtree.max_connections)`,
      );
    });

    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    return server;
  }

  #log(kind: string, level: 'debug' | 'info', fields: object, message: string): void {
    const admitted = this.#throttle.admit(kind);
    if (admitted) this.#ctx.log[level]({ ...fields, ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}) }, message);
  }

  #announce(url: string, scope: AddressScope): void {
    const token = this.#token;
    if (!token) return;
    if (scope === 'network') {
      this.#ctx.log.warn(
        { url },
        `kbtree listens on ${url}, which other machines can reach: anyone on the network who has the token can read the whole knowledge library`,
      );
    }
    if (token.source === 'random') {
      // Printed once per start, on purpose: the owner needs it to hand to other agents, and it changes with every start.
      this.#ctx.log.info({ url }, `kbtree token: ${token.token} (random for this run; shown again by \`homeagentctl kb token\`)`);
    } else {
      if (token.token.length < WEAK_TOKEN_CHARS) {
        this.#ctx.log.warn(`plugin.kbtree.token is shorter than ${WEAK_TOKEN_CHARS} characters; a longer one is much harder to guess`);
      }
      this.#ctx.log.info({ url }, 'kbtree serving with the configured token (plugin.kbtree.token)');
    }
  }

  #registerTokenMethod(): void {
    try {
      this.#ctx.control.register({
        name: 'kbtree.token',
        description: 'The token and address of the read-only knowledge service (answers homeagentctl only).',
        params: Type.Object({}, { additionalProperties: false }),
        handler: (_params, caller) => this.#tokenFor(caller.actor),
      });
    } catch (error) {
      // The service works without it; only `homeagentctl kb token` is missing, and the log has the token.
      if (!isHomeAgentError(error, 'HA_ERR_UNAVAILABLE')) throw error;
      this.#ctx.log.warn({ err: error }, 'kbtree.token is not available in this daemon: `homeagentctl kb token` will not answer');
    }
  }

  #tokenFor(actor: string): TokenInfo {
    if (actor !== TOKEN_CALLER) {
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_PERMISSION',
        `kbtree.token answers only homeagentctl on the control socket, not ${JSON.stringify(actor)}`,
      );
    }
    const token = this.#token;
    if (!token) throw new HomeAgentError('HA_ERR_PLUGIN_STATE', 'kbtree is not serving');
    this.#ctx.audit('kbtree.token.read', { by: actor });
    return { ...token };
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let result: EndpointResult;
    try {
      result = await this.#route(request);
    } catch (error) {
      result = this.#failure(error);
    }
    if (response.headersSent || response.destroyed) return;
    const body = JSON.stringify(result.body);
    response.writeHead(result.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...(result.status === 405 ? { allow: 'GET' } : {}),
      ...(result.status === 401 ? { 'www-authenticate': 'Bearer realm="kbtree"' } : {}),
    });
    response.end(body);
  }

  async #route(request: IncomingMessage): Promise<EndpointResult> {
    // HEAD too: the service promises GET only, and `Allow: GET` must stay true.
    if (request.method !== 'GET') {
      return fail(
        405,
        'HA_ERR_RPC_BAD_REQUEST',
        `method ${request.method ?? '?'} is not allowed; the knowledge service is read-only and answers GET only`,
      );
    }
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://kbtree.invalid');
    } catch {
      return fail(400, 'HA_ERR_RPC_BAD_REQUEST', 'the request target is not a valid URL path');
    }
    const check = this.#check;
    if (!check?.anyMatches(offeredTokens(request.headers, url.searchParams))) {
      this.#unauthorized++;
      this.#log('unauthorized', 'info', { remote: request.socket.remoteAddress }, 'kbtree request refused: no valid token');
      return fail(
        401,
        'HA_ERR_PLUGIN_PERMISSION',
        'a valid token is required: send it as X-API-Key: <token>, Authorization: Bearer <token>, or ?token=<token>',
      );
    }
    const endpoint = ENDPOINTS.find((e) => e.path === url.pathname);
    if (!endpoint) {
      return fail(404, 'HA_ERR_RPC_UNKNOWN_METHOD', `no endpoint ${url.pathname}; endpoints: ${ENDPOINTS.map((e) => e.path).join(', ')}`);
    }
    return answer(endpoint, url.searchParams, this.#ctx.knowledge, this.#info);
  }

  #failure(error: unknown): EndpointResult {
    if (isHomeAgentError(error)) {
      const code: string = error.code;
      if (code === 'HA_ERR_RPC_INVALID_PARAMS' || code === 'HA_ERR_KNOWLEDGE_NAME') return fail(400, code, error.message);
      if (code === 'HA_ERR_KNOWLEDGE_NOT_FOUND') return fail(404, code, error.message);
      if (code === 'HA_ERR_UNAVAILABLE' || code === 'HA_ERR_KNOWLEDGE_UNAVAILABLE') return fail(503, code, error.message);
    }
    this.#ctx.log.error({ err: error }, 'kbtree request failed');
    return fail(500, 'HA_ERR_INTERNAL', 'the knowledge library failed to answer; the HomeAgent log has the details');
  }
}

function fail(status: number, code: string, message: string): EndpointResult {
  return { status, body: { ok: false, error: { code, message } } };
}

function readVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL('./plugin.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export default definePlugin<KbtreeSettings>((ctx) => new KbtreePlugin(ctx));
