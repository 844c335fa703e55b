/**
 * The web server: one fastify instance on plugin.webui.host:port serving the page, the API
 * (/api/v1), the OpenAI-compatible endpoint (/v1) and other plugins' routes (/plugins/<name>/...).
 * Every request first passes the security hooks, in this order: the Host allow-list (DNS
 * rebinding), authentication (session cookie or API key; routes marked public skip it), the
 * cross-site check on state-changing requests made with the cookie. Route modules only see
 * requests that passed. The socket is not fastify's: it is a hardened node:http server
 * (web-listener.ts) that a hot reload hands over to the new instance.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  type AddressScope,
  checkListenHost,
  HomeAgentError,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  urlHost,
} from '../../src/sdk/index.js';
import { ANONYMOUS, WebAuth } from './auth-routes.js';
import { CredentialStore, type Credentials } from './credentials.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandlers, pathOf } from './http-errors.js';
import { LoginLimiter } from './login-limiter.js';
import { registerPluginRoutes } from './plugin-routes.js';
import { checkSameOrigin, HostAllowList, STATE_CHANGING } from './request-guard.js';
import { SessionStore } from './sessions.js';
import type { WebuiSettings } from './settings-schema.js';
import { defaultPageDir, StaticPage } from './static-page.js';
import type { RouteDeps, RouteModule } from './types.js';
import { type RequestHandler, WebListener } from './web-listener.js';
import { registerWebuiMethods } from './webui-methods.js';

export interface WebuiPluginOptions {
  /** The route groups served after the security hooks (api-routes.ts, openai-routes.ts). */
  routeModules: RouteModule[];
  /** Replaces plugin.webui.port. */
  port?: number;
  /** Where the built page is (tests); next to the compiled plugin by default. */
  pageDir?: string;
  /** The clock of sessions and the login limiters (tests). */
  now?: () => number;
  /**
   * Where the first start prints the new credentials, when it is a terminal (`isTTY`);
   * process.stderr by default. Never the log: see #announce.
   */
  stderr?: { write(text: string): unknown; isTTY?: boolean };
}

/** Path parameters up to this long (knowledge entry names are paths of several segments). */
const MAX_PARAM_LENGTH = 1000;

export class WebuiPlugin implements PluginInstance {
  readonly #ctx: PluginContext<WebuiSettings>;
  readonly #options: WebuiPluginOptions;
  #app: FastifyInstance | undefined;
  #listener: WebListener | undefined;
  #url: string | undefined;
  #sessions: SessionStore | undefined;

  constructor(ctx: PluginContext<WebuiSettings>, options: WebuiPluginOptions) {
    this.#ctx = ctx;
    this.#options = options;
  }

