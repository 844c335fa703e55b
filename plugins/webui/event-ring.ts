/**
 * The last N events the web page may need again: a page that lost its event stream (a phone
 * going to sleep, a proxy cutting it) reconnects with the id of the last event it saw and gets
 * everything after it from here. Ids are consecutive integers from 1 for this run of the daemon,
 * so "after N" is a subtraction, and a gap (events that fell out, or ids of an earlier run) is
 * noticed and reported as a reset instead of being papered over.
 */

/** One kept event, with its Server-Sent Events frame written once for every stream. */
export interface RingEvent {
  id: number;
  event: string;
  data: unknown;
  /** `id: …\nevent: …\ndata: …\n\n` */
  frame: string;
}

/** What a reconnecting client gets. */
export interface Replay {
  /** Events after the client's id were lost (fell out of the buffer, or the id is from an earlier run). */
  reset: boolean;
  /** The kept events after the client's id (all kept events after a reset), oldest first. */
  events: RingEvent[];
}

export type RingListener = (event: RingEvent) => void;

export class EventRing {
  readonly #capacity: number;
  readonly #slots: Array<RingEvent | undefined>;
  readonly #listeners = new Set<RingListener>();
  #lastId = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`event ring capacity must be a positive integer, got ${capacity}`);
    this.#capacity = capacity;
    this.#slots = new Array<RingEvent | undefined>(capacity);
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** The id of the newest event (0 before the first). */
  get lastId(): number {
    return this.#lastId;
  }

  /** The id of the oldest kept event (lastId + 1 while empty). */
  get oldestId(): number {
    return Math.max(1, this.#lastId - this.#capacity + 1);
  }

  /** Keeps an event, gives it the next id and hands it to every listener. */
  push(event: string, data: unknown): RingEvent {
    const id = this.#lastId + 1;
    const entry: RingEvent = { id, event, data, frame: `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data ?? null)}\n\n` };
    this.#slots[(id - 1) % this.#capacity] = entry;
    this.#lastId = id;
    for (const listener of [...this.#listeners]) listener(entry);
    return entry;
  }

  /** The kept events after `lastSeen`, or a reset and every kept event when some of those are gone. */
  since(lastSeen: number): Replay {
    const oldest = this.oldestId;
    const reset = lastSeen > this.#lastId || lastSeen < oldest - 1;
    const from = reset ? oldest : lastSeen + 1;
    const events: RingEvent[] = [];
    for (let id = from; id <= this.#lastId; id++) {
      const entry = this.#slots[(id - 1) % this.#capacity];
      if (entry) events.push(entry);
    }
    return { reset, events };
  }

  /** Calls `listener` with every event pushed from now on; returns a function that stops it. */
  subscribe(listener: RingListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }
}
