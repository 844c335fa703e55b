/**
 * The language-model spec, version 1. The agent sees models only through these types; providers
 * (OpenAI-compatible, Ollama, Lua-adapted) and the provider manager implement them. Vendor code
 * depends on the spec, never the reverse.
 */
import type { JsonSchema } from '../../shared/tool.js';
import type { LlmError } from './errors.js';

export const SPEC_VERSION = 1;

/** A tool call as the model produced it. `arguments` is the raw JSON text, validated later. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * A piece of a user message. Images travel as base64 inside the request only: the agent adds them
 * for the requests of one turn and never stores them in history or memory. `digest` (the media
 * store's sha256) lets a source without vision name the stored picture instead.
 */
export type UserContentPart = { type: 'text'; text: string } | { type: 'image'; mime: string; data: string; digest?: string };

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | UserContentPart[] }
  | { role: 'assistant'; content: string; reasoning?: string; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; name: string; content: string };

/** A tool offered to the model. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface GenerateRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** `none` forbids tool calls for this request (the final answer after the tool-turn cap). */
  tool_choice?: 'auto' | 'none';
  temperature?: number;
  max_tokens?: number;
  /** Cancels the request (pre-emption, shutdown, timeout); the promise/stream then fails with HA_ERR_LLM_ABORTED. */
  signal?: AbortSignal;
}

/** Token counts, normalised across vendors; missing counts are 0. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens served from the vendor's cache. */
  cache_read_tokens: number;
  reasoning_tokens: number;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'error' | 'other';

export interface GenerateResult {
  text: string;
  reasoning: string;
  tool_calls: ToolCall[];
  usage: Usage;
  finish_reason: FinishReason;
  /** The model that answered, as the vendor reported it (or the configured name). */
  model: string;
}

/**
 * One piece of a streamed answer. Tool-call deltas carry the vendor's stream index so that calls
 * split across chunks are reassembled in index order; a complete `tool-call` part follows once a
 * call's arguments are whole.
 */
export type StreamPart =
  | { type: 'text-delta'; delta: string }
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; arguments_delta: string }
  | { type: 'tool-call'; index: number; call: ToolCall }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; model?: string }
  | { type: 'error'; error: LlmError };

export interface LanguageModel {
  readonly spec_version: typeof SPEC_VERSION;
  /** `openai`, `ollama`, `lua:anthropic`, `manager`, ... */
  readonly provider: string;
  readonly model: string;
  /** Resolves with the whole answer or rejects with an {@link LlmError}. */
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** Yields parts and ends with `finish` (or `error`); never throws after the first part. */
  stream(request: GenerateRequest): AsyncIterable<StreamPart>;
}

/** The text of a message's content: text parts joined by newlines, images left out. */
export function contentText(content: string | UserContentPart[]): string {
  if (typeof content === 'string') return content;
  return content
    .filter((p): p is Extract<UserContentPart, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}

/** The images of a message's content (none for plain text). */
export function contentImages(content: string | UserContentPart[]): Array<Extract<UserContentPart, { type: 'image' }>> {
  if (typeof content === 'string') return [];
  return content.filter((p): p is Extract<UserContentPart, { type: 'image' }> => p.type === 'image');
}

export const EMPTY_USAGE: Usage = Object.freeze({
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cache_read_tokens: 0,
  reasoning_tokens: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    reasoning_tokens: a.reasoning_tokens + b.reasoning_tokens,
  };
}
