/**
 * Recognises QoS 1 messages the broker delivers a second time, so features do not act on them
 * twice (a doorbell ringing twice, a counter counted twice).
 *
 * Why they come: QoS 1 is "at least once". When the connection drops after we handled a message
 * but before our PUBACK reached the broker, a persistent session (clean: false) makes the broker
 * send it again on the next connection, with the same packet identifier, topic and payload.
 *
 * The rule: a QoS 1 message is a duplicate when the same (packet id, topic, payload hash) was
 * handed to features less than WINDOW_MS ago (one of the last CAPACITY such messages) AND either
 *   (a) its DUP flag is set (MQTT 3.1.1 §3.3.1.1: the broker says it is a re-delivery; mosquitto
 *       sets it), or
 *   (b) the session was resumed on this connection (CONNACK session present) and the earlier copy
 *       arrived on an earlier connection: a broker re-sends unacknowledged messages only on a new
 *       connection, and some (aedes 1.x) do so without the DUP flag.
 * Two genuine messages with the same topic and payload are both delivered: a new message has DUP 0,
 * and on one connection a broker reuses a packet id only after our PUBACK of the earlier one.
 *
 * Limits (documented, not hidden):
 * - a broker that resends without DUP and without session state (rule b needs session present)
 *   is not recognised: the copy is delivered again, as QoS 1 permits;
 * - rule (b) could take a genuinely new message for a copy if a broker, keeping the session,
 *   restarted its packet-id counter and gave a new message with the same topic and payload the id
 *   of one we saw on the previous connection within the window; mosquitto and aedes count ids
 *   upward and keep the counter with the session;
 * - the memory is in-process only: a message handled right before a daemon crash is delivered
 *   again after the restart;
 * - a copy made on the publishing side (a publisher re-sending after losing its PUBACK gets a new
 *   packet id from the broker) is indistinguishable from a new message at this layer;
 * - QoS 2 needs none of this (the protocol delivers once per session), QoS 0 is never re-sent.
 */
import { createHash } from 'node:crypto';

/** Re-deliveries come right after a reconnect; ten minutes also covers a long broker restart plus the longest backoff. */
export const WINDOW_MS = 10 * 60_000;
/** Re-delivered messages are the ones in flight when the connection broke: a broker's in-flight window, far below this. */
export const CAPACITY = 4096;

interface Seen {
  at: number;
  connection: number;
}

export class DuplicateFilter {
  readonly #now: () => number;
  readonly #recent = new Map<string, Seen>();
  #connection = 0;
  #resumed = false;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A new connection; without a resumed session the broker holds nothing to re-send, so the memory is dropped. */
  connected(sessionPresent: boolean): void {
    this.#connection++;
    this.#resumed = sessionPresent;
    if (!sessionPresent) this.#recent.clear();
  }

  /** True for a re-delivery (the caller drops and counts it); otherwise remembers the message. */
  isDuplicate(messageId: number, topic: string, payload: Buffer, dup: boolean): boolean {
    const now = this.#now();
    const key = `${messageId}\u0000${topic}\u0000${createHash('sha1').update(payload).digest('base64')}`;
    const seen = this.#recent.get(key);
    if (seen !== undefined && now - seen.at <= WINDOW_MS && (dup || (this.#resumed && seen.connection < this.#connection))) {
      return true;
    }
    // Re-inserted so the map stays in arrival order and the oldest entries are evicted first.
    this.#recent.delete(key);
    this.#recent.set(key, { at: now, connection: this.#connection });
    for (const [oldKey, old] of this.#recent) {
      if (this.#recent.size <= CAPACITY && now - old.at <= WINDOW_MS) break;
      this.#recent.delete(oldKey);
    }
    return false;
  }

  get size(): number {
    return this.#recent.size;
  }
}
