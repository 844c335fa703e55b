/**
 * The open Server-Sent Events streams of GET /api/v1/events. Each stream first replays what the
 * client missed (from the event ring), then gets every new event as it is kept. Streams are
 * bounded three ways so a page cannot hold the daemon: at most `max_event_streams` of them (the
 * oldest is closed for a new one: a forgotten tab gives way to the one in use), a stream whose
 * client stops reading is closed once its unsent frames pass MAX_PENDING_BYTES (it reconnects and
 * is replayed from the ring), and all of them end when the plugin stops. A comment line every
 * `heartbeatMs` keeps proxies and phones from treating a quiet stream as dead.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../../src/sdk/index.js';
import type { EventRing, RingEvent } from './event-ring.js';

/** The heartbeat's clock: tests drive it by hand. Returns a function that stops the timer. */
export type Heartbeat = (everyMs: number, tick: () => void) => () => void;

export const HEARTBEAT_MS = 15_000;
/**
 * Unsent bytes a stream may pile up before it is closed. Far above what a reading client ever has
 * waiting (a busy turn is a few KB of deltas), far below what would matter on a Pi.
 */
export const MAX_PENDING_BYTES = 1024 * 1024;

/** Header of every stream; the reply is written raw, so the server's own header hooks do not run. */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store, no-transform',
  'x-content-type-options': 'nosniff',
  // nginx and friends would otherwise hold the frames back.
  'x-accel-buffering': 'no',
};

export const systemHeartbeat: Heartbeat = (everyMs, tick) => {
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
};

export interface EventStreamsOptions {
  ring: EventRing;
  /** plugin.webui.max_event_streams, read at each new stream (it may change at run time). */
  maxStreams: () => number;
  log: Logger;
  heartbeat?: Heartbeat;
  heartbeatMs?: number;
}

export class EventStreams {
  readonly #ring: EventRing;
  readonly #maxStreams: () => number;
  readonly #log: Logger;
  readonly #heartbeat: Heartbeat;
  readonly #heartbeatMs: number;
  /** Insertion order is opening order: the first is the oldest. */
  readonly #streams = new Set<ServerResponse>();
  #stopRing: (() => void) | undefined;
  #stopHeartbeat: (() => void) | undefined;
  #closed = false;

  constructor(options: EventStreamsOptions) {
    this.#ring = options.ring;
    this.#maxStreams = options.maxStreams;
    this.#log = options.log;
    this.#heartbeat = options.heartbeat ?? systemHeartbeat;
    this.#heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  }

  get size(): number {
    return this.#streams.size;
  }

  /**
   * Starts a stream on a response the caller has taken over from the framework. With `lastSeen`
   * (the Last-Event-ID) the kept events after it come first, after a `reset` event when some are gone.
   */
  open(response: ServerResponse, lastSeen: number | undefined): void {
    if (this.#closed) {
      response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('the web server is stopping\n');
      return;
    }
    // The client went away before the stream opened: its 'close' has been and gone, so it would never be forgotten.
    if (response.destroyed) return;
    const max = Math.max(1, this.#maxStreams());
    for (const oldest of this.#streams) {
      if (this.#streams.size < max) break;
      this.#close(oldest, 'too many event streams: this one was the oldest');
    }
    // Before the first write: whatever a write to a client that went away raises lands here.
    response.on('error', (error) => this.#log.debug({ err: error }, 'event stream write failed'));
    response.writeHead(200, STREAM_HEADERS);
    // The browser's reconnect delay; a comment so the headers and first bytes reach the client now.
    response.write('retry: 2000\n: stream open\n\n');
    if (lastSeen !== undefined) this.#replay(response, lastSeen);
    this.#streams.add(response);
    response.on('close', () => this.#forget(response));
    this.#stopRing ??= this.#ring.subscribe((event) => this.#broadcast(event));
    this.#stopHeartbeat ??= this.#heartbeat(this.#heartbeatMs, () => this.#beat());
  }

  /** Ends every stream and refuses new ones (the plugin is stopping). */
  closeAll(reason = 'the web server is stopping'): void {
    this.#closed = true;
    for (const response of [...this.#streams]) this.#close(response, reason);
    this.#idle();
  }

  #replay(response: ServerResponse, lastSeen: number): void {
    const replay = this.#ring.since(lastSeen);
    if (replay.reset) {
      const data = { last_event_id: lastSeen, oldest_kept_id: this.#ring.oldestId, newest_id: this.#ring.lastId };
      response.write(`event: reset\ndata: ${JSON.stringify(data)}\n\n`);
    }
    for (const event of replay.events) response.write(event.frame);
  }

  #broadcast(event: RingEvent): void {
    for (const response of [...this.#streams]) this.#write(response, event.frame);
  }

  #beat(): void {
    for (const response of [...this.#streams]) this.#write(response, ': keep-alive\n\n');
  }

  #write(response: ServerResponse, text: string): void {
    if (response.writableLength > MAX_PENDING_BYTES) {
      this.#log.warn({ pending_bytes: response.writableLength }, 'event stream client stopped reading: closing its stream');
      // Ending would queue behind what it does not read; the socket goes, the client reconnects and is replayed.
      this.#forget(response);
      response.destroy();
      return;
    }
    response.write(text);
  }

  #close(response: ServerResponse, reason: string): void {
    this.#forget(response);
    if (response.writableEnded) return;
    response.end(`event: closed\ndata: ${JSON.stringify({ reason })}\n\n`);
  }

  #forget(response: ServerResponse): void {
    if (!this.#streams.delete(response)) return;
    if (this.#streams.size === 0) this.#idle();
  }

  /** No streams: nothing listens to the ring and no timer runs. */
  #idle(): void {
    this.#stopRing?.();
    this.#stopRing = undefined;
    this.#stopHeartbeat?.();
    this.#stopHeartbeat = undefined;
  }
}
