/**
 * The /api/v1 routes of the web server (docs/webui-api.md, Routes and Events): one module per
 * group, each route a thin translation of an HTTP request into the control method of the same
 * name, so the page, `homeagentctl --json` and other programs see the same objects. The event
 * ring is made here, when the plugin starts, so that what happens before a page connects can be
 * replayed to it.
 */
import type { FastifyInstance } from 'fastify';
import { agentRoutes } from './api-agents.js';
import { chatRoutes } from './api-chat.js';
import { eventRoutes } from './api-events.js';
import { homeRoutes } from './api-home.js';
import { knowledgeRoutes } from './api-knowledge.js';
import { mediaRoutes } from './api-media.js';
import { memoryRoutes } from './api-memory.js';
import { pluginRoutes } from './api-plugins.js';
import { sequenceRoutes } from './api-sequences.js';
import { systemRoutes } from './api-system.js';
import { zigbeeRoutes } from './api-zigbee.js';
import { EventRing } from './event-ring.js';
import type { EventStreams, Heartbeat } from './event-stream.js';
import type { RouteDeps, RouteModule } from './types.js';

export const API_PREFIX = '/api/v1';

export interface ApiRouteOptions {
  /** The event streams' heartbeat timer (tests drive it by hand). */
  heartbeat?: Heartbeat;
  heartbeatMs?: number;
  /** Fresh chat input ids (tests choose them). */
  newInputId?: () => string;
  /** Called with the ring and the streams once they exist (tests look inside). */
  onEvents?: (events: { ring: EventRing; streams: EventStreams }) => void;
}

export function createApiRoutes(options: ApiRouteOptions = {}): RouteModule {
  return async (app: FastifyInstance, deps: RouteDeps) => {
    const ring = new EventRing(deps.settings().event_buffer);
    await app.register(
      async (api) => {
        systemRoutes(api, deps);
        let streams: EventStreams | undefined;
        chatRoutes(api, deps, {
          ring,
          // A page following the event stream sees what the agent says on its own (a timer ringing).
          listening: () => (streams?.size ?? 0) > 0,
          ...(options.newInputId !== undefined && { newId: options.newInputId }),
        });
        streams = eventRoutes(api, deps, {
          ring,
          ...(options.heartbeat !== undefined && { heartbeat: options.heartbeat }),
          ...(options.heartbeatMs !== undefined && { heartbeatMs: options.heartbeatMs }),
        });
        memoryRoutes(api, deps);
        knowledgeRoutes(api, deps);
        homeRoutes(api, deps);
        pluginRoutes(api, deps);
        sequenceRoutes(api, deps);
        mediaRoutes(api, deps);
        zigbeeRoutes(api, deps);
        agentRoutes(api, deps);
        options.onEvents?.({ ring, streams });
      },
      { prefix: API_PREFIX },
    );
  };
}

export const apiRoutes: RouteModule = createApiRoutes();
