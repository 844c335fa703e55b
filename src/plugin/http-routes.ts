/**
 * HTTP routes plugins serve through the daemon's one web server, under `/plugins/<name>/...`.
 * The web server (webui plugin) asks {@link HttpRouteRegistry.match} for each request below
 * `/plugins/`; the plugin host swaps a plugin's routes in one step on reload.
 */
import type { HttpRoute, ServedRoute } from '../sdk/plugin.js';
import { HomeAgentError } from '../shared/errors.js';

const ROUTE_PATH = /^\/[A-Za-z0-9._~\-/:]*$/;
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']);

export type RegisteredRoute = ServedRoute;

export class HttpRouteRegistry {
  #routes = new Map<string, RegisteredRoute>();

  /** Checks a route a plugin wants and returns it with its full path; throws HA_ERR_IO_DEFINITION. */
  prepare(plugin: string, route: HttpRoute): RegisteredRoute {
    if (!METHODS.has(route.method))
      throw new HomeAgentError('HA_ERR_IO_DEFINITION', `HTTP method ${String(route.method)} is not supported`);
    if (typeof route.path !== 'string' || !ROUTE_PATH.test(route.path) || route.path.includes('..')) {
      throw new HomeAgentError(
        'HA_ERR_IO_DEFINITION',
        `HTTP route path ${JSON.stringify(route.path)} must start with / and use URL path characters`,
      );
    }
    if (typeof route.handler !== 'function') throw new HomeAgentError('HA_ERR_IO_DEFINITION', 'an HTTP route needs a handler');
    return { ...route, owner: `plugin:${plugin}`, full_path: `/plugins/${plugin}${route.path === '/' ? '' : route.path}` };
  }

  add(route: RegisteredRoute): () => void {
    const key = `${route.method} ${route.full_path}`;
    if (this.#routes.has(key)) throw new HomeAgentError('HA_ERR_IO_DEFINITION', `HTTP route ${key} is already registered`);
    const routes = new Map(this.#routes);
    routes.set(key, route);
    this.#routes = routes;
    return () => {
      if (this.#routes.get(key) !== route) return;
      const next = new Map(this.#routes);
      next.delete(key);
      this.#routes = next;
    };
  }

  /** Replaces all routes of `owner` in one swap. */
  replaceOwner(owner: string, routes: readonly RegisteredRoute[]): void {
    const next = new Map([...this.#routes].filter(([, r]) => r.owner !== owner));
    for (const route of routes) {
      const key = `${route.method} ${route.full_path}`;
      if (next.has(key)) throw new HomeAgentError('HA_ERR_IO_DEFINITION', `HTTP route ${key} is already registered`);
      next.set(key, route);
    }
    this.#routes = next;
  }

  removeOwner(owner: string): void {
    this.replaceOwner(owner, []);
  }

  match(method: string, path: string): RegisteredRoute | undefined {
    return this.#routes.get(`${method.toUpperCase()} ${path}`);
  }

  list(): Array<{ method: string; path: string; owner: string }> {
    return [...this.#routes.values()].map((r) => ({ method: r.method, path: r.full_path, owner: r.owner }));
  }
}
