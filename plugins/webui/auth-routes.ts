/**
 * Who a request is, and the routes that log the page in and out. Programs prove themselves with
 * the API key (X-API-Key or Authorization: Bearer; never in the URL, where it would end up in
 * logs and browser history); the page with the session cookie it got from POST /auth/login.
 * Failed logins and wrong API keys are counted per address (apart, so a program with a stale key
 * does not slow the owner's login): past a few, each further attempt has to wait a growing delay
 * and is refused with 429 and Retry-After until then, unchecked (login-limiter.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HomeAgentError, offeredTokens, type PluginContext } from '../../src/sdk/index.js';
import type { CredentialStore } from './credentials.js';
import { pathOf, sendError } from './http-errors.js';
import type { LoginLimiter } from './login-limiter.js';
import { clearedSessionCookie, type SessionInfo, type SessionStore, sessionCookie, sessionIdFromCookie } from './sessions.js';
import { type AuthMethod, ownerCaller } from './types.js';

/** The caller of a public route that proved nothing. */
export const ANONYMOUS = 'webui:anonymous';
const NO_QUERY = new URLSearchParams();
/** Longest password accepted for checking (a bigger body is a mistake or an attack, not a password). */
const MAX_PASSWORD_CHARS = 1024;

export interface Identity {
  method: AuthMethod;
  /** The session, when the cookie proved it. */
  session?: SessionInfo;
}

export interface WebAuthDeps {
  ctx: PluginContext;
  credentials: CredentialStore;
  sessions: SessionStore;
  /** Failed logins per address. */
  limiter: LoginLimiter;
  /** Wrong API keys per address. */
  apiKeyLimiter: LoginLimiter;
}

export class WebAuth {
  readonly #deps: WebAuthDeps;
  readonly #identities = new WeakMap<FastifyRequest, Identity>();

  constructor(deps: WebAuthDeps) {
    this.#deps = deps;
  }

  /**
   * Sets request.caller and request.authMethod from the API key or the session cookie. A wrong API
   * key is refused (401) even when a valid cookie comes with it: whoever sent a key wants it
   * checked. Public routes ignore wrong or missing credentials and go on as {@link ANONYMOUS}
   * (a wrong key still counts there: which identity a public route reports would tell a guesser
   * whether the key was right). A key from an address that has to wait is refused with 429 and a
   * Retry-After header on `reply`, without being checked.
   */
  authenticate(request: FastifyRequest, isPublic: boolean, reply?: FastifyReply): Identity | undefined {
    const identity = this.#identify(request, isPublic, reply);
    if (identity) {
      this.#identities.set(request, identity);
      request.caller = ownerCaller(identity.method);
      request.authMethod = identity.method;
      return identity;
    }
    if (!isPublic) {
      throw new HomeAgentError(
        'HA_ERR_HTTP_AUTH',
        'log in first (POST /api/v1/auth/login), or send the API key as X-API-Key: <key> or Authorization: Bearer <key>',
      );
    }
    request.caller = { actor: ANONYMOUS };
    return undefined;
  }

  identity(request: FastifyRequest): Identity | undefined {
    return this.#identities.get(request);
  }

  register(app: FastifyInstance): void {
    const config = { public: true };
    app.post('/api/v1/auth/login', { config }, (request, reply) => this.#login(request, reply));
    app.post('/api/v1/auth/logout', { config }, (request, reply) => this.#logout(request, reply));
    app.get('/api/v1/auth/session', { config }, (request) => ({ ok: true, result: this.#describe(this.identity(request)) }));
  }

  #identify(request: FastifyRequest, isPublic: boolean, reply: FastifyReply | undefined): Identity | undefined {
    const offered = offeredTokens(request.headers, NO_QUERY);
    if (offered.length > 0) {
      const address = request.ip;
      const waitMs = this.#deps.apiKeyLimiter.retryAfterMs(address);
      if (waitMs > 0) throw limitError(reply, waitMs, 'requests with a wrong API key');
      if (this.#deps.credentials.apiKeyMatches(offered)) {
        this.#deps.apiKeyLimiter.success(address);
        return { method: 'api_key' };
      }
      this.#deps.apiKeyLimiter.failure(address);
      this.#deps.ctx.log.warn({ address, path: pathOf(request.url) }, 'request with a wrong API key');
      if (!isPublic) {
        throw new HomeAgentError(
          'HA_ERR_HTTP_AUTH',
          'the API key is wrong; `homeagentctl webui credentials` shows the right one (send it as X-API-Key or Authorization: Bearer)',
        );
      }
    }
    const session = this.#deps.sessions.verify(sessionIdFromCookie(request.headers.cookie));
    return session ? { method: 'session', session } : undefined;
  }

  async #login(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const address = request.ip;
    const waitMs = this.#deps.limiter.retryAfterMs(address);
    if (waitMs > 0) return sendError(reply, limitError(reply, waitMs, 'failed logins'));
    const password = (request.body as { password?: unknown } | null | undefined)?.password;
    if (typeof password !== 'string' || password === '' || password.length > MAX_PASSWORD_CHARS) {
      throw new HomeAgentError(
        'HA_ERR_RPC_INVALID_PARAMS',
        `send {"password": "<the admin password>"} (a string of 1-${MAX_PASSWORD_CHARS} characters)`,
      );
    }
    if (!this.#deps.credentials.passwordMatches(password)) {
      this.#deps.limiter.failure(address);
      this.#deps.ctx.log.warn({ address }, 'failed login to the web page');
      throw new HomeAgentError('HA_ERR_HTTP_AUTH', 'wrong password; `homeagentctl webui credentials` shows it on the machine itself');
    }
    this.#deps.limiter.success(address);
    const session = this.#deps.sessions.create();
    const identity: Identity = { method: 'session', session: { created_at: session.created_at, expires_at: session.expires_at } };
    this.#identities.set(request, identity);
    // The audit record of this POST names the admin who just logged in.
    request.caller = ownerCaller('session');
    request.authMethod = 'session';
    reply.header('set-cookie', sessionCookie(session.id, session.expires_at - session.created_at, request.protocol === 'https'));
    return reply.send({ ok: true, result: this.#describe(identity) });
  }

  async #logout(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    this.#deps.sessions.end(sessionIdFromCookie(request.headers.cookie));
    this.#identities.delete(request);
    reply.header('set-cookie', clearedSessionCookie(request.protocol === 'https'));
    return reply.send({ ok: true, result: this.#describe(undefined) });
  }

  #describe(identity: Identity | undefined): { authenticated: boolean; method: AuthMethod | null; expires_at: string | null } {
    return {
      authenticated: identity !== undefined,
      method: identity?.method ?? null,
      expires_at: identity?.session ? new Date(identity.session.expires_at).toISOString() : null,
    };
  }
}

/** 429 with Retry-After (whole seconds, at least 1): the address has to wait before trying again. */
function limitError(reply: FastifyReply | undefined, waitMs: number, what: string): HomeAgentError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  reply?.header('retry-after', String(seconds));
  return new HomeAgentError('HA_ERR_HTTP_LOGIN_LIMIT', `too many ${what} from this address; try again in ${seconds} s`, {
    details: { retry_after_s: seconds },
  });
}
