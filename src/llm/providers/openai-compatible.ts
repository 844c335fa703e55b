/**
 * Any OpenAI-compatible chat/completions API (OpenAI, DeepSeek, Qwen compatible mode, Moonshot,
 * vLLM, llama.cpp, LM Studio, ...). Streams are SSE parsed with eventsource-parser; tool calls
 * split across chunks are reassembled by the vendor's stream index; usage is normalised,
 * including cached prompt tokens in OpenAI's and DeepSeek's spellings.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { collectStream } from '../spec/collect.js';
import { LlmError } from '../spec/errors.js';
import {
  type ChatMessage,
  type FinishReason,
  type GenerateRequest,
  type GenerateResult,
  type LanguageModel,
  SPEC_VERSION,
  type StreamPart,
  type ToolCall,
  type Usage,
} from '../spec/model.js';
import {
  asCount,
  asRecord,
  asString,
  fromSync,
  HttpExchange,
  type HttpModelOptions,
  parseJsonBody,
  toLlmError,
  trimBaseUrl,
} from './http-exchange.js';

export interface OpenAiCompatibleOptions extends HttpModelOptions {
  /** Up to but excluding `/chat/completions` (e.g. `https://api.deepseek.com`, `http://host:8000/v1`). */
  base_url: string;
  /** Sent as `Authorization: Bearer …` when non-empty. */
  api_key: string;
  /** Extra headers (gateways, organisation ids). */
  headers?: Record<string, string>;
}

/** Largest SSE event buffered while waiting for its end. */
const MAX_SSE_EVENT_CHARS = 4 * 1024 * 1024;

export class OpenAiCompatibleModel implements LanguageModel {
  readonly spec_version = SPEC_VERSION;
  readonly provider = 'openai';
  readonly model: string;
  readonly #options: OpenAiCompatibleOptions;
  readonly #url: string;

  constructor(options: OpenAiCompatibleOptions) {
    this.#options = options;
    this.model = options.model;
    this.#url = `${trimBaseUrl(options.base_url)}/chat/completions`;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const source = this.#options.source;
    const exchange = this.#exchange(request, false, this.#options.timeout_ms);
    try {
      const response = await exchange.open();
      const body = parseJsonBody(await exchange.text(response), source);
      return await collectStream(fromSync(responseParts(body, source, this.model)), this.model);
    } catch (error) {
      throw toLlmError(error, source);
    } finally {
      exchange.close();
    }
  }

  /** Never throws: failures, before or after the first part, arrive as one `error` part that ends the stream. */
  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    const source = this.#options.source;
    const exchange = this.#exchange(request, true, this.#options.stream_total_timeout_ms ?? this.#options.timeout_ms * 10);
    try {
      const response = await exchange.open();
      if ((response.headers.get('content-type') ?? '').includes('application/json')) {
        // Some servers ignore `stream: true` and answer in one piece.
        yield* responseParts(parseJsonBody(await exchange.text(response), source), source, this.model);
        return;
      }
      const state = new StreamState(source, this.model);
      const events: string[] = [];
      let overflow = false;
      const parser = createParser({
        maxBufferSize: MAX_SSE_EVENT_CHARS,
        onEvent: (event: EventSourceMessage) => void events.push(event.data),
        onError: (error) => {
          if (error.type === 'max-buffer-size-exceeded') overflow = true;
        },
      });
      const decoder = new TextDecoder();
      let done = false;
      for await (const chunk of exchange.chunks(response)) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (overflow) throw new LlmError('bad_response', `${source}: a stream event is larger than ${MAX_SSE_EVENT_CHARS} characters`);
        for (const data of events.splice(0)) {
          if (data.trim() === '[DONE]') {
            done = true;
            break;
          }
          yield* state.push(parseChunk(data, source));
        }
        if (done) break;
      }
      yield* state.end(done);
    } catch (error) {
      yield { type: 'error', error: toLlmError(error, source) };
    } finally {
      exchange.close();
    }
  }

  #exchange(request: GenerateRequest, stream: boolean, totalTimeoutMs: number): HttpExchange {
    const o = this.#options;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      ...(o.api_key ? { authorization: `Bearer ${o.api_key}` } : {}),
      ...o.headers,
    };
    return new HttpExchange({
      url: this.#url,
      headers,
      body: this.requestBody(request, stream),
      source: o.source,
      idleTimeoutMs: o.timeout_ms,
      totalTimeoutMs,
      signal: request.signal,
    });
  }

  /** The JSON body sent for a request (exposed for tests and adapters that reuse the mapping). */
  requestBody(request: GenerateRequest, stream: boolean): Record<string, unknown> {
    const temperature = request.temperature ?? this.#options.temperature;
    const maxTokens = request.max_tokens ?? this.#options.max_tokens;
    const tools = request.tools ?? [];
    return {
      model: this.model,
      messages: request.messages.map(toOpenAiMessage),
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      // tool_choice without tools is an error at OpenAI; without tools nothing can be called anyway.
      // With tools it is always sent (auto unless asked otherwise): not every compatible server defaults to auto.
      ...(tools.length > 0
        ? {
            tools: tools.map((t) => ({
              type: 'function',
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
            tool_choice: request.tool_choice ?? 'auto',
          }
        : {}),
    };
  }
}

/**
 * Reasoning is not sent back: OpenAI rejects unknown message fields and deepseek-reasoner answers
 * HTTP 400 when reasoning_content appears in the input.
 */
function toOpenAiMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
      return { role: message.role, content: message.content };
    case 'user':
      if (typeof message.content === 'string') return { role: 'user', content: message.content };
      // Vision models take a list of parts, images as data URLs.
      return {
        role: 'user',
        content: message.content.map((p) =>
          p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: `data:${p.mime};base64,${p.data}` } },
        ),
      };
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
  }
}

