/**
 * The conversation history the agent puts before each input, read from the persistent context
 * window instead of a buffer in process memory: a follow-up question keeps its context across a
 * restart, and what pruning archived is no longer repeated to the model.
 */
import type { ChatMessage } from '../llm/spec/index.js';
import { cut } from '../shared/tool-args.js';
import type { ContextEvent } from './context-window.js';

export const DEFAULT_HISTORY_EXCHANGES = 10;
/** About 2,000 tokens: room for a few long answers without crowding out the memory block. */
export const DEFAULT_HISTORY_CHARS = 8000;

export interface WindowConversationOptions {
  /** The window's events, oldest first; empty while memory is not running. */
  events: () => readonly ContextEvent[];
  /** Exchanges at most (newest kept). Default 10. */
  maxExchanges?: number;
  /** Characters of all messages together at most (newest kept). Default 8000. */
  maxChars?: number;
}

export class WindowConversation {
  readonly #options: WindowConversationOptions;

  constructor(options: WindowConversationOptions) {
    this.#options = options;
  }

  /**
   * The latest exchanges of `channel` as user/assistant pairs, oldest first, without the event
   * `exclude` (the input being answered, already in the window) and without events still waiting
   * for their answer.
   */
  messages(channel: string, options: { exclude?: string } = {}): ChatMessage[] {
    const maxExchanges = this.#options.maxExchanges ?? DEFAULT_HISTORY_EXCHANGES;
    const maxChars = this.#options.maxChars ?? DEFAULT_HISTORY_CHARS;
    const events = this.#options.events();
    const chosen: Array<{ user: string; assistant: string }> = [];
    let chars = 0;
    for (let i = events.length - 1; i >= 0 && chosen.length < maxExchanges; i--) {
      const event = events[i] as ContextEvent;
      if (event.channel !== channel || event.id === options.exclude) continue;
      if (event.input.trim() === '' || event.response.trim() === '') continue;
      const size = event.input.length + event.response.length;
      if (chars + size > maxChars) {
        // The newest exchange is the one a follow-up most likely refers to: cut it rather than lose it.
        if (chosen.length === 0) chosen.push(fitted(event, maxChars));
        break;
      }
      chosen.push({ user: event.input, assistant: event.response });
      chars += size;
    }
    return chosen.reverse().flatMap((e) => [
      { role: 'user' as const, content: e.user },
      { role: 'assistant' as const, content: e.assistant },
    ]);
  }
}

/** The exchange cut to `maxChars` together: each side keeps its beginning, the input at most half. */
function fitted(event: ContextEvent, maxChars: number): { user: string; assistant: string } {
  const user = cut(event.input, Math.max(1, Math.floor(maxChars / 2)));
  return { user, assistant: cut(event.response, Math.max(1, maxChars - user.length)) };
}
