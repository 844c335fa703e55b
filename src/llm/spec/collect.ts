/** Turns a stream of parts into one result (used by generate() implementations and tests). */
import { LlmError } from './errors.js';
import { EMPTY_USAGE, type FinishReason, type GenerateResult, type StreamPart, type ToolCall, type Usage } from './model.js';

export async function collectStream(parts: AsyncIterable<StreamPart>, model: string): Promise<GenerateResult> {
  let text = '';
  let reasoning = '';
  let usage: Usage = EMPTY_USAGE;
  let finish: FinishReason = 'other';
  let answeredBy = model;
  const calls = new Map<number, ToolCall>();
  const partial = new Map<number, { id: string; name: string; arguments: string }>();
  for await (const part of parts) {
    switch (part.type) {
      case 'text-delta':
        text += part.delta;
        break;
      case 'reasoning-delta':
        reasoning += part.delta;
        break;
      case 'tool-call-delta': {
        const p = partial.get(part.index) ?? { id: '', name: '', arguments: '' };
        if (part.id) p.id = part.id;
        if (part.name) p.name += part.name;
        p.arguments += part.arguments_delta;
        partial.set(part.index, p);
        break;
      }
      case 'tool-call':
        calls.set(part.index, part.call);
        break;
      case 'usage':
        usage = part.usage;
        break;
      case 'finish':
        finish = part.reason;
        if (part.model) answeredBy = part.model;
        break;
      case 'error':
        throw part.error;
    }
  }
  // Deltas without a closing tool-call part still count, in stream-index order.
  for (const [index, p] of partial) if (!calls.has(index) && p.name) calls.set(index, p);
  const tool_calls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
  if (finish === 'other' && tool_calls.length > 0) finish = 'tool_calls';
  if (!text && !reasoning && tool_calls.length === 0 && finish === 'other') {
    throw new LlmError('bad_response', `${model}: the stream ended without any content`);
  }
  return { text, reasoning, tool_calls, usage, finish_reason: finish, model: answeredBy };
}
