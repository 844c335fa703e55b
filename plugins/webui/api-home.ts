/**
 * The house over /api/v1: entities (list, one with its recent states, a service call, the history
 * and per-period statistics a chart needs, the owner's name, area and aliases of one), areas and
 * automations. A service call, an edit of an entity and a manual automation run change the house:
 * the control methods audit them with the request's caller as actor.
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, callMethod, noQuery, pathText, QueryParams } from './api-params.js';
import type { RouteDeps } from './types.js';

interface EntityParams {
  Params: { id: string };
}
interface ServiceParams {
  Params: { id: string; service: string };
}

// An id (`switch.kitchen_light`), a name or an alias: the registry resolves it.
const entityRef = (value: unknown) => pathText(value, 'entity', { max: 200 });
const serviceName = (value: unknown) =>
  pathText(value, 'service', { max: 64, pattern: /^[a-z][a-z0-9_]*$/, hint: 'like turn_on or toggle' });
const automationId = (value: unknown) => pathText(value, 'automation id', { max: 64, pattern: /^[a-z0-9_]+$/, hint: 'a-z, 0-9 and _' });

export function homeRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/entities', async (request) => {
    const query = new QueryParams(request.query, ['domain', 'area']);
    return callMethod(deps, request, 'entities.list', { domain: query.string('domain'), area: query.string('area') });
  });

  app.get('/areas', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'entities.areas');
  });

  app.get<EntityParams>('/entities/:id', async (request) => {
    const query = new QueryParams(request.query, ['history_limit']);
    return callMethod(deps, request, 'entities.get', {
      entity: entityRef(request.params.id),
      history_limit: query.integer('history_limit'),
    });
  });

  app.post<ServiceParams>('/entities/:id/services/:service', async (request) => {
    noQuery(request.query);
    const body = bodyObject(request.body, ['data'], { optional: true });
    return callMethod(deps, request, 'entities.call', {
      entity: entityRef(request.params.id),
      service: serviceName(request.params.service),
      data: body.data,
    });
  });

  // The page's edit dialog: the owner's name, area and aliases over the driver's (owner only, audited by the method).
  app.patch<EntityParams>('/entities/:id', async (request) => {
    noQuery(request.query);
    const body = bodyObject(request.body, ['name', 'area', 'reset_area', 'aliases']);
    return callMethod(deps, request, 'entities.customize', {
      entity: entityRef(request.params.id),
      name: body.name,
      area: body.area,
      reset_area: body.reset_area,
      aliases: body.aliases,
    });
  });

  app.get<EntityParams>('/entities/:id/history', async (request) => {
    const query = new QueryParams(request.query, ['from', 'to', 'limit']);
    return callMethod(deps, request, 'entities.history', {
      entity: entityRef(request.params.id),
      from: query.integer('from'),
      to: query.integer('to'),
      limit: query.integer('limit'),
    });
  });

  // The long charts: one row per period instead of every report.
  app.get<EntityParams>('/entities/:id/statistics', async (request) => {
    const query = new QueryParams(request.query, ['from', 'to']);
    return callMethod(deps, request, 'entities.statistics', {
      entity: entityRef(request.params.id),
      from: query.integer('from'),
      to: query.integer('to'),
    });
  });

  app.get('/automations', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'automations.list');
  });

  app.get('/automations/runs', async (request) => {
    const query = new QueryParams(request.query, ['id', 'limit']);
    return callMethod(deps, request, 'automations.runs', { id: query.string('id'), limit: query.integer('limit') });
  });

  app.get<EntityParams>('/automations/:id', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'automations.get', { id: automationId(request.params.id) });
  });

  app.post<EntityParams>('/automations/:id/run', async (request) => {
    noQuery(request.query);
    const body = bodyObject(request.body, ['skip_conditions'], { optional: true });
    return callMethod(deps, request, 'automations.run', { id: automationId(request.params.id), skip_conditions: body.skip_conditions });
  });
}
