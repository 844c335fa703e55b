/**
 * Forward WebSocket: HomeAgent connects to the implementation's WebSocket server (url) with
 * `Authorization: Bearer <token>` and keeps reconnecting after a failure or a drop, waiting
 * reconnect_min_ms doubling to reconnect_max_ms with jitter (the SDK's ReconnectBackoff, shared with
 * MQTT and Home Assistant), started over after a connection stayed up HEALTHY_MS.
 * Every failed attempt is logged with its reason and the wait before the next one (the backoff
 * keeps that to a line every reconnect_max_ms at worst) and kept for health(); a hostile or broken
 * server (resets, garbage, half frames) only ever ends the current connection.
 */
import { WebSocket } from 'ws';
import { ReconnectBackoff } from '../../src/sdk/index.js';
import { deliverFrame, type LinkHandlers, type LinkLog, type OneBotLink, sendOn } from './link.js';

/** As the reverse server accepts: a bigger frame from the implementation is a protocol error, not a buffer. */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** A connection that stayed up this long counts as healthy and resets the waits. */
export const HEALTHY_MS = 10_000;

export interface LinkClock {
  now(): number;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

export interface ForwardClientOptions {
  url: string;
  token: string;
  minMs: number;
  maxMs: number;
  handlers: LinkHandlers;
  clock: LinkClock;
  log: LinkLog;
  /** Opens a socket; tests may count attempts. */
  connect?: (url: string, headers: Record<string, string>) => WebSocket;
}

export class ForwardClient implements OneBotLink {
  readonly #o: ForwardClientOptions;
  readonly #backoff: ReconnectBackoff;
  #socket: WebSocket | undefined;
  #timer: { cancel(): void } | undefined;
  #stopped = false;
  #problem: string | undefined;
  /** Waits chosen so far, in order (for health and tests). */
  readonly waits: number[] = [];

  constructor(options: ForwardClientOptions) {
    this.#o = options;
    this.#backoff = new ReconnectBackoff(() => ({ min_ms: options.minMs, max_ms: options.maxMs }));
  }

  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  get problem(): string | undefined {
    return this.#problem;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    this.#open();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#socket?.terminate();
    this.#socket = undefined;
  }

  send(frame: unknown): void {
    sendOn(this.#socket, frame);
  }

  #open(): void {
    const headers: Record<string, string> = this.#o.token === '' ? {} : { Authorization: `Bearer ${this.#o.token}` };
    const socket = this.#o.connect
      ? this.#o.connect(this.#o.url, headers)
      : new WebSocket(this.#o.url, { headers, handshakeTimeout: 10_000, maxPayload: MAX_PAYLOAD_BYTES });
    this.#socket = socket;
    let openedAt: number | undefined;
    let failure: string | undefined;
    socket.on('error', (error: NodeJS.ErrnoException) => {
      failure ??= error.code ? `${error.code} (${error.message})` : error.message;
      // A protocol error after the handshake: no closing handshake with a peer that broke the
      // protocol (ws would wait 30 s for its answer); the connection ends now and the wait begins.
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CLOSING) socket.terminate();
    });
    socket.on('open', () => {
      openedAt = this.#o.clock.now();
      this.#problem = undefined;
      this.#o.log.info({ url: this.#o.url }, 'connected to the OneBot implementation');
      this.#o.handlers.onUp(undefined);
    });
    socket.on('message', (data) => deliverFrame(this.#o.handlers, data, this.#o.log));
    socket.on('unexpected-response', (_req, res) => {
      failure = `HTTP ${res.statusCode ?? '?'} instead of a WebSocket (check access_token)`;
      socket.terminate();
    });
    socket.on('close', (code) => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      if (openedAt !== undefined) {
        // A peer that accepts and drops at once is not hammered: only a connection that lasted resets the waits.
        if (this.#o.clock.now() - openedAt >= HEALTHY_MS) this.#backoff.reset();
        this.#o.handlers.onDown(`connection closed (${code}${failure ? `, ${failure}` : ''})`);
      }
      if (this.#stopped) return;
      const wait = this.#schedule();
      if (openedAt === undefined) {
        this.#problem = `cannot connect: ${failure ?? `closed (${code})`}`;
        this.#o.log.warn(
          { url: this.#o.url, retry_in_ms: wait },
          `cannot connect to the OneBot implementation at ${this.#o.url}: ${failure ?? `closed (${code})`}; next attempt in ${wait} ms`,
        );
      } else {
        this.#problem = `connection lost: ${failure ?? `closed (${code})`}`;
        this.#o.log.info({ url: this.#o.url, retry_in_ms: wait }, `reconnecting to the OneBot implementation in ${wait} ms`);
      }
    });
  }

  /** Arms the next attempt after the backoff's wait; returns the wait. */
  #schedule(): number {
    const wait = this.#backoff.next();
    this.waits.push(wait);
    this.#timer = this.#o.clock.setTimer(() => {
      this.#timer = undefined;
      if (!this.#stopped) this.#open();
    }, wait);
    return wait;
  }
}
