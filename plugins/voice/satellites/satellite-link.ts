/**
 * One satellite's connection. A Wyoming satellite is a server (wyoming-satellite listens on 10700)
 * and keeps one client at a time, so HomeAgent holds a single long-lived TCP connection to it, as
 * Home Assistant does: `describe` → `info` (the satellite's own name, area and wake words), then
 * `run-satellite` says we are ready for its pipelines. From then on every event the satellite sends
 * goes to `onEvent`, except the keep-alive: we ping it every ping_interval_ms and drop a satellite
 * that does not answer within pong_timeout_ms, and we answer its own pings.
 *
 * Whatever goes wrong (refused, unreachable, closed, silent, malformed JSON, an oversized payload)
 * closes the socket, becomes the state `failed` with a coded reason (HA_ERR_VOICE_SATELLITE), and
 * the next attempt waits with the SDK's exponential back-off. Nothing here throws to the caller.
 */
import { createConnection, type Socket } from 'node:net';
import { type BackoffBounds, HomeAgentError, ReconnectBackoff } from '../../../src/sdk/index.js';
import { encodeEvent, type WyomingEvent, WyomingEventDecoder } from '../wyoming-events.js';
import { event, readSatelliteInfo, type SatelliteInfo } from './satellite-events.js';

export type LinkState = 'connecting' | 'connected' | 'failed' | 'stopped';

export interface LinkLimits extends BackoffBounds {
  connect_timeout_ms: number;
  ping_interval_ms: number;
  pong_timeout_ms: number;
  max_payload_bytes: number;
}

export interface SatelliteLinkOptions {
  /** "satellite kitchen (10.0.0.7:10700)": the start of every problem text. */
  label: string;
  host: string;
  port: number;
  limits: () => LinkLimits;
  now: () => number;
  onConnected(info: SatelliteInfo | undefined): void;
  onEvent(event: WyomingEvent): void;
  /** The connection ended (or an attempt failed); `problem` is the coded reason. */
  onDisconnected(problem: HomeAgentError): void;
  random?: () => number;
}

export interface LinkStatus {
  state: LinkState;
  /** Why it is not connected (the last failure), while it is not. */
  problem?: string;
  /** Epoch ms of the last event received. */
  lastSeen?: number;
  /** Epoch ms since the state holds. */
  since: number;
  /** Failed attempts since it was last connected (0 while connected). */
  failures: number;
  /** When the next attempt starts (epoch ms), while waiting. */
  retryAt?: number;
}

/** A connection that lasted this long counts as stable: the next outage starts the back-off again at reconnect_min_ms. */
const STABLE_MS = 30_000;

export class SatelliteLink {
  readonly #options: SatelliteLinkOptions;
  readonly #backoff: ReconnectBackoff;
  #state: LinkState = 'stopped';
  #since: number;
  #problem: string | undefined;
  #lastSeen: number | undefined;
  #retryAt: number | undefined;
  #socket: Socket | undefined;
  #connectedAt: number | undefined;
  #timers = new Set<NodeJS.Timeout>();
  #pongTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  /** Bumped per attempt, so events of a closed socket are ignored. */
  #attempt = 0;

