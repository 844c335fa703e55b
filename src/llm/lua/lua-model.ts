/**
 * A LanguageModel backed by a Lua adapter: the script shapes the vendor's request and reads its
 * answers; this class does the HTTP (real fetch with an overall deadline, an idle timeout and the
 * caller's AbortSignal), parses SSE (eventsource-parser) or NDJSON streams, and keeps the spec's
 * promises whatever the script does: HTTP failures map through httpError (401/403 auth, 429
 * rate_limit with Retry-After, 5xx server), stream() never throws and always ends with `finish`
 * or `error`, tool calls streamed as deltas are completed with a `tool-call` part before `finish`.
 */
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { LuaScriptError } from '../../lua/lua-sandbox.js';
import { LineDecoder } from '../../shared/line-decoder.js';
import { withoutImages } from '../image-parts.js';
import { HttpExchange, type HttpModelOptions } from '../providers/http-exchange.js';
import { LlmError, transportError } from '../spec/errors.js';
import {
  type FinishReason,
  type GenerateRequest,
  type GenerateResult,
  type LanguageModel,
  SPEC_VERSION,
  type StreamPart,
  type ToolCall,
} from '../spec/model.js';
import type { LuaAdapter, LuaAdapterLibrary, UnifiedRequest } from './lua-adapter.js';

const LUA_NO_PICTURES = 'Lua adapters do not pass pictures to the model';

/** Largest non-streamed answer read from a vendor. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Largest SSE event or NDJSON line. */
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

export interface LuaAdapterModelOptions extends HttpModelOptions {
  /** A loaded adapter, or a lazy one (LuaAdapterLibrary.lazy) so models can be built synchronously. */
  adapter: LuaAdapter | { name: string; load: () => Promise<LuaAdapter> };
  /** Empty means the adapter's default_base_url. */
  base_url: string;
  api_key: string;
}

export class LuaAdapterModel implements LanguageModel {
  readonly spec_version = SPEC_VERSION;
  readonly provider: string;
  readonly model: string;
  readonly #options: LuaAdapterModelOptions;
  #adapter: LuaAdapter | undefined;

  constructor(options: LuaAdapterModelOptions) {
    this.#options = options;
    this.model = options.model;
    this.provider = `lua:${options.adapter.name}`;
    if (!('load' in options.adapter)) this.#adapter = options.adapter;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const source = this.#options.source;
    if (request.signal?.aborted) throw new LlmError('aborted', `${source}: request cancelled`);
    const adapter = await this.#loadAdapter();
    const prepared = await this.#prepare(adapter, request, false);
    const exchange = new Exchange({
      ...prepared,
      source,
      idleTimeoutMs: this.#options.timeout_ms,
      totalTimeoutMs: this.#options.timeout_ms,
      signal: request.signal,
    });
    try {
      const response = await exchange.open();
      return await adapter.transformResponse(await exchange.text(response, MAX_RESPONSE_BYTES), this.model);
    } catch (error) {
      throw exchange.error(error);
    } finally {
      exchange.close();
    }
  }

