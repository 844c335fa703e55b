/**
 * Tool sequences over /api/v1 (the seq plugin's control methods, docs/sequences.md): the list for
 * the Sequences view, a run by name with its declared arguments, and deleting one. seq.run and
 * seq.delete are owner-only methods; the page's session and key are the owner's, and the control
 * method checks that again. Names are at most 64 characters and may hold spaces ("good night").
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, callMethod, invalidParams, noQuery, pathText } from './api-params.js';
import type { RouteDeps } from './types.js';

interface NameParams {
  Params: { name: string };
}

/** seq's own limit on a name, in characters; the method checks the rest. */
const MAX_NAME = 64;

const sequenceName = (value: unknown) => pathText(value, 'sequence name', { max: MAX_NAME * 4 });

export function sequenceRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/sequences', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'seq.list');
  });

  app.post<NameParams>('/sequences/:name/run', async (request) => {
    noQuery(request.query);
    const { args } = bodyObject(request.body, ['args'], { optional: true });
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
      throw invalidParams('args must be a JSON object of the sequence’s arguments');
    return callMethod(deps, request, 'seq.run', { name: sequenceName(request.params.name), args });
  });

  app.delete<NameParams>('/sequences/:name', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'seq.delete', { name: sequenceName(request.params.name) });
  });
}
