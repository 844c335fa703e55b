/**
 * A scripted LanguageModel for agent-loop tests: each call takes the next scripted reply (or asks
 * a function), records the request, and streams the reply as real parts do (text deltas, tool
 * calls with stream indexes, usage, finish). A reply can also fail with an LlmError, or hang until
 * its request is aborted.
 */
import {
  type GenerateRequest,
  type GenerateResult,
  type LanguageModel,
  LlmError,
  type StreamPart,
  type ToolCall,
} from '../../src/llm/spec/index.js';

export type MockReply = { text?: string; tool_calls?: ToolCall[]; reasoning?: string } | { error: LlmError } | { hang: true };

export class MockModel implements LanguageModel {
  readonly spec_version = 1 as const;
  readonly provider = 'mock';
  readonly model = 'mock-model';
  readonly requests: GenerateRequest[] = [];
  readonly #script: Array<MockReply | ((request: GenerateRequest) => MockReply)>;
  #fallback: ((request: GenerateRequest) => MockReply) | undefined;

  constructor(
    script: Array<MockReply | ((request: GenerateRequest) => MockReply)> = [],
    fallback?: (request: GenerateRequest) => MockReply,
  ) {
    this.#script = [...script];
    this.#fallback = fallback;
  }

  push(...replies: Array<MockReply | ((request: GenerateRequest) => MockReply)>): void {
    this.#script.push(...replies);
  }

  setFallback(fallback: (request: GenerateRequest) => MockReply): void {
    this.#fallback = fallback;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const parts: StreamPart[] = [];
    for await (const part of this.stream(request)) parts.push(part);
    const error = parts.find((p) => p.type === 'error');
    if (error && error.type === 'error') throw error.error;
    const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');
    const tool_calls = parts.flatMap((p) => (p.type === 'tool-call' ? [p.call] : []));
    return {
      text,
      reasoning: '',
      tool_calls,
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cache_read_tokens: 0, reasoning_tokens: 0 },
      finish_reason: tool_calls.length ? 'tool_calls' : 'stop',
      model: this.model,
    };
  }

  async *stream(request: GenerateRequest): AsyncIterable<StreamPart> {
    const { signal: _signal, ...copy } = request;
    this.requests.push(structuredClone(copy));
    const next = this.#script.shift() ?? this.#fallback;
    if (next === undefined) {
      yield { type: 'error', error: new LlmError('bad_response', 'MockModel: no scripted reply left') };
      return;
    }
    const reply = typeof next === 'function' ? next(request) : next;
    if ('error' in reply) {
      yield { type: 'error', error: reply.error };
      return;
    }
    if ('hang' in reply) {
      await new Promise<void>((resolve) => {
        if (request.signal?.aborted) resolve();
        request.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      yield { type: 'error', error: new LlmError('aborted', 'MockModel: request cancelled') };
      return;
    }
    if (request.signal?.aborted) {
      yield { type: 'error', error: new LlmError('aborted', 'MockModel: request cancelled') };
      return;
    }
    if (reply.reasoning) yield { type: 'reasoning-delta', delta: reply.reasoning };
    if (reply.text) yield { type: 'text-delta', delta: reply.text };
    const calls = reply.tool_calls ?? [];
    for (const [index, call] of calls.entries()) yield { type: 'tool-call', index, call };
    yield {
      type: 'usage',
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cache_read_tokens: 0, reasoning_tokens: 0 },
    };
    yield { type: 'finish', reason: calls.length ? 'tool_calls' : 'stop' };
  }
}

let callCounter = 0;
/** A tool call with a fresh id. */
export function call(name: string, args: Record<string, unknown> | string = {}): ToolCall {
  callCounter++;
  return { id: `call_${callCounter}`, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}
