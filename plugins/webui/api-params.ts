/**
 * Turning an HTTP request into the typed params of a control method. Query strings and path
 * segments are text; the control methods take integers and booleans, so each route reads them
 * through these helpers, which refuse anything that is not exactly a number or a boolean (and
 * query names the route does not know, so a misspelt filter is an error instead of being ignored)
 * with HA_ERR_RPC_INVALID_PARAMS naming the parameter. Bounds stay with the control method's
 * schema: one place decides what a limit may be, for the CLI and the web alike.
 */
import type { FastifyRequest } from 'fastify';
import { HomeAgentError } from '../../src/sdk/index.js';
import type { RouteDeps } from './types.js';

/** The success envelope of every /api/v1 answer. */
export interface ApiResult<T = unknown> {
  ok: true;
  result: T;
}

export function invalidParams(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', message);
}

const INTEGER = /^-?\d{1,16}$/;
const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** The query string of one request, read by name; every name the route accepts must be listed. */
export class QueryParams {
  readonly #values: Record<string, string>;

  constructor(query: unknown, accepted: readonly string[]) {
    this.#values = {};
    const entries = typeof query === 'object' && query !== null ? Object.entries(query as Record<string, unknown>) : [];
    for (const [name, value] of entries) {
      if (!accepted.includes(name)) {
        const known = accepted.length === 0 ? 'this route takes none' : `this route takes ${accepted.join(', ')}`;
        throw invalidParams(`unknown query parameter ${JSON.stringify(name)}; ${known}`);
      }
      if (typeof value !== 'string') throw invalidParams(`query parameter ${name} is given more than once`);
      this.#values[name] = value;
    }
  }

  /** The text given for `name`; an empty value (`?q=`) counts as not given. */
  string(name: string): string | undefined {
    const value = this.#values[name];
    return value === undefined || value === '' ? undefined : value;
  }

  /** The text given for `name`, which the route cannot do without. */
  required(name: string): string {
    const value = this.string(name);
    if (value === undefined) throw invalidParams(`query parameter ${name} is required`);
    return value;
  }

  integer(name: string): number | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    if (!INTEGER.test(value)) throw invalidParams(`query parameter ${name} must be a whole number, got ${JSON.stringify(value)}`);
    return Number(value);
  }

  boolean(name: string): boolean | undefined {
    const value = this.string(name)?.toLowerCase();
    if (value === undefined) return undefined;
    if (TRUE.has(value)) return true;
    if (FALSE.has(value)) return false;
    throw invalidParams(`query parameter ${name} must be true or false, got ${JSON.stringify(value)}`);
  }
}

/** Refuses any query parameter (routes that take none). */
export function noQuery(query: unknown): void {
  new QueryParams(query, []);
}

/** A path segment naming something (a setting key, an entity, a plugin), checked for shape only. */
export function pathText(value: unknown, name: string, options: { max?: number; pattern?: RegExp; hint?: string } = {}): string {
  const max = options.max ?? 256;
  if (typeof value !== 'string' || value === '') throw invalidParams(`the ${name} in the path is empty`);
  if (value.length > max) throw invalidParams(`the ${name} in the path is longer than ${max} characters`);
  if (CONTROL_CHARACTERS.test(value)) throw invalidParams(`the ${name} in the path contains control characters`);
  if (options.pattern && !options.pattern.test(value)) {
    throw invalidParams(`the ${name} ${JSON.stringify(value)} in the path is not valid${options.hint ? `: ${options.hint}` : ''}`);
  }
  return value;
}

/** A path segment holding a numeric id (memory relations and documents). */
export function pathId(value: unknown, name: string): number {
  const text = pathText(value, name, { max: 16 });
  if (!/^[1-9]\d*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw invalidParams(`the ${name} in the path must be a positive whole number, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/**
 * The JSON body as an object with only the fields the route knows; an absent body is `{}` when
 * the route allows that. Field types are checked by the control method the fields go to.
 */
export function bodyObject(body: unknown, accepted: readonly string[], options: { optional?: boolean } = {}): Record<string, unknown> {
  if (body === undefined || body === null || body === '') {
    if (options.optional) return {};
    throw invalidParams(`the request needs a JSON object body with ${accepted.join(', ')}`);
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidParams('the request body must be a JSON object');
  for (const name of Object.keys(body)) {
    if (!accepted.includes(name))
      throw invalidParams(`unknown field ${JSON.stringify(name)} in the body; this route takes ${accepted.join(', ')}`);
  }
  return body as Record<string, unknown>;
}

/** The object without its undefined fields (control methods validate what is there). */
export function defined(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined));
}

/** Calls a control method as the request's caller and wraps its answer in the envelope. */
export async function callMethod(
  deps: RouteDeps,
  request: FastifyRequest,
  method: string,
  params: Record<string, unknown> = {},
): Promise<ApiResult> {
  const result = await deps.ctx.control.call(method, defined(params), request.caller);
  return { ok: true, result };
}