  constructor(options: SatelliteLinkOptions) {
    this.#options = options;
    this.#since = options.now();
    this.#backoff = new ReconnectBackoff(() => {
      const { min_ms, max_ms } = options.limits();
      return { min_ms, max_ms };
    }, options.random);
  }

  get connected(): boolean {
    return this.#state === 'connected';
  }

  status(): LinkStatus {
    return {
      state: this.#state,
      ...(this.#state !== 'connected' && this.#problem ? { problem: this.#problem } : {}),
      ...(this.#lastSeen === undefined ? {} : { lastSeen: this.#lastSeen }),
      since: this.#since,
      failures: this.#failures,
      ...(this.#retryAt === undefined ? {} : { retryAt: this.#retryAt }),
    };
  }

  start(): void {
    if (this.#state !== 'stopped') return;
    this.#connect();
  }

  /** Says pause-satellite when connected (the satellite stops streaming) and closes for good. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    const socket = this.#socket;
    if (socket && this.#state === 'connected') socket.write(encodeEvent(event('pause-satellite')));
    this.#setState('stopped');
    this.#clearTimers();
    this.#attempt++;
    this.#socket = undefined;
    if (socket && !socket.destroyed) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.end();
        // A satellite that never closes its side must not hold up the plugin's stop.
        const timer = setTimeout(() => socket.destroy(), 1000);
        timer.unref();
      });
    }
  }

  /** Sends events in order; false (nothing sent) when not connected. */
  send(events: WyomingEvent | WyomingEvent[]): boolean {
    const socket = this.#socket;
    if (!socket || this.#state !== 'connected') return false;
    const list = Array.isArray(events) ? events : [events];
    socket.write(Buffer.concat(list.map((e) => encodeEvent(e))));
    return true;
  }

  #connect(): void {
    const attempt = ++this.#attempt;
    const { host, port } = this.#options;
    const limits = this.#options.limits();
    this.#retryAt = undefined;
    this.#setState('connecting');
    const decoder = new WyomingEventDecoder(limits.max_payload_bytes);
    let socket: Socket;
    try {
      socket = createConnection({ host, port });
    } catch (error) {
      this.#fail(attempt, `cannot connect: ${(error as Error).message}`);
      return;
    }
    this.#socket = socket;
    socket.setNoDelay(true);
    const handshake = this.#timer(
      () => this.#fail(attempt, `no info within ${limits.connect_timeout_ms} ms of connecting`),
      limits.connect_timeout_ms,
    );
    socket.on('connect', () => {
      if (attempt === this.#attempt) socket.write(encodeEvent(event('describe')));
    });
    socket.on('data', (chunk: Buffer) => {
      if (attempt !== this.#attempt) return;
      let events: WyomingEvent[];
      try {
        events = decoder.push(chunk);
      } catch (error) {
        this.#fail(attempt, `broke the protocol: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      for (const received of events) {
        if (attempt !== this.#attempt) return;
        this.#lastSeen = this.#options.now();
        if (this.#state === 'connecting') {
          if (received.type !== 'info') continue;
          this.#clearTimer(handshake);
          this.#handshakeDone(socket, received);
          continue;
        }
        if (received.type === 'ping')
          socket.write(encodeEvent(event('pong', typeof received.data.text === 'string' ? { text: received.data.text } : {})));
        else if (received.type === 'pong') {
          this.#clearTimer(this.#pongTimer);
          this.#pongTimer = undefined;
        } else this.#deliver(attempt, received);
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === 'ECONNREFUSED'
          ? 'connection refused'
          : error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN'
            ? 'host not found'
            : error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH'
              ? 'host unreachable'
              : error.message;
      this.#fail(attempt, reason);
    });
    socket.on('close', () => this.#fail(attempt, 'closed the connection'));
  }

  #handshakeDone(socket: Socket, info: WyomingEvent): void {
    this.#connectedAt = this.#options.now();
    this.#problem = undefined;
    this.#failures = 0;
    this.#setState('connected');
    socket.write(encodeEvent(event('run-satellite')));
    this.#schedulePing(socket);
    this.#options.onConnected(readSatelliteInfo(info));
  }

  #deliver(attempt: number, received: WyomingEvent): void {
    try {
      this.#options.onEvent(received);
    } catch (error) {
      // A handler's own bug must not leave the socket half-read; the satellite gets a fresh start.
      this.#fail(attempt, `event ${received.type} could not be handled: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  #schedulePing(socket: Socket): void {
    const { ping_interval_ms, pong_timeout_ms } = this.#options.limits();
    const attempt = this.#attempt;
    this.#timer(() => {
      if (attempt !== this.#attempt) return;
      // One ping at a time: while one waits for its pong, its own deadline decides.
      if (this.#pongTimer === undefined) {
        socket.write(encodeEvent(event('ping', { text: String(this.#options.now()) })));
        this.#pongTimer = this.#timer(() => this.#fail(attempt, `no pong within ${pong_timeout_ms} ms`), pong_timeout_ms);
      }
      this.#schedulePing(socket);
    }, ping_interval_ms);
  }

  #fail(attempt: number, reason: string): void {
    if (attempt !== this.#attempt || this.#state === 'stopped') return;
    this.#attempt++;
    this.#clearTimers();
    const socket = this.#socket;
    this.#socket = undefined;
    socket?.destroy();
    const now = this.#options.now();
    if (this.#connectedAt !== undefined && now - this.#connectedAt >= STABLE_MS) this.#backoff.reset();
    this.#connectedAt = undefined;
    const problem = new HomeAgentError('HA_ERR_VOICE_SATELLITE', `${this.#options.label}: ${reason}`);
    this.#problem = problem.message;
    this.#failures++;
    this.#setState('failed');
    const wait = this.#backoff.next();
    this.#retryAt = now + wait;
    this.#timer(() => this.#connect(), wait);
    this.#options.onDisconnected(problem);
  }

  #setState(state: LinkState): void {
    if (state === this.#state) return;
    this.#state = state;
    this.#since = this.#options.now();
  }

  #timer(run: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    this.#timers.add(timer);
    return timer;
  }

  #clearTimer(timer: NodeJS.Timeout | undefined): void {
    if (!timer) return;
    clearTimeout(timer);
    this.#timers.delete(timer);
  }

  #clearTimers(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#pongTimer = undefined;
  }
}
