/**
 * The /api/v1 routes on a bare fastify app for unit tests: a test plugin context (its real
 * ControlRegistry, where each test registers the methods a route calls), the server's error
 * handlers, and a stand-in for the auth hook that sets request.caller (the actor comes from an
 * `x-test-actor` header, `webui:api` by default). The security hooks have their own tests.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import type { Test } from 'tap';
import { type ApiRouteOptions, createApiRoutes } from '../../../../plugins/webui/api-routes.js';
import type { EventRing } from '../../../../plugins/webui/event-ring.js';
import type { EventStreams } from '../../../../plugins/webui/event-stream.js';
import { frameworkErrorHandler, installErrorHandlers } from '../../../../plugins/webui/http-errors.js';
import { ownerCaller, type WebuiSettings } from '../../../../plugins/webui/types.js';
import type { Caller } from '../../../../src/sdk/control.js';
import { createTestPluginContext, type TestPluginContext, type TestPluginContextOptions } from '../../../helpers/plugin-context.js';
import { webuiSettings } from './webui-setup.js';

/** plugin.webui.* defaults (from the schema), on a free port. */
export const WEBUI_DEFAULTS: WebuiSettings = webuiSettings({ port: 0 });

export interface CallRecord {
  method: string;
  params: Record<string, unknown>;
  caller: Caller;
}

export interface ApiHarness {
  app: FastifyInstance;
  tc: TestPluginContext;
  settings: WebuiSettings;
  /** Every call of a method registered with {@link ApiHarness.method}, in order. */
  calls: CallRecord[];
  ring: EventRing;
  streams: EventStreams;
  /** Registers a control method on the test registry whose calls are recorded. */
  method<P extends TSchema>(name: string, params: P, handler: (params: Static<P>, caller: Caller) => unknown): void;
  /** One request; `json` is the parsed body. */
  request(options: InjectOptions): Promise<{ status: number; json: Record<string, unknown>; headers: Record<string, unknown> }>;
}

export interface HarnessOptions extends ApiRouteOptions {
  settings?: Partial<WebuiSettings>;
  receipt?: TestPluginContextOptions['receipt'];
}

export async function apiHarness(t: Test, options: HarnessOptions = {}): Promise<ApiHarness> {
  const tc = createTestPluginContext({
    name: 'webui',
    dataDir: t.testdir(),
    ...(options.receipt !== undefined && { receipt: options.receipt }),
  });
  t.teardown(() => tc.close());
  const settings: WebuiSettings = { ...WEBUI_DEFAULTS, ...options.settings };
  // As the real server (webui-plugin.ts) builds it, minus the security hooks.
  const app = Fastify({
    bodyLimit: settings.body_limit_bytes,
    routerOptions: { maxParamLength: 1000 },
    frameworkErrors: frameworkErrorHandler,
  });
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('authMethod', null as unknown as 'api_key');
  app.addHook('onRequest', async (request) => {
    const actor = request.headers['x-test-actor'];
    // As the real auth hook does for a request with the API key: the owner.
    request.caller = { ...ownerCaller('api_key'), ...(typeof actor === 'string' ? { actor } : {}) };
    request.authMethod = 'api_key';
  });
  installErrorHandlers(app, tc.context.log);
  let events: { ring: EventRing; streams: EventStreams } | undefined;
  await createApiRoutes({
    ...options,
    onEvents: (made) => {
      events = made;
      options.onEvents?.(made);
    },
  })(app, { ctx: tc.context, settings: () => settings });
  await app.ready();
  t.teardown(() => app.close());
  if (!events) throw new Error('the api routes did not make their event ring');
  const calls: CallRecord[] = [];
  return {
    app,
    tc,
    settings,
    calls,
    ring: events.ring,
    streams: events.streams,
    method: (name, params, handler) => {
      tc.control.register({
        name,
        description: `test double of ${name}`,
        params,
        handler: (given, caller) => {
          calls.push({ method: name, params: given as Record<string, unknown>, caller });
          return handler(given, caller);
        },
      });
    },
    request: async (inject) => {
      const reply = await app.inject(inject);
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(reply.body) as Record<string, unknown>;
      } catch {
        json = { raw: reply.body };
      }
      return { status: reply.statusCode, json, headers: reply.headers };
    },
  };
}

export { Type };
