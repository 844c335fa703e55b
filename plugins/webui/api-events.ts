/**
 * GET /api/v1/events: the kernel events the web page follows (the agent writing and calling
 * tools, entities changing, automations running, the daemon's status), kept in the event ring
 * from the moment the plugin starts and streamed as Server-Sent Events. The stream outlives the
 * server's request timeout (it is one long response), so only its own socket's idle timer is
 * switched off; the heartbeat keeps the connection visibly alive instead.
 */
import type { FastifyInstance } from 'fastify';
import type { EventName } from '../../src/sdk/index.js';
import { invalidParams, QueryParams } from './api-params.js';
import type { EventRing } from './event-ring.js';
import { EventStreams, type Heartbeat } from './event-stream.js';
import type { RouteDeps } from './types.js';

/** The kernel events streamed to the page, under their own names. */
export const STREAMED_EVENTS = [
  'agent.llm_chain',
  'agent.text_delta',
  'agent.tool_result',
  'agent.answer',
  'entity.state_changed',
  'automation.run',
  'daemon.status',
  'change.state',
  'health.changed',
  'confirmation.requested',
  'confirmation.resolved',
] as const satisfies readonly EventName[];

export interface EventRouteOptions {
  ring: EventRing;
  heartbeat?: Heartbeat;
  heartbeatMs?: number;
}

function lastEventId(header: unknown, query: QueryParams): number | undefined {
  // The browser sends the header on its own reconnects; it is newer than an id in the URL.
  const given = typeof header === 'string' && header !== '' ? header : query.string('last_event_id');
  if (given === undefined) return undefined;
  if (!/^\d{1,15}$/.test(given.trim()))
    throw invalidParams(`Last-Event-ID must be an event id (a whole number), got ${JSON.stringify(given)}`);
  return Number(given.trim());
}

/** Subscribes the ring to the kernel events and serves the stream; returns the streams for tests. */
export function eventRoutes(app: FastifyInstance, deps: RouteDeps, options: EventRouteOptions): EventStreams {
  const { ctx } = deps;
  const unsubscribe = STREAMED_EVENTS.map((name) => ctx.events.subscribe(name, (payload) => void options.ring.push(name, payload)));
  const streams = new EventStreams({
    ring: options.ring,
    maxStreams: () => deps.settings().max_event_streams,
    log: ctx.log,
    ...(options.heartbeat !== undefined && { heartbeat: options.heartbeat }),
    ...(options.heartbeatMs !== undefined && { heartbeatMs: options.heartbeatMs }),
  });

  app.get('/events', async (request, reply) => {
    const lastSeen = lastEventId(request.headers['last-event-id'], new QueryParams(request.query, ['last_event_id']));
    reply.hijack();
    request.raw.socket.setTimeout(0);
    streams.open(reply.raw, lastSeen);
  });

  // Open streams would hold server.close() forever: they end before it waits for connections.
  app.addHook('preClose', async () => streams.closeAll());
  app.addHook('onClose', async () => {
    for (const stop of unsubscribe) stop();
  });
  return streams;
}
