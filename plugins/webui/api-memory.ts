/**
 * The memory inspector's routes: search what memory recalls, list entities, relations (with the
 * sentences and inputs each fact came from) and documents, read the original input behind a fact,
 * correct a fact and forget things. Forgetting and editing are audited by the control methods
 * with the request's caller as actor.
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
