/**
 * The page's one way to talk to /api/v1: every answer is the envelope {ok, result} or
 * {ok:false, error:{code, message}}, and a failure becomes an ApiError carrying that code and
 * message so the page can show it next to what failed. The session cookie travels with every
 * request (same origin); state-changing requests always send a JSON body (the server refuses an
 * empty one under Content-Type: application/json), so `{}` stands in when there is nothing to say.
 */

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when any request answers 401: the session ended, the page shows the login form again. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export type Query = Record<string, string | number | boolean | undefined | null>;

/** `/entities` + {area: 'x', q: undefined} → `/entities?area=x`. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** Path segments of names that may hold slashes (knowledge entries) keep their slashes. */
export function encodePath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

export interface RequestOptions {
  query?: Query;
  /** A JSON body (state-changing methods send `{}` without one). */
  body?: unknown;
  /** A raw body (file uploads), sent as application/octet-stream. */
  raw?: Blob;
  signal?: AbortSignal;
}

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: {} };
  if (options.signal) init.signal = options.signal;
  if (options.raw !== undefined) {
    init.headers = { 'Content-Type': 'application/octet-stream' };
    init.body = options.raw;
  } else if (method !== 'GET' && method !== 'HEAD') {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify(options.body ?? {});
  }
  let response: Response;
  try {
    response = await fetch(`/api/v1${withQuery(path, options.query)}`, init);
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError('HA_ERR_NETWORK', (error as Error).message || 'network error', 0);
  }
  let envelope: { ok?: boolean; result?: unknown; error?: { code?: string; message?: string } } | undefined;
  try {
    envelope = await response.json();
  } catch {
    envelope = undefined;
  }
  if (response.status === 401) for (const listener of unauthorizedListeners) listener();
  if (envelope?.ok === true) return envelope.result as T;
  const code = envelope?.error?.code ?? `HTTP_${response.status}`;
  const message = envelope?.error?.message ?? `${response.status} ${response.statusText}`;
  throw new ApiError(code, message, response.status);
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) =>
    request<T>('GET', path, { ...(query && { query }), ...(signal && { signal }) }),
  post: <T>(path: string, body?: unknown, query?: Query) => request<T>('POST', path, { body, ...(query && { query }) }),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, { body }),
  patch: <T>(path: string, body?: unknown) => request<T>('PATCH', path, { body }),
  del: <T>(path: string, query?: Query) => request<T>('DELETE', path, { ...(query && { query }) }),
  upload: <T>(path: string, file: Blob, query?: Query) => request<T>('POST', path, { raw: file, ...(query && { query }) }),
};

/** The message to show a person for anything a request threw. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.code.startsWith('HA_ERR') ? `${error.message} (${error.code})` : error.message;
  return error instanceof Error ? error.message : String(error);
}
