/**
 * The memory inspector's routes: search what memory recalls, list entities, relations (with the
 * sentences and inputs each fact came from) and documents, read the original input behind a fact,
 * correct a fact and forget things; and the graph view's bounded neighbourhood of one entity.
 * Forgetting and editing are audited by the control methods with the request's caller as actor.
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, callMethod, noQuery, pathId, pathText, QueryParams } from './api-params.js';
import type { RouteDeps } from './types.js';

interface NameParams {
  Params: { name: string };
}
interface IdParams {
  Params: { id: string };
}

const GRAPH_QUERY = ['entity', 'id', 'depth', 'max_nodes', 'entity_types', 'relation_types', 'since', 'until', 'at', 'history'];

/** `a,b` → ['a', 'b']; an empty item is the untyped entity (`,` alone asks for those only); absent → undefined. */
function typeList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : [...new Set(value.split(',').map((item) => item.trim()))];
}

const entityName = (value: unknown) => pathText(value, 'entity name', { max: 200 });
const eventId = (value: unknown) => pathText(value, 'event id', { max: 256 });

export function memoryRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/memory/search', async (request) => {
    const query = new QueryParams(request.query, ['q', 'limit']);
    return callMethod(deps, request, 'memory.search', { query: query.required('q'), limit: query.integer('limit') });
  });

  app.get('/memory/stats', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.stats');
  });

  app.get('/memory/introspect', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.introspect');
  });

  // The graph view (src/memory/graph-view.ts): one entity's bounded neighbourhood; type lists comma-separated.
  app.get('/memory/graph', async (request) => {
    const query = new QueryParams(request.query, GRAPH_QUERY);
    return callMethod(deps, request, 'memory.graph', {
      entity: query.string('entity'),
      id: query.integer('id'),
      depth: query.integer('depth'),
      max_nodes: query.integer('max_nodes'),
      entity_types: typeList(query.string('entity_types')),
      relation_types: typeList(query.string('relation_types')),
      since: query.string('since'),
      until: query.string('until'),
      at: query.string('at'),
      history: query.boolean('history'),
    });
  });

  app.get('/memory/graph/types', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.graph_types');
  });

  app.get('/memory/entities', async (request) => {
    const query = new QueryParams(request.query, ['q', 'limit', 'offset']);
    return callMethod(deps, request, 'memory.entities', {
      q: query.string('q'),
      limit: query.integer('limit'),
      offset: query.integer('offset'),
    });
  });

  app.get<NameParams>('/memory/entities/:name', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.entity', { name: entityName(request.params.name) });
  });

  app.delete<NameParams>('/memory/entities/:name', async (request) => {
    const query = new QueryParams(request.query, ['hard']);
    return callMethod(deps, request, 'memory.forget', { entity: entityName(request.params.name), hard: query.boolean('hard') });
  });

  app.get('/memory/relations', async (request) => {
    const query = new QueryParams(request.query, ['entity', 'history', 'limit', 'offset']);
    return callMethod(deps, request, 'memory.relations', {
      entity: query.string('entity'),
      history: query.boolean('history'),
      limit: query.integer('limit'),
      offset: query.integer('offset'),
    });
  });

  app.patch<IdParams>('/memory/relations/:id', async (request) => {
    noQuery(request.query);
    const relationId = pathId(request.params.id, 'relation id');
    const body = bodyObject(request.body, ['subject', 'relation', 'object']);
    return callMethod(deps, request, 'memory.edit', {
      relation_id: relationId,
      subject: body.subject,
      relation: body.relation,
      object: body.object,
    });
  });

  app.delete<IdParams>('/memory/relations/:id', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.forget', { relation: pathId(request.params.id, 'relation id') });
  });

  app.get('/memory/documents', async (request) => {
    const query = new QueryParams(request.query, ['q', 'limit', 'offset']);
    return callMethod(deps, request, 'memory.documents', {
      q: query.string('q'),
      limit: query.integer('limit'),
      offset: query.integer('offset'),
    });
  });

  app.delete<IdParams>('/memory/documents/:id', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.forget', { document: pathId(request.params.id, 'document id') });
  });

  app.get<IdParams>('/memory/events/:id', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.event', { id: eventId(request.params.id) });
  });

  app.delete<IdParams>('/memory/events/:id', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'memory.forget', { event: eventId(request.params.id) });
  });
}
