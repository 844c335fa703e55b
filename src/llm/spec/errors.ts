/** Language-model errors: one class, a kind that drives the provider manager's fallback policy. */
import { type ErrorCode, HomeAgentError } from '../../shared/errors.js';

export type LlmErrorKind =
  | 'auth'
  | 'rate_limit'
  | 'server'
  | 'timeout'
  | 'network'
  | 'bad_response'
  | 'bad_request'
  | 'aborted'
  | 'unavailable'
  | 'all_failed';

const CODES: Record<LlmErrorKind, ErrorCode> = {
  auth: 'HA_ERR_LLM_AUTH',
  rate_limit: 'HA_ERR_LLM_RATE_LIMITED',
  server: 'HA_ERR_LLM_SERVER',
  timeout: 'HA_ERR_LLM_TIMEOUT',
  network: 'HA_ERR_LLM_NETWORK',
  bad_response: 'HA_ERR_LLM_BAD_RESPONSE',
  bad_request: 'HA_ERR_LLM_BAD_REQUEST',
  aborted: 'HA_ERR_LLM_ABORTED',
  unavailable: 'HA_ERR_LLM_UNAVAILABLE',
  all_failed: 'HA_ERR_LLM_ALL_FAILED',
};

export class LlmError extends HomeAgentError {
  readonly kind: LlmErrorKind;
  /** HTTP status, when there was one. */
  readonly status: number | undefined;
  /** From Retry-After, in ms, when the vendor sent it. */
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: LlmErrorKind,
    message: string,
    options: { status?: number; retryAfterMs?: number; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(CODES[kind], message, { cause: options.cause, ...(options.details ? { details: options.details } : {}) });
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** Worth trying again later or on another source (not a permanent configuration problem). */
  get transient(): boolean {
    return this.kind === 'rate_limit' || this.kind === 'server' || this.kind === 'timeout' || this.kind === 'network';
  }
}

/** Retry-After as seconds or an HTTP date → milliseconds. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Google's APIs (Gemini) answer a bad API key with 400 INVALID_ARGUMENT and the ErrorInfo reason
 * API_KEY_INVALID: it is an auth failure (the source is disabled until its key changes), not a
 * bad request to retry elsewhere each time.
 */
const REJECTED_KEY_400 = /"reason"\s*:\s*"API_KEY_INVALID"/;

/** Maps an HTTP failure to an LlmError; `body` is a short excerpt of the vendor's answer. */
export function httpError(status: number, body: string, retryAfter: string | null, source: string): LlmError {
  const excerpt = body.replace(/\s+/g, ' ').slice(0, 300);
  const retryAfterMs = parseRetryAfter(retryAfter);
  const opts = { status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  if (status === 401 || status === 403 || (status === 400 && REJECTED_KEY_400.test(body)))
    return new LlmError('auth', `${source}: HTTP ${status} (check the API key): ${excerpt}`, opts);
  if (status === 429) return new LlmError('rate_limit', `${source}: HTTP 429 rate limited: ${excerpt}`, opts);
  if (status === 408 || status === 504) return new LlmError('timeout', `${source}: HTTP ${status}: ${excerpt}`, opts);
  if (status >= 500) return new LlmError('server', `${source}: HTTP ${status}: ${excerpt}`, opts);
  return new LlmError('bad_request', `${source}: HTTP ${status}: ${excerpt}`, opts);
}

/** Maps a fetch/stream exception (abort, reset, DNS) to an LlmError. */
export function transportError(error: unknown, source: string, signal?: AbortSignal, timedOut = false): LlmError {
  if (error instanceof LlmError) return error;
  if (timedOut) return new LlmError('timeout', `${source}: no answer in time`, { cause: error });
  if (signal?.aborted) return new LlmError('aborted', `${source}: request cancelled`, { cause: error });
  const message =
    error instanceof Error ? (((error as { cause?: { message?: string } }).cause?.message ?? error.message) as string) : String(error);
  return new LlmError('network', `${source}: ${message}`, { cause: error });
}