  /** Never throws: failures, before or after the first part, arrive as one `error` part that ends the stream. */
  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    const source = this.#options.source;
    let exchange: Exchange | undefined;
    let stream: Awaited<ReturnType<LuaAdapter['openStream']>> | undefined;
    const assembler = new PartAssembler(this.model);
    try {
      if (request.signal?.aborted) throw new LlmError('aborted', `${source}: request cancelled`);
      const adapter = await this.#loadAdapter();
      if (!adapter.info.streams) {
        // No transform_stream_chunk: one non-streamed answer, replayed as parts.
        yield* resultParts(await this.generate(request));
        return;
      }
      const prepared = await this.#prepare(adapter, request, true);
      exchange = new Exchange({
        ...prepared,
        source,
        idleTimeoutMs: this.#options.timeout_ms,
        totalTimeoutMs: this.#options.stream_total_timeout_ms ?? this.#options.timeout_ms * 10,
        signal: request.signal,
      });
      const response = await exchange.open();
      if ((response.headers.get('content-type') ?? '').includes('application/json')) {
        // Some servers ignore the stream flag and answer in one piece.
        yield* resultParts(await adapter.transformResponse(await exchange.text(response, MAX_RESPONSE_BYTES), this.model));
        return;
      }
      stream = await adapter.openStream();
      const sse = adapter.info.stream_format === 'sse';
      const chunks = sse ? sseChunks(exchange, response, source) : ndjsonChunks(exchange, response, source);
      for await (const chunk of chunks) {
        for (const part of await stream.transform(chunk.data, chunk.event, sse)) {
          for (const out of assembler.accept(part)) {
            yield out;
            if (out.type === 'error') return;
          }
        }
      }
      yield* assembler.end(source);
    } catch (error) {
      yield { type: 'error', error: exchange ? exchange.error(error) : toLlmError(error, source, request.signal) };
    } finally {
      stream?.close();
      exchange?.close();
    }
  }

  async #loadAdapter(): Promise<LuaAdapter> {
    if (this.#adapter) return this.#adapter;
    const lazy = this.#options.adapter as { name: string; load: () => Promise<LuaAdapter> };
    try {
      this.#adapter = await lazy.load();
      return this.#adapter;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new LlmError('unavailable', `${this.#options.source}: the Lua adapter ${lazy.name} could not be loaded: ${message}`, {
        cause: error,
      });
    }
  }

  async #prepare(
    adapter: LuaAdapter,
    request: GenerateRequest,
    stream: boolean,
  ): Promise<{ url: string; headers: Record<string, string>; body: string }> {
    const o = this.#options;
    // The adapters in adapters/ read `content` as text and none declares image support, so pictures
    // reach Lua as a note naming the stored media (a vision source behind a Lua adapter included).
    // An adapter that handles image parts would need a declaration in its info table first.
    const messages = withoutImages(request.messages, LUA_NO_PICTURES);
    const unified: UnifiedRequest = { model: o.model, stream, messages };
    if (request.tools && request.tools.length > 0) unified.tools = request.tools;
    if (request.tool_choice) unified.tool_choice = request.tool_choice;
    const temperature = request.temperature ?? o.temperature;
    const maxTokens = request.max_tokens ?? o.max_tokens;
    if (temperature !== undefined) unified.temperature = temperature;
    if (maxTokens !== undefined) unified.max_tokens = maxTokens;
    const base = (o.base_url || adapter.info.default_base_url).replace(/\/+$/, '');
    if (!base) throw new LlmError('unavailable', `${o.source}: no base_url is configured and the ${adapter.name} adapter has no default`);
    const endpoint = (stream ? adapter.info.stream_endpoint : adapter.info.endpoint).replaceAll('{model}', encodeURIComponent(o.model));
    const [body, scriptHeaders] = await Promise.all([adapter.transformRequest(unified), adapter.headers(o.api_key)]);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream, application/x-ndjson, application/json' : 'application/json',
    };
    for (const [k, v] of Object.entries(scriptHeaders)) headers[k.toLowerCase()] = v;
    return { url: `${base}${endpoint}`, headers, body };
  }
}

/** What a configured source says about a Lua-adapted model (structurally, the provider manager's ResolvedSource). */
export interface LuaSourceSettings {
  name: string;
  /** The adapter script name (adapters/<adapter>.lua). */
  adapter: string;
  base_url: string;
  api_key: string;
  model: string;
  timeout_ms: number;
  temperature?: number;
  max_tokens?: number;
}

/**
 * Builds models for Lua-adapted sources synchronously (the adapter loads on first use and is
 * shared through the library), e.g. `createModelFactory({ lua: luaModelFactory(library) })`.
 */
export function luaModelFactory(library: LuaAdapterLibrary): (source: LuaSourceSettings) => LuaAdapterModel {
  return (source) =>
    new LuaAdapterModel({
      source: source.name,
      adapter: library.lazy(source.adapter),
      base_url: source.base_url,
      api_key: source.api_key,
      model: source.model,
      timeout_ms: source.timeout_ms,
      ...(source.temperature === undefined ? {} : { temperature: source.temperature }),
      ...(source.max_tokens === undefined ? {} : { max_tokens: source.max_tokens }),
    });
}

/** Turns the adapter's parts into the spec's stream: tool calls completed, one finish at the end. */
class PartAssembler {
  readonly #model: string;
  readonly #deltas = new Map<number, { id: string; name: string; arguments: string }>();
  readonly #complete = new Set<number>();
  #finish: Extract<StreamPart, { type: 'finish' }> | undefined;
  #content = false;

  constructor(model: string) {
    this.#model = model;
  }

