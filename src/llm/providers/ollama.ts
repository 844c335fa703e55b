/**
 * Ollama's native /api/chat: NDJSON streaming (one JSON object per line, the last with
 * `done: true` and the token counts), tools in the OpenAI function format, tool-call arguments
 * as JSON objects (turned back into text for the spec), thinking models' `thinking` field as
 * reasoning.
 */
import { LineDecoder } from '../../shared/line-decoder.js';
import { collectStream } from '../spec/collect.js';
import { LlmError } from '../spec/errors.js';
import {
  type ChatMessage,
  contentImages,
  contentText,
  type FinishReason,
  type GenerateRequest,
  type GenerateResult,
  type LanguageModel,
  SPEC_VERSION,
  type StreamPart,
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

export const OLLAMA_DEFAULT_BASE_URL = 'http://127.0.0.1:11434';

export interface OllamaOptions extends HttpModelOptions {
  /** Empty means {@link OLLAMA_DEFAULT_BASE_URL}. */
  base_url?: string;
  /** Sent as a Bearer token when non-empty (Ollama behind an authenticating proxy). */
  api_key?: string;
  headers?: Record<string, string>;
}

/** Longest NDJSON line accepted. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

export class OllamaModel implements LanguageModel {
  readonly spec_version = SPEC_VERSION;
  readonly provider = 'ollama';
  readonly model: string;
  readonly #options: OllamaOptions;
  readonly #url: string;

  constructor(options: OllamaOptions) {
    this.#options = options;
    this.model = options.model;
    this.#url = `${trimBaseUrl(options.base_url || OLLAMA_DEFAULT_BASE_URL)}/api/chat`;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const source = this.#options.source;
    const exchange = this.#exchange(request, false, this.#options.timeout_ms);
    try {
      const response = await exchange.open();
      const body = asRecord(parseJsonBody(await exchange.text(response), source));
      if (!body) throw new LlmError('bad_response', `${source}: the answer is not a JSON object`);
      const state = new OllamaState(source, this.model);
      return await collectStream(
        fromSync(
          (function* () {
            yield* state.push(body);
            yield* state.end();
          })(),
        ),
        this.model,
      );
    } catch (error) {
      throw toLlmError(error, source);
    } finally {
      exchange.close();
    }
  }

  /** Never throws: failures arrive as one `error` part that ends the stream. */
  async *stream(request: GenerateRequest): AsyncGenerator<StreamPart> {
    const source = this.#options.source;
    const exchange = this.#exchange(request, true, this.#options.stream_total_timeout_ms ?? this.#options.timeout_ms * 10);
    try {
      const response = await exchange.open();
      const state = new OllamaState(source, this.model);
      const decoder = new LineDecoder(MAX_LINE_BYTES);
      for await (const chunk of exchange.chunks(response)) {
        for (const frame of decoder.push(Buffer.from(chunk))) {
          if (frame.kind === 'too_large')
            throw new LlmError('bad_response', `${source}: a stream line is larger than ${MAX_LINE_BYTES} bytes`);
          if (frame.text.trim() === '') continue;
          yield* state.push(parseLine(frame.text, source));
        }
        if (state.done) break;
      }
      // A last line without its newline.
      if (!state.done) {
        for (const frame of decoder.push(Buffer.from('\n'))) {
          if (frame.kind === 'line' && frame.text.trim() !== '') yield* state.push(parseLine(frame.text, source));
        }
      }
      if (!state.done) throw new LlmError('network', `${source}: the stream ended before the answer was complete`);
      yield* state.end();
    } catch (error) {
      yield { type: 'error', error: toLlmError(error, source) };
    } finally {
      exchange.close();
    }
  }

  #exchange(request: GenerateRequest, stream: boolean, totalTimeoutMs: number): HttpExchange {
    const o = this.#options;
    return new HttpExchange({
      url: this.#url,
      headers: {
        'content-type': 'application/json',
        accept: stream ? 'application/x-ndjson' : 'application/json',
        ...(o.api_key ? { authorization: `Bearer ${o.api_key}` } : {}),
        ...o.headers,
      },
      body: this.requestBody(request, stream),
      source: o.source,
      idleTimeoutMs: o.timeout_ms,
      totalTimeoutMs,
      signal: request.signal,
    });
  }

  /** The JSON body sent for a request. */
  requestBody(request: GenerateRequest, stream: boolean): Record<string, unknown> {
    const temperature = request.temperature ?? this.#options.temperature;
    const maxTokens = request.max_tokens ?? this.#options.max_tokens;
    const options: Record<string, number> = {};
    if (temperature !== undefined) options.temperature = temperature;
    if (maxTokens !== undefined) options.num_predict = maxTokens;
    // Ollama has no tool_choice: `none` is honoured by not offering the tools.
    const tools = request.tool_choice === 'none' ? [] : (request.tools ?? []);
    return {
      model: this.model,
      messages: request.messages.map(toOllamaMessage),
      stream,
      ...(tools.length > 0
        ? {
            tools: tools.map((t) => ({
              type: 'function',
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
          }
        : {}),
      ...(Object.keys(options).length > 0 ? { options } : {}),
    };
  }
}

function toOllamaMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
      return { role: message.role, content: message.content };
    case 'user': {
      if (typeof message.content === 'string') return { role: 'user', content: message.content };
      // Ollama takes a message's pictures as a separate list of bare base64 strings.
      const images = contentImages(message.content).map((p) => p.data);
      return { role: 'user', content: contentText(message.content), ...(images.length > 0 ? { images } : {}) };
    }
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      // Ollama wants arguments as an object; text that is not a JSON object (the model's own
      // malformed output, already answered with an error) goes back as an empty object.
      return {
        role: 'assistant',
        content: message.content,
        tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: argumentsObject(c.arguments) } })),
      };
    }
    case 'tool':
      return { role: 'tool', content: message.content, tool_name: message.name };
  }
}

