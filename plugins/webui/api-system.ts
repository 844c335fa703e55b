/**
 * The daemon itself over /api/v1: status, health, the settings (read, change, reset, history),
 * the dangerous actions waiting for the owner's approval, and the recent log lines. The settings page is generated from what `config.list` answers (type,
 * bounds, enum, description, ...), so there is nothing settings-specific here beyond the key check.
 */
import type { FastifyInstance } from 'fastify';
import { bodyObject, callMethod, invalidParams, noQuery, pathText, QueryParams } from './api-params.js';
import type { RouteDeps } from './types.js';

// Setting keys are dotted snake_case (`plugin.webui.port`); plugin sections keep their own names.
const SETTING_KEY = /^[A-Za-z0-9_.-]+$/;

function settingKey(value: unknown): string {
  return pathText(value, 'setting key', { max: 256, pattern: SETTING_KEY, hint: 'a dotted key like core.log.level' });
}

function confirmationCode(value: unknown): string {
  return pathText(value, 'confirmation code', { max: 6, pattern: /^[A-Za-z0-9]{6}$/, hint: 'the six-character code of a waiting action' });
}

export function systemRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/status', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'status');
  });

  app.get('/health', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'health');
  });

  app.get('/settings', async (request) => {
    const query = new QueryParams(request.query, ['prefix']);
    return callMethod(deps, request, 'config.list', { prefix: query.string('prefix') });
  });

  app.get<{ Params: { key: string } }>('/settings/:key', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'config.get', { key: settingKey(request.params.key) });
  });

  app.put<{ Params: { key: string } }>('/settings/:key', async (request) => {
    const key = settingKey(request.params.key);
    const body = bodyObject(request.body, ['value']);
    // config.set would say "params.value is required"; the body is what the caller wrote.
    if (!('value' in body)) throw invalidParams('the body needs a value: {"value": ...}');
    return callMethod(deps, request, 'config.set', { key, value: body.value });
  });

  app.delete<{ Params: { key: string } }>('/settings/:key', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'config.reset', { key: settingKey(request.params.key) });
  });

  app.get('/settings-history', async (request) => {
    const query = new QueryParams(request.query, ['key', 'limit']);
    return callMethod(deps, request, 'config.history', { key: query.string('key'), limit: query.integer('limit') });
  });

  // Dangerous actions waiting for the owner (the page's approvals): only this session, the owner, decides.
  app.get('/confirmations', async (request) => {
    noQuery(request.query);
    return callMethod(deps, request, 'confirm.list');
  });

  app.post<{ Params: { code: string } }>('/confirmations/:code/approve', async (request) => {
    noQuery(request.query);
    bodyObject(request.body, [], { optional: true });
    return callMethod(deps, request, 'confirm.approve', { code: confirmationCode(request.params.code), channel: 'webui' });
  });

  app.post<{ Params: { code: string } }>('/confirmations/:code/deny', async (request) => {
    noQuery(request.query);
    bodyObject(request.body, [], { optional: true });
    return callMethod(deps, request, 'confirm.deny', { code: confirmationCode(request.params.code) });
  });

  app.get('/logs', async (request) => {
    const query = new QueryParams(request.query, ['level', 'subsystem', 'q', 'audit', 'limit']);
    return callMethod(deps, request, 'logs.recent', {
      level: query.string('level'),
      subsystem: query.string('subsystem'),
      q: query.string('q'),
      audit: query.boolean('audit'),
      limit: query.integer('limit'),
    });
  });
}
