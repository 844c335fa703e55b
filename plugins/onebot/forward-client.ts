/**
 * Forward WebSocket: HomeAgent connects to the implementation's WebSocket server (url) with
 * `Authorization: Bearer <token>` and keeps reconnecting after a failure or a drop, waiting
 * reconnect_min_ms doubling to reconnect_max_ms (Backoff), reset after a healthy connection.
 */
import { WebSocket } from 'ws';
import { Backoff } from './backoff.js';
import { type LinkHandlers, type OneBotLink, parseFrame, sendOn } from './link.js';

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
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Opens a socket; tests may count attempts. */
  connect?: (url: string, headers: Record<string, string>) => WebSocket;
}

export class ForwardClient implements OneBotLink {
  readonly #o: ForwardClientOptions;
  readonly #backoff: Backoff;
  #socket: WebSocket | undefined;
  #timer: { cancel(): void } | undefined;
  #stopped = false;
  /** Waits chosen so far, in order (for health and tests). */
  readonly waits: number[] = [];

  constructor(options: ForwardClientOptions) {
    this.#o = options;
    this.#backoff = new Backoff({ minMs: options.minMs, maxMs: options.maxMs, healthyMs: HEALTHY_MS });
  }

  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
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
      : new WebSocket(this.#o.url, { headers, handshakeTimeout: 10_000 });
    this.#socket = socket;
    let openedAt: number | undefined;
    socket.on('open', () => {
      openedAt = this.#o.clock.now();
      this.#o.log.info({ url: this.#o.url }, 'connected to the OneBot implementation');
      this.#o.handlers.onUp(undefined);
    });
    socket.on('message', (data) => this.#o.handlers.onFrame(parseFrame(data)));
    socket.on('unexpected-response', (_req, res) => {
      this.#o.log.warn(
        { url: this.#o.url, status: res.statusCode },
        'the OneBot implementation refused the connection (check access_token)',
      );
      socket.terminate();
    });
    socket.on('error', () => {});
    socket.on('close', (code) => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      if (openedAt !== undefined) {
        this.#backoff.connectionEnded(this.#o.clock.now() - openedAt);
        this.#o.handlers.onDown(`connection closed (${code})`);
      }
      if (!this.#stopped) this.#schedule();
    });
  }

  #schedule(): void {
    const wait = this.#backoff.next();
    this.waits.push(wait);
    this.#timer = this.#o.clock.setTimer(() => {
      this.#timer = undefined;
      if (!this.#stopped) this.#open();
    }, wait);
  }
}
