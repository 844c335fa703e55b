/**
 * Recent exchanges per conversation channel, in process memory and bounded, so that a follow-up
 * question has its context. The daemon reads its history from the persistent context window
 * instead (src/memory/window-conversation.ts); this is the history for an agent without memory
 * (tests, benchmarks).
 */
import type { ChatMessage } from '../llm/spec/index.js';

export interface Exchange {
  user: string;
  assistant: string;
}

export class ConversationBuffer {
  readonly #byChannel = new Map<string, Exchange[]>();
  readonly #maxExchanges: number;
  readonly #maxChannels: number;

  constructor(options: { maxExchanges?: number; maxChannels?: number } = {}) {
    this.#maxExchanges = options.maxExchanges ?? 10;
    this.#maxChannels = options.maxChannels ?? 64;
  }

  messages(channel: string): ChatMessage[] {
    return (this.#byChannel.get(channel) ?? []).flatMap((e) => [
      { role: 'user' as const, content: e.user },
      { role: 'assistant' as const, content: e.assistant },
    ]);
  }

  add(channel: string, exchange: Exchange): void {
    const list = this.#byChannel.get(channel) ?? [];
    list.push(exchange);
    while (list.length > this.#maxExchanges) list.shift();
    // Re-inserting keeps the map in least-recently-used order for eviction.
    this.#byChannel.delete(channel);
    this.#byChannel.set(channel, list);
    while (this.#byChannel.size > this.#maxChannels) {
      const oldest = this.#byChannel.keys().next().value;
      if (oldest === undefined) break;
      this.#byChannel.delete(oldest);
    }
  }
}
