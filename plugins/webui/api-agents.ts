/**
 * Sub-agents over /api/v1 for the page's Agents view: the children the subagents plugin runs
 * (docs/subagents.md) through its owner-only control method subagents.children. Without the plugin
 * the method is unknown (HA_ERR_RPC_UNKNOWN_METHOD), which the view reads as "the plugin is off".
 */
import type { FastifyInstance } from 'fastify';
import { callMethod, noQuery } from './api-params.js';
import type { RouteDeps } from './types.js';

export function agentRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/agents', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'subagents.children');
  });
}
