/**
 * Routes other plugins serve through this server, under /plugins/<name>/... (ctx.http.route in
 * the SDK). They pass the same security hooks as the API (Host, authentication, cross-site), so a
 * plugin only writes its handler. The plugin sees the request without the caller's credentials
 * (cookie, API key) and cannot set cookies on the page's origin; its answer gets nosniff and, unless
 * it is JSON, a sandboxing CSP, so a plugin serving outside content cannot run script as the page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HomeAgentError, type HttpRequest, type HttpResponse, type PluginContext } from '../../src/sdk/index.js';
import { pathOf } from './http-errors.js';
import { SANDBOX_CSP } from './safe-file.js';

const PREFIX = '/plugins/';
/** Request headers a plugin never sees: the caller's credentials are the web server's business. */
const HIDDEN_HEADERS = new Set(['cookie', 'authorization', 'x-api-key']);
/** Response headers a plugin may not set: they would change the page's origin or bypass the checks here. */
const FORBIDDEN_HEADERS = new Set([
  'set-cookie',
  'content-security-policy',
  'x-content-type-options',
  'content-length',
  'transfer-encoding',
  'connection',
]);
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function registerPluginRoutes(app: FastifyInstance, ctx: PluginContext): void {
  // Plugins may accept bodies that are not JSON (a webhook's form post, a device's raw upload).
  app.register(async (scope) => {
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.route({
      method: [...METHODS],
      url: `${PREFIX}*`,
      handler: (request, reply) => dispatch(ctx, request, reply),
    });
  });
}

async function dispatch(ctx: PluginContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const path = pathOf(request.url);
  const route = ctx.http.match(request.method, path);
  if (!route) throw new HomeAgentError('HA_ERR_HTTP_NOT_FOUND', `no plugin serves ${request.method} ${path}`);
  const name = route.owner.replace(/^plugin:/, '');
  const below = path.slice(`${PREFIX}${name}`.length) || '/';
  const answer: HttpResponse = await route.handler(pluginRequest(request, below));
  return send(reply, answer);
}

function pluginRequest(request: FastifyRequest, path: string): HttpRequest {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(key)) continue;
    headers[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries((request.query ?? {}) as Record<string, string | string[]>)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) query[key] = first;
  }
  return { method: request.method, path, query, headers, body: request.body ?? null };
}

function send(reply: FastifyReply, answer: HttpResponse): FastifyReply {
  const status = answer.status ?? 200;
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new HomeAgentError('HA_ERR_INTERNAL', `the plugin answered with HTTP status ${String(answer.status)}`);
  }
  for (const [key, value] of Object.entries(answer.headers ?? {})) {
    if (!FORBIDDEN_HEADERS.has(key.toLowerCase())) reply.header(key, value);
  }
  reply.code(status).header('x-content-type-options', 'nosniff');
  const body = answer.body;
  if (body === undefined || body === null) return reply.send();
  if (typeof body === 'string' || Buffer.isBuffer(body) || body instanceof Uint8Array) {
    if (!reply.hasHeader('content-type')) reply.type('application/octet-stream');
    return reply.header('content-security-policy', SANDBOX_CSP).send(body);
  }
  return reply.type('application/json; charset=utf-8').send(body);
}
