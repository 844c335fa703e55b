/**
 * Packet identifiers for mqtt.js that never collide with a packet kept in the outbox. mqtt.js's
 * default provider counts from a random start and never checks what is stored; with a persistent
 * outbox a new process (or a publish made while disconnected) could then take the id of a stored,
 * unacknowledged message: the store would overwrite it (a lost message) and a broker would take the
 * new QoS 2 message for a retry of the old one. This provider skips every id in use on the current
 * connection and every id the outbox holds.
 *
 * mqtt.js's protocol with it: `clear()` at each CONNACK, then `register(id)` for each packet
 * re-sent from the outbox (they must be accepted, or mqtt.js skips the packet and stalls the
 * flush), `allocate()` for new packets, `deallocate(id)` once acknowledged.
 */
import type { IClientOptions } from 'mqtt';

type MessageIdProvider = NonNullable<IClientOptions['messageIdProvider']>;

const MAX_ID = 65535;

export class OutboxMessageIds implements MessageIdProvider {
  readonly #isStored: (id: number) => boolean;
  readonly #inUse = new Set<number>();
  #next = 1;
  #last: number | null = null;

  constructor(isStored: (id: number) => boolean) {
    this.#isStored = isStored;
  }

  allocate(): number | null {
    for (let tried = 0; tried < MAX_ID; tried++) {
      const id = this.#next;
      this.#next = id === MAX_ID ? 1 : id + 1;
      if (this.#inUse.has(id) || this.#isStored(id)) continue;
      this.#inUse.add(id);
      this.#last = id;
      return id;
    }
    // mqtt.js queues the publish until an id is freed.
    return null;
  }

  getLastAllocated(): number | null {
    return this.#last;
  }

  register(id: number): boolean {
    if (this.#inUse.has(id)) return false;
    this.#inUse.add(id);
    return true;
  }

  deallocate(id: number): void {
    this.#inUse.delete(id);
  }

  clear(): void {
    this.#inUse.clear();
  }
}