function argumentsObject(text: string): Record<string, unknown> {
  try {
    return asRecord(JSON.parse(text)) ?? {};
  } catch {
    return {};
  }
}

function parseLine(line: string, source: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    throw new LlmError('bad_response', `${source}: a stream line is not JSON: ${line.slice(0, 200)}`, { cause: error });
  }
  const record = asRecord(parsed);
  if (!record) throw new LlmError('bad_response', `${source}: a stream line is not a JSON object: ${line.slice(0, 200)}`);
  return record;
}

function mapOllamaFinish(reason: string | undefined): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
      return reason;
    case undefined:
    case '':
      return 'stop';
    default:
      return 'other';
  }
}

/** Turns Ollama chat objects (streamed lines or one whole answer) into parts. */
class OllamaState {
  readonly #source: string;
  #model: string;
  #index = 0;
  #usage: Usage | undefined;
  #finish: FinishReason = 'other';
  done = false;

  constructor(source: string, model: string) {
    this.#source = source;
    this.#model = model;
  }

  *push(line: Record<string, unknown>): Generator<StreamPart> {
    if (line.error !== undefined) {
      const message = asString(line.error) ?? JSON.stringify(line.error);
      throw new LlmError('server', `${this.#source}: the service reported an error: ${message.slice(0, 300)}`);
    }
    const model = asString(line.model);
    if (model) this.#model = model;
    const message = asRecord(line.message) ?? {};
    const thinking = asString(message.thinking);
    if (thinking) yield { type: 'reasoning-delta', delta: thinking };
    const content = asString(message.content);
    if (content) yield { type: 'text-delta', delta: content };
    // Ollama sends each tool call whole, in one line.
    if (Array.isArray(message.tool_calls)) {
      for (const raw of message.tool_calls) {
        const c = asRecord(raw);
        if (!c) continue;
        const fn = asRecord(c.function) ?? {};
        const index = this.#index++;
        const args = fn.arguments;
        const text = typeof args === 'string' ? args : args === undefined || args === null ? '{}' : JSON.stringify(args);
        const id = asString(c.id) || `call_${index}`;
        const name = asString(fn.name) ?? '';
        yield { type: 'tool-call-delta', index, id, name, arguments_delta: text };
        yield { type: 'tool-call', index, call: { id, name, arguments: text } };
      }
    }
    if (line.done === true) {
      this.done = true;
      const prompt = asCount(line.prompt_eval_count);
      const completion = asCount(line.eval_count);
      if (line.prompt_eval_count !== undefined || line.eval_count !== undefined) {
        this.#usage = {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
          cache_read_tokens: 0,
          reasoning_tokens: 0,
        };
      }
      this.#finish = mapOllamaFinish(asString(line.done_reason));
    }
  }

  *end(): Generator<StreamPart> {
    if (!this.done) throw new LlmError('bad_response', `${this.#source}: the answer is not finished (done is not true)`);
    if (this.#usage) yield { type: 'usage', usage: this.#usage };
    const reason = this.#index > 0 && (this.#finish === 'stop' || this.#finish === 'other') ? 'tool_calls' : this.#finish;
    yield { type: 'finish', reason, model: this.#model };
  }
}
