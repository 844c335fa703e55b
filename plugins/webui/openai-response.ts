/**
 * The bodies /v1 answers with, shaped as OpenAI's API shapes them so that any OpenAI client reads
 * them: chat.completion, chat.completion.chunk and the error object. Errors keep the HomeAgent code
 * (`HA_ERR_...`) as `code`, so a program can still tell them apart.
 */
import type { ErrorEnvelope, Receipt } from '../../src/sdk/index.js';

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** What every chunk and the completion of one request share. */
export interface CompletionIdentity {
  /** `chatcmpl-<input id>`: the same id names the HomeAgent input in logs and events. */
  id: string;
  /** Unix seconds, as OpenAI gives it. */
  created: number;
  model: string;
}

export function completionIdentity(inputId: string, model: string, nowMs: number): CompletionIdentity {
  return { id: `chatcmpl-${inputId}`, created: Math.floor(nowMs / 1000), model };
}

/** The receipt's token counts; zeros when no model was called (offline answer, a stage answered). */
export function usageOf(receipt: Receipt): OpenAiUsage {
  const usage = receipt.usage;
  return {
    prompt_tokens: usage?.prompt_tokens ?? 0,
    completion_tokens: usage?.completion_tokens ?? 0,
    total_tokens: usage?.total_tokens ?? 0,
  };
}

export function completionBody(identity: CompletionIdentity, text: string, usage: OpenAiUsage) {
  return {
    id: identity.id,
    object: 'chat.completion' as const,
    created: identity.created,
    model: identity.model,
    choices: [
      { index: 0, message: { role: 'assistant' as const, content: text, refusal: null }, logprobs: null, finish_reason: 'stop' as const },
    ],
    usage,
  };
}

export type ChunkDelta = { role?: 'assistant'; content?: string };

export function chunkBody(identity: CompletionIdentity, delta: ChunkDelta, finishReason: 'stop' | null = null) {
  return {
    id: identity.id,
    object: 'chat.completion.chunk' as const,
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The last chunk when the client asked for `stream_options.include_usage`: no choices, the usage. */
export function usageChunkBody(identity: CompletionIdentity, usage: OpenAiUsage) {
  return {
    id: identity.id,
    object: 'chat.completion.chunk' as const,
    created: identity.created,
    model: identity.model,
    choices: [],
    usage,
  };
}

/** OpenAI's error `type` for an HTTP status (clients mostly go by the status). */
export function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export function openAiErrorBody(status: number, envelope: ErrorEnvelope, param?: string): OpenAiErrorBody {
  return { error: { message: envelope.message, type: errorType(status), param: param ?? null, code: envelope.code } };
}
