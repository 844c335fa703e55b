/**
 * Tool sequences over /api/v1 (the seq plugin's control methods, docs/sequences.md): the list for
 * the Sequences view, a run by name with its declared arguments, and deleting one. seq.run and
 * seq.delete are owner-only methods; the page's session and key are the owner's, and the control
 * method checks that again. Names are at most 64 characters and may hold spaces ("good night").
 * The seq plugin fails a run with a tool error whose detail starts with its code
 * ("HA_ERR_SEQ_STEP_FAILED: in good night, ..."): it is answered as that coded error, so the page
 * says which step failed and why instead of an internal error.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERROR_CODES, type ErrorCode, HomeAgentError } from '../../src/sdk/index.js';
import { type ApiResult, bodyObject, callMethod, invalidParams, noQuery, pathText } from './api-params.js';
import type { RouteDeps } from './types.js';

interface NameParams {
  Params: { name: string };
}

/** seq's own limit on a name, in characters; the method checks the rest. */
const MAX_NAME = 64;

const sequenceName = (value: unknown) => pathText(value, 'sequence name', { max: MAX_NAME * 4 });

const CODED_DETAIL = /^(HA_ERR_[A-Z0-9_]+): ([\s\S]+)$/;

/** A tool error (a class of the daemon's, known here by its shape) as the coded error its detail names. */
export function codedToolError(error: unknown): unknown {
  if (!(error instanceof Error) || error.name !== 'ToolError') return error;
  const detail = (error as Error & { info?: { detail?: unknown } }).info?.detail;
  if (typeof detail !== 'string') return error;
  const coded = CODED_DETAIL.exec(detail);
  const code = coded?.[1];
  if (coded && code !== undefined && code in ERROR_CODES) return new HomeAgentError(code as ErrorCode, coded[2], { cause: error });
  return new HomeAgentError('HA_ERR_TOOL_FAILED', detail, { cause: error });
}

async function callSeq(deps: RouteDeps, request: FastifyRequest, method: string, params: Record<string, unknown> = {}): Promise<ApiResult> {
  try {
    return await callMethod(deps, request, method, params);
  } catch (error) {
    throw codedToolError(error);
  }
}

export function sequenceRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get('/sequences', async (request) => {
    noQuery(request.query);
    return callSeq(deps, request, 'seq.list');
  });

  app.post<NameParams>('/sequences/:name/run', async (request) => {
    noQuery(request.query);
    const { args } = bodyObject(request.body, ['args'], { optional: true });
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
      throw invalidParams('args must be a JSON object of the sequence’s arguments');
    return callSeq(deps, request, 'seq.run', { name: sequenceName(request.params.name), args });
  });

  app.delete<NameParams>('/sequences/:name', async (request) => {
    noQuery(request.query);
    return callSeq(deps, request, 'seq.delete', { name: sequenceName(request.params.name) });
  });
}