  accept(part: StreamPart): StreamPart[] {
    switch (part.type) {
      case 'text-delta':
      case 'reasoning-delta':
        this.#content = true;
        return [part];
      case 'tool-call-delta': {
        this.#content = true;
        const d = this.#deltas.get(part.index) ?? { id: '', name: '', arguments: '' };
        if (part.id) d.id = part.id;
        if (part.name) d.name += part.name;
        d.arguments += part.arguments_delta;
        this.#deltas.set(part.index, d);
        return [part];
      }
      case 'tool-call':
        this.#content = true;
        this.#complete.add(part.index);
        return [part];
      case 'finish':
        // Held back: usage often comes after the vendor's finish reason.
        this.#finish = part;
        return [];
      default:
        return [part];
    }
  }

  *end(source: string): Generator<StreamPart> {
    const pending = [...this.#deltas.entries()].filter(([index]) => !this.#complete.has(index)).sort(([a], [b]) => a - b);
    for (const [index, d] of pending) {
      if (!d.name) continue;
      const call: ToolCall = { id: d.id || `call_${index}`, name: d.name, arguments: d.arguments || '{}' };
      this.#complete.add(index);
      yield { type: 'tool-call', index, call };
    }
    if (!this.#content && !this.#finish) {
      yield { type: 'error', error: new LlmError('bad_response', `${source}: the stream ended without any content`) };
      return;
    }
    const reason: FinishReason = this.#finish?.reason ?? (this.#complete.size > 0 ? 'tool_calls' : 'stop');
    yield {
      type: 'finish',
      reason: reason === 'stop' && this.#complete.size > 0 ? 'tool_calls' : reason,
      model: this.#finish?.model ?? this.#model,
    };
  }
}

function* resultParts(result: GenerateResult): Generator<StreamPart> {
  if (result.reasoning) yield { type: 'reasoning-delta', delta: result.reasoning };
  if (result.text) yield { type: 'text-delta', delta: result.text };
  for (const [index, call] of result.tool_calls.entries()) yield { type: 'tool-call', index, call };
  yield { type: 'usage', usage: result.usage };
  yield { type: 'finish', reason: result.finish_reason, model: result.model };
}

interface Chunk {
  /** The SSE data payload or the NDJSON line, as text. */
  data: string;
  event: string | null;
}

async function* sseChunks(exchange: Exchange, response: Response, source: string): AsyncGenerator<Chunk> {
  const queue: Chunk[] = [];
  let failure: LlmError | undefined;
  let done = false;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent(message: EventSourceMessage) {
      const data = message.data;
      if (data.trim() === '[DONE]') {
        done = true;
        return;
      }
      queue.push({ data, event: message.event ?? null });
    },
    onError(error: ParseError) {
      if (error.type === 'max-buffer-size-exceeded')
        failure = new LlmError('bad_response', `${source}: a stream event is larger than ${MAX_EVENT_BYTES} bytes`);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of exchange.chunks(response)) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (failure) throw failure;
    while (queue.length > 0) yield queue.shift() as Chunk;
    if (done) return;
  }
  parser.feed(`${decoder.decode()}\n\n`);
  while (queue.length > 0) yield queue.shift() as Chunk;
}

async function* ndjsonChunks(exchange: Exchange, response: Response, source: string): AsyncGenerator<Chunk> {
  const lines = new LineDecoder(MAX_EVENT_BYTES);
  const frames = function* (bytes: Buffer) {
    for (const frame of lines.push(bytes)) {
      if (frame.kind === 'too_large')
        throw new LlmError('bad_response', `${source}: a stream line is larger than ${MAX_EVENT_BYTES} bytes`);
      if (frame.text.trim() !== '') yield { data: frame.text, event: null };
    }
  };
  for await (const bytes of exchange.chunks(response)) yield* frames(Buffer.from(bytes));
  // A last line without its newline.
  yield* frames(Buffer.from('\n'));
}

function toLlmError(error: unknown, source: string, signal: AbortSignal | undefined): LlmError {
  if (error instanceof LlmError) return error;
  if (signal?.aborted) return new LlmError('aborted', `${source}: request cancelled`, { cause: error });
  if (error instanceof LuaScriptError) return new LlmError('bad_response', `${source}: ${error.message}`, { cause: error });
  return transportError(error, source, signal);
}

/** The shared HTTP exchange, with script failures reported as bad responses rather than network errors. */
class Exchange extends HttpExchange {
  override error(error: unknown): LlmError {
    if (error instanceof LuaScriptError) return new LlmError('bad_response', `${this.source}: ${error.message}`, { cause: error });
    return super.error(error);
  }
}
