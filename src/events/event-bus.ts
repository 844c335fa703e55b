/**
 * The typed event bus. The vocabulary is closed: every event name and payload is declared in
 * {@link EventMap} (src/api/events.ts). Listeners are registered under an owner (a subsystem or plugin name) so that
 * everything an owner registered can be removed at once when it stops, and each listener runs
 * isolated: a throwing or rejecting listener is logged and never reaches the emitter or the
 * other listeners.
 */

import type { ConfirmationRequest, DaemonState, EventMap, EventName } from '../api/events.js';
import type { Logger } from '../log/logger.js';

export type { ConfirmationRequest, DaemonState, EventMap, EventName };

export type Listener<K extends EventName> = (payload: EventMap[K]) => void | Promise<void>;

interface Registration {
  owner: string;
  // biome-ignore lint/suspicious/noExplicitAny: payload types are enforced by on()/emit() signatures
  listener: Listener<any>;
}

export class EventBus {
  readonly #listeners = new Map<EventName, Registration[]>();
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Adds a listener; returns a function that removes just this one. */
  on<K extends EventName>(owner: string, event: K, listener: Listener<K>): () => void {
    const registration: Registration = { owner, listener };
    const list = this.#listeners.get(event) ?? [];
    list.push(registration);
    this.#listeners.set(event, list);
    return () => {
      const current = this.#listeners.get(event);
      if (current)
        this.#listeners.set(
          event,
          current.filter((r) => r !== registration),
        );
    };
  }

  /** Removes every listener the owner registered. */
  removeOwner(owner: string): void {
    for (const [event, list] of this.#listeners) {
      this.#listeners.set(
        event,
        list.filter((r) => r.owner !== owner),
      );
    }
  }

  /** Calls the listeners synchronously, in registration order; asynchronous work is not awaited. */
  emit<K extends EventName>(event: K, payload: EventMap[K]): void {
    for (const { owner, listener } of [...(this.#listeners.get(event) ?? [])]) {
      try {
        const result = listener(payload);
        if (result instanceof Promise) result.catch((error: unknown) => this.#report(owner, event, error));
      } catch (error) {
        this.#report(owner, event, error);
      }
    }
  }

  listenerCount(event: EventName): number {
    return this.#listeners.get(event)?.length ?? 0;
  }

  #report(owner: string, event: EventName, error: unknown): void {
    this.#log.error({ owner, event, err: error }, 'event listener failed');
  }
}