/** OpenAI usage (and DeepSeek's cache fields) → the spec's Usage. */
export function normaliseOpenAiUsage(raw: unknown): Usage | undefined {
  const u = asRecord(raw);
  if (!u) return undefined;
  const prompt = asCount(u.prompt_tokens);
  const completion = asCount(u.completion_tokens);
  const promptDetails = asRecord(u.prompt_tokens_details);
  const completionDetails = asRecord(u.completion_tokens_details);
  const cached = promptDetails && typeof promptDetails.cached_tokens === 'number' ? promptDetails.cached_tokens : u.prompt_cache_hit_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof u.total_tokens === 'number' ? asCount(u.total_tokens) : prompt + completion,
    cache_read_tokens: asCount(cached),
    reasoning_tokens: asCount(completionDetails?.reasoning_tokens),
  };
}

export function mapOpenAiFinish(reason: string): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'content_filter':
    case 'tool_calls':
      return reason;
    case 'function_call':
      return 'tool_calls';
    // DeepSeek: the server ran out of capacity mid-answer.
    case 'insufficient_system_resource':
      return 'error';
    default:
      return 'other';
  }
}

/** Some servers say `stop` although the answer is tool calls; the calls are what matters. */
function settleFinish(reason: FinishReason, hasCalls: boolean): FinishReason {
  return hasCalls && (reason === 'stop' || reason === 'other') ? 'tool_calls' : reason;
}

function parseChunk(data: string, source: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (error) {
    throw new LlmError('bad_response', `${source}: a stream chunk is not JSON: ${data.slice(0, 200)}`, { cause: error });
  }
  const chunk = asRecord(parsed);
  if (!chunk) throw new LlmError('bad_response', `${source}: a stream chunk is not a JSON object: ${data.slice(0, 200)}`);
  return chunk;
}

/** A vendor error object inside a 200 answer or a stream (gateways do this). */
function embeddedError(body: Record<string, unknown>, source: string): LlmError | undefined {
  if (body.error === undefined || body.error === null) return undefined;
  const e = asRecord(body.error);
  const message = asString(e?.message) ?? (typeof body.error === 'string' ? body.error : JSON.stringify(body.error));
  return new LlmError('server', `${source}: the service reported an error: ${message.slice(0, 300)}`);
}

/** Reassembles one streamed answer. */
class StreamState {
  readonly #source: string;
  #model: string;
  readonly #calls = new Map<number, ToolCall>();
  readonly #emitted = new Set<number>();
  #lastIndex = -1;
  #finish: FinishReason | undefined;
  #usage: Usage | undefined;

  constructor(source: string, model: string) {
    this.#source = source;
    this.#model = model;
  }