  async start(): Promise<void> {
    const ctx = this.#ctx;
    const settings = this.#settings();
    const { host, scope } = checkListenHost(settings.host, 'plugin.webui.host');
    const now = this.#options.now ?? Date.now;
    mkdirSync(ctx.paths.data, { recursive: true, mode: 0o700 });

    const credentials = new CredentialStore({ dataDir: ctx.paths.data, now });
    const { credentials: secrets, created } = credentials.load();
    const sessions = new SessionStore({
      dataDir: ctx.paths.data,
      ttlMs: () => this.#ctx.settings.get('session_ttl_ms'),
      maxSessions: () => this.#ctx.settings.get('max_sessions'),
      now,
      log: ctx.log,
    });
    sessions.load();
    this.#sessions = sessions;
    // Logins and API keys are counted apart, with the same settings.
    const limiter = () =>
      new LoginLimiter({
        maxFailures: () => this.#ctx.settings.get('login_max_failures'),
        windowMs: () => this.#ctx.settings.get('login_window_ms'),
        delayMs: () => this.#ctx.settings.get('login_delay_ms'),
        maxDelayMs: () => this.#ctx.settings.get('login_max_delay_ms'),
        now,
      });
    const hosts = new HostAllowList({ listenHost: host, allowedHosts: () => this.#ctx.settings.get('allowed_hosts'), now });
    const auth = new WebAuth({ ctx, credentials, sessions, limiter: limiter(), apiKeyLimiter: limiter() });
    const page = StaticPage.load(this.#options.pageDir ?? defaultPageDir());

    let handler: RequestHandler | undefined;
    const app = Fastify({
      // fastify gets a server it never listens on; the real socket is the WebListener's.
      serverFactory: (fastifyHandler) => {
        handler = fastifyHandler;
        return createServer();
      },
      bodyLimit: settings.body_limit_bytes,
      trustProxy: false,
      logger: false,
      requestIdHeader: false,
      routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
      frameworkErrors: frameworkErrorHandler,
      clientErrorHandler,
    });
    this.#app = app;
    try {
      app.decorateRequest('caller', null as never);
      app.decorateRequest('authMethod', null as never);
      installErrorHandlers(app, ctx.log);
      this.#addSecurityHooks(app, hosts, auth);
      auth.register(app);
      const deps: RouteDeps = { ctx, settings: () => this.#settings() };
      for (const module of this.#options.routeModules) await module(app, deps);
      registerPluginRoutes(app, ctx);
      page.register(app);
      registerWebuiMethods({ ctx, credentials, sessions, url: () => this.#url });
      await app.ready();
      if (!handler) throw new HomeAgentError('HA_ERR_INTERNAL', 'fastify did not hand over its request handler');
      this.#listener = await WebListener.acquire({
        host,
        port: this.#options.port ?? settings.port,
        limits: settings,
        owner: this,
        handler,
        log: ctx.log,
      });
    } catch (error) {
      await this.stop();
      throw error;
    }
    const bound = this.address()?.port ?? 0;
    this.#url = `http://${urlHost(displayHost(host), bound)}/`;
    if (this.#listener?.handedOver)
      ctx.log.info({ url: this.#url }, 'took over the web server socket from the previous instance (hot reload)');
    this.#announce(this.#url, scope, page, created ? secrets : undefined, credentials.file);
  }

  async stop(): Promise<void> {
    const app = this.#app;
    const listener = this.#listener;
    this.#app = undefined;
    this.#listener = undefined;
    this.#url = undefined;
    // First the app, whose preClose hooks end the event streams with a last `closed` event (requests
    // arriving meanwhile get 503), then the socket: new requests go to the instance that replaces
    // this one on a reload, or nowhere.
    try {
      await app?.close();
    } catch (error) {
      this.#ctx.log.warn({ err: error }, 'the web server did not close cleanly');
    }
    await listener?.release();
  }

  health(): Required<PluginHealth> {
    const listener = this.#listener;
    if (!listener?.listening) return { ok: false, detail: 'not listening', detail_zh: '没有在监听' };
    const { dropped, malformed } = listener.refusals();
    const url = this.#url ?? '';
    const connections = listener.connections();
    const sessions = this.#sessions?.size ?? 0;
    return {
      ok: true,
      detail: `serving ${url} (${connections} connections, ${sessions} sessions; since start ${dropped} refused over max_connections, ${malformed} malformed requests)`,
      detail_zh: `正在服务 ${url}（${connections} 个连接，${sessions} 个会话；启动以来 ${dropped} 个因超过 max_connections 被拒，${malformed} 个请求格式错误）`,
    };
  }

  /** The bound address (tests read the port back after listening on port 0). */
  address(): AddressInfo | undefined {
    return this.#listener?.address();
  }

  /** The page's address, once listening. */
  url(): string | undefined {
    return this.#url;
  }

  /** The fastify instance (tests use app.inject); undefined when stopped. */
  get app(): FastifyInstance | undefined {
    return this.#app;
  }

  /** Open connections, for tests and health. */
  connections(): number {
    return this.#listener?.connections() ?? 0;
  }

  #addSecurityHooks(app: FastifyInstance, hosts: HostAllowList, auth: WebAuth): void {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
      hosts.check(request.headers.host);
      const identity = auth.authenticate(request, request.routeOptions.config.public === true, reply);
      if (STATE_CHANGING.has(request.method) && identity?.method !== 'api_key') {
        checkSameOrigin(request.headers, identity?.method === 'session');
      }
    });
    // API answers are personal and change: no cache keeps them, unless a route says otherwise (the page's files).
    app.addHook('onSend', async (_request, reply, payload) => {
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      return payload;
    });
    // One audit record per successful change, whoever made it; never the body (it may hold secrets).
    app.addHook('onResponse', async (request, reply) => {
      if (!STATE_CHANGING.has(request.method) || reply.statusCode >= 400) return;
      this.#ctx.audit('http.request', {
        on_behalf_of: request.caller?.actor ?? ANONYMOUS,
        method: request.method,
        route: request.routeOptions.url ?? pathOf(request.url),
        path: pathOf(request.url),
        status: reply.statusCode,
      });
    });
  }

  #announce(url: string, scope: AddressScope, page: StaticPage, created: Credentials | undefined, file: string): void {
    const log = this.#ctx.log;
    if (scope === 'network') {
      log.warn({ url }, `the web page listens on ${url} for other machines too: anyone on the network can try to log in`);
    }
    if (!page.built) log.warn({ dir: page.dir }, 'the web page was not built (run npm run build); the API works without it');
    log.info({ url }, `web page at ${url}`);
    if (!created) return;
    // The log (the journal under systemd, kept for months and readable by the adm group) says
    // where the secrets are, never what they are. They go to stderr only when it is a terminal:
    // `npm start` in a shell shows them to the owner once; under systemd stderr is the journal too,
    // so there the owner reads them with homeagentctl (or on the Pi's console, where
    // homeagent-firstboot.service shows the password from the credentials file).
    const where = `\`homeagentctl webui credentials\` shows them (kept in ${file}, readable by the service user only)`;
    const stderr = this.#options.stderr ?? process.stderr;
    const shown = stderr.isTTY === true;
    log.warn(
      { url, file, printed_to_terminal: shown },
      `first start of the web page: an admin password and an API key were made; ${where}`,
    );
    if (shown) {
      stderr.write(
        `HomeAgent web page: ${url}\n  admin password: ${created.password}\n  API key: ${created.api_key}\n  (shown once, on this terminal only, never in the log; ${where})\n`,
      );
    }
  }

  /** The current plugin.webui.* values. */
  #settings(): WebuiSettings {
    return this.#ctx.settings.values();
  }
}

/** The address to show for a wildcard listen address: the machine itself. */
function displayHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}
