/**
 * Errors of the /v1 routes as OpenAI clients expect them: an HTTP status their error classes are
 * chosen by (400 BadRequestError, 401 AuthenticationError, 409 ConflictError, 429 RateLimitError,
 * ...) and an `{error: {message, type, param, code}}` body instead of HomeAgent's envelope. The
 * status and the HA code are the server's (http-errors.ts), so /v1 and /api/v1 never disagree on
 * what an error is; only the shape differs. Receipts that are not `done` become such errors too.
 */
import type { FastifyRequest } from 'fastify';
import { type ErrorEnvelope, HomeAgentError, type Receipt } from '../../src/sdk/index.js';
import { statusForCode, toHttpError } from './http-errors.js';
import { type OpenAiErrorBody, openAiErrorBody } from './openai-response.js';

export interface OpenAiError {
  status: number;
  body: OpenAiErrorBody;
  /**
   * False when the client's library must not send the request again by itself (`x-should-retry:
   * false`, which OpenAI's clients honour): after a timeout the turn is still running, and a retry
   * would run it, tools included, a second time; a duplicate would only be skipped again.
   */
  retry: boolean;
}

/** The response headers an error needs besides its status. */
export function errorHeaders(error: OpenAiError): Record<string, string> {
  return {
    ...(error.retry ? {} : { 'x-should-retry': 'false' }),
    ...(error.status === 401 ? { 'www-authenticate': 'Bearer realm="homeagent"' } : {}),
  };
}

/** Any error thrown on a /v1 route or by the security hooks before it. */
export function toOpenAiError(error: unknown, request: FastifyRequest): OpenAiError {
  const known =
    toHttpError(error, request) ?? new HomeAgentError('HA_ERR_INTERNAL', 'the request failed; the HomeAgent log has the details');
  const status = statusForCode(known.code);
  const param = typeof known.details?.param === 'string' ? known.details.param : undefined;
  return {
    status,
    body: openAiErrorBody(status, { code: known.code, message: known.message }, param),
    retry: known.code !== 'HA_ERR_AGENT_TIMEOUT',
  };
}

/** The error a receipt that is not `done` stands for. */
export function receiptError(receipt: Receipt): OpenAiError {
  let status: number;
  let envelope: ErrorEnvelope;
  let retry = true;
  if (receipt.status === 'skipped') {
    retry = false;
    // The scheduler's dedupe window: the same conversation sent again within it is not answered twice.
    status = 409;
    envelope = {
      code: 'HA_ERR_INPUT_DUPLICATE',
      message: `the same request arrived again within core.agent.dedupe_window_ms and was skipped (${receipt.reason ?? 'duplicate'}); send it again later`,
    };
  } else if (receipt.status === 'cancelled') {
    // Shutdown or a full interrupt queue: nothing the client did wrong, worth trying again later.
    status = 503;
    envelope = receipt.error ?? { code: 'HA_ERR_ABORTED', message: `the request was cancelled (${receipt.reason ?? 'no reason given'})` };
  } else {
    envelope = receipt.error ?? { code: 'HA_ERR_INTERNAL', message: 'the agent failed without saying why' };
    status = statusForCode(envelope.code);
  }
  return { status, body: openAiErrorBody(status, envelope), retry };
}