  *push(chunk: Record<string, unknown>): Generator<StreamPart> {
    const error = embeddedError(chunk, this.#source);
    if (error) throw error;
    const model = asString(chunk.model);
    if (model) this.#model = model;
    const usage = normaliseOpenAiUsage(chunk.usage);
    if (usage) this.#usage = usage;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const choice = asRecord(choices[0]);
    if (!choice) return;
    const delta = asRecord(choice.delta) ?? {};
    // DeepSeek and Qwen say reasoning_content; OpenRouter and some vLLM builds say reasoning.
    const reasoning = asString(delta.reasoning_content) ?? asString(delta.reasoning);
    if (reasoning) yield { type: 'reasoning-delta', delta: reasoning };
    const content = asString(delta.content);
    if (content) yield { type: 'text-delta', delta: content };
    if (Array.isArray(delta.tool_calls)) {
      for (const raw of delta.tool_calls) {
        const part = this.#toolDelta(asRecord(raw));
        if (part) yield part;
      }
    }
    const finish = asString(choice.finish_reason);
    if (finish) {
      this.#finish = mapOpenAiFinish(finish);
      yield* this.#completeCalls();
    }
  }

  /** The stream ended: `[DONE]` seen (`done`) or the body closed. */
  *end(done: boolean): Generator<StreamPart> {
    if (!done && this.#finish === undefined) {
      throw new LlmError('network', `${this.#source}: the stream ended before the answer was complete`);
    }
    yield* this.#completeCalls();
    if (this.#usage) yield { type: 'usage', usage: this.#usage };
    yield { type: 'finish', reason: settleFinish(this.#finish ?? 'other', this.#calls.size > 0), model: this.#model };
  }

  #toolDelta(raw: Record<string, unknown> | undefined): StreamPart | undefined {
    if (!raw) return undefined;
    const fn = asRecord(raw.function) ?? {};
    const id = asString(raw.id) || undefined;
    const name = asString(fn.name) || undefined;
    const args = fn.arguments;
    const argumentsDelta = typeof args === 'string' ? args : args === undefined || args === null ? '' : JSON.stringify(args);
    // Vendors without an index: a new id opens a new call, anything else continues the last one.
    let index: number;
    if (typeof raw.index === 'number') index = raw.index;
    else if (id && ![...this.#calls.values()].some((c) => c.id === id)) index = this.#lastIndex + 1;
    else index = Math.max(this.#lastIndex, 0);
    this.#lastIndex = Math.max(this.#lastIndex, index);
    const call = this.#calls.get(index) ?? { id: '', name: '', arguments: '' };
    if (id) call.id = id;
    if (name) call.name += name;
    call.arguments += argumentsDelta;
    this.#calls.set(index, call);
    return {
      type: 'tool-call-delta',
      index,
      ...(id ? { id } : {}),
      ...(name ? { name } : {}),
      arguments_delta: argumentsDelta,
    };
  }

  /** Complete tool-call parts, in index order, for calls not yet delivered. Arguments stay raw text. */
  *#completeCalls(): Generator<StreamPart> {
    for (const index of [...this.#calls.keys()].sort((a, b) => a - b)) {
      if (this.#emitted.has(index)) continue;
      this.#emitted.add(index);
      const call = this.#calls.get(index) as ToolCall;
      yield { type: 'tool-call', index, call: { id: call.id || `call_${index}`, name: call.name, arguments: call.arguments } };
    }
  }
}

/** A whole (non-streamed) chat.completion as parts, so generate() and stream() share one mapping. */
export function* responseParts(raw: unknown, source: string, configuredModel: string): Generator<StreamPart> {
  const body = asRecord(raw);
  if (!body) throw new LlmError('bad_response', `${source}: the answer is not a JSON object`);
  const error = embeddedError(body, source);
  const choice = asRecord(Array.isArray(body.choices) ? body.choices[0] : undefined);
  if (!choice) throw error ?? new LlmError('bad_response', `${source}: the answer has no choices`);
  const message = asRecord(choice.message) ?? {};
  const reasoning = asString(message.reasoning_content) ?? asString(message.reasoning);
  if (reasoning) yield { type: 'reasoning-delta', delta: reasoning };
  const content = asString(message.content);
  if (content) yield { type: 'text-delta', delta: content };
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  let index = 0;
  for (const rawCall of calls) {
    const c = asRecord(rawCall);
    if (!c) continue;
    const fn = asRecord(c.function) ?? {};
    const args = fn.arguments;
    const call: ToolCall = {
      id: asString(c.id) || `call_${index}`,
      name: asString(fn.name) ?? '',
      arguments: typeof args === 'string' ? args : args === undefined || args === null ? '' : JSON.stringify(args),
    };
    yield { type: 'tool-call', index, call };
    index++;
  }
  const usage = normaliseOpenAiUsage(body.usage);
  if (usage) yield { type: 'usage', usage };
  const finish = mapOpenAiFinish(asString(choice.finish_reason) ?? '');
  yield { type: 'finish', reason: settleFinish(finish, index > 0), model: asString(body.model) || configuredModel };
}
