/**
 * Contracts shared by the web server's modules: its settings, who is calling, and the shape of a
 * route module. The server (webui-plugin.ts) applies the security checks to every request before
 * any route module sees it; route modules only throw HomeAgentErrors and return results.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller, InputSender, PluginContext } from '../../src/sdk/index.js';
import type { WebuiSettings } from './settings-schema.js';

/** plugin.webui.*, declared in settings-schema.ts. */
export type { WebuiSettings };

/** How a request proved who it is: the session cookie of the page, or the API key. */
export type AuthMethod = 'session' | 'api_key';

/** Actors in audit records and control calls. */
export const ACTOR: Record<AuthMethod, string> = { session: 'webui:admin', api_key: 'webui:api' };
const PROOF: Record<AuthMethod, string> = { session: 'a web session (the admin password)', api_key: 'the web API key' };

/** The caller of a request that passed authentication: the owner, who alone has the password and the key. */
export function ownerCaller(method: AuthMethod): Caller {
  return { actor: ACTOR[method], owner: true, proof: PROOF[method] };
}

/** Who a request speaks for when it talks to the agent (only authenticated routes do). */
export function requestSender(request: FastifyRequest): InputSender {
  const { caller } = request;
  return caller.owner === true
    ? { trust: 'owner', id: caller.actor, proof: caller.proof ?? caller.actor }
    : { trust: 'untrusted', id: caller.actor, proof: 'an unauthenticated web request' };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook for every request that passed it; control calls are made as this caller. */
    caller: Caller;
    authMethod: AuthMethod;
  }
  interface FastifyContextConfig {
    /** Served without authentication (login, the page's own files). The Host check still applies. */
    public?: boolean;
  }
}

/** What a route module gets besides the fastify instance. */
export interface RouteDeps {
  ctx: PluginContext<WebuiSettings>;
  /** The current plugin.webui.* values. */
  settings(): WebuiSettings;
}

/** A group of routes (api-routes.ts, openai-routes.ts); registered after the security hooks. */
export type RouteModule = (app: FastifyInstance, deps: RouteDeps) => void | Promise<void>;
