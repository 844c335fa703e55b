/**
 * One WebSocket connection to Home Assistant, kept up: connect, authenticate with the long-lived
 * token, run id-numbered commands with a time limit, hand subscription events on, ping to notice a
 * dead link, and after any drop (HA restarting, the network, a ping unanswered) reconnect with the
 * shared jittered backoff (reset after a connection that stayed up). The plugin re-syncs on each
 * `onReady`, so a restarted HA is read afresh.
 *
 * A refused token (`auth_invalid`) is different from a drop: retrying the same token only fills
 * HA's log with failed logins (and HA bans an address after repeated ones when ip_ban_enabled), so
 * the connection stops in state `auth_failed` until `retry()` (the token setting changed).
 */
import { WebSocket } from 'ws';
import type { HomeassistantConnectionState, HomeassistantConnectionStatus } from '../../src/sdk/api.js';
import { HomeAgentError, type Logger, ReconnectBackoff } from '../../src/sdk/index.js';
import { authMessage, type Command, parseServerMessage } from './protocol.js';
import type { HomeassistantSettings } from './settings-schema.js';

/** get_states of a big house runs into megabytes; a frame past this is a broken peer. */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** A connection that stayed up this long counts as healthy: the next outage starts at the shortest wait. */
export const HEALTHY_MS = 10_000;

export type ConnectionSettings = Pick<
  HomeassistantSettings,
  'url' | 'token' | 'command_timeout_ms' | 'ping_interval_ms' | 'reconnect_min_ms' | 'reconnect_max_ms'
>;

export interface ConnectionClock {
  now(): number;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

export const systemClock: ConnectionClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
};

export interface HaConnectionOptions {
  settings: () => ConnectionSettings;
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  clock?: ConnectionClock;
  random?: () => number;
  /** Authenticated: the plugin subscribes and syncs. A rejection ends this connection (and a reconnect follows). */
  onReady(): Promise<void>;
  /** An `event` message for a subscription id. */
  onEvent(id: number, event: unknown): void;
  /** The connection ended (after having been ready). */
  onDown(reason: string): void;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: { cancel(): void };
  type: string;
}

export class HaConnection {
  readonly #o: HaConnectionOptions;
  readonly #clock: ConnectionClock;
  readonly #backoff: ReconnectBackoff;
  readonly #pending = new Map<number, Pending>();
  #socket: WebSocket | undefined;
  #state: HomeassistantConnectionState = 'stopped';
  #nextId = 1;
  #retryTimer: { cancel(): void } | undefined;
  #retryAt: number | undefined;
  #pingTimer: { cancel(): void } | undefined;
  #readyAt: number | undefined;
  #haVersion: string | null = null;
  #lastError: string | null = null;
  #connections = 0;

  constructor(options: HaConnectionOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    const s = () => options.settings();
    this.#backoff = new ReconnectBackoff(() => ({ min_ms: s().reconnect_min_ms, max_ms: s().reconnect_max_ms }), options.random);
  }

  get state(): HomeassistantConnectionState {
    return this.#state;
  }

  get ready(): boolean {
    return this.#state === 'ready';
  }

  status(): HomeassistantConnectionStatus {
    return {
      state: this.#state,
      url: this.#o.settings().url,
      ha_version: this.#haVersion,
      since: this.#readyAt === undefined ? null : new Date(this.#readyAt).toISOString(),
      connections: this.#connections,
      failed_attempts: this.#backoff.attempts,
      next_attempt_in_ms: this.#retryAt === undefined ? null : Math.max(0, this.#retryAt - this.#clock.now()),
      last_error: this.#lastError,
    };
  }

  start(): void {
    if (this.#state !== 'stopped') return;
    this.#open();
  }

  async stop(): Promise<void> {
    this.#state = 'stopped';
    this.#cancelRetry();
    this.#pingTimer?.cancel();
    this.#pingTimer = undefined;
    const socket = this.#socket;
    this.#socket = undefined;
    socket?.terminate();
    this.#failPending('the homeassistant plugin stopped');
  }

  /** Connects again now: the token or url changed (also after auth_failed). */
  retry(): void {
    if (this.#state === 'stopped') return;
    this.#cancelRetry();
    const socket = this.#socket;
    this.#socket = undefined;
    socket?.terminate();
    this.#endConnection('the settings changed');
    this.#backoff.reset();
    this.#open();
  }

  /**
   * Runs a command; resolves with its result. HA_ERR_HOMEASSISTANT_CONNECTION when not ready (or the
   * connection ends first), _TIMEOUT when HA does not answer in time, _COMMAND when it answers an error.
   */
  command(command: Command): Promise<unknown> {
    const socket = this.#socket;
    if (socket === undefined || (this.#state !== 'ready' && this.#state !== 'authenticating') || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new HomeAgentError('HA_ERR_HOMEASSISTANT_CONNECTION', `Home Assistant is not connected (${this.#problem()})`));
    }
    return this.#send(socket, command, this.#nextId++);
  }

  /**
   * Subscribes to an HA event type; resolves with the subscription's id, which the events carry
   * (HA answers the subscribe command before it sends any event for it).
   */
  async subscribeEvents(eventType: string): Promise<number> {
    const id = this.#nextId;
    await this.command({ type: 'subscribe_events', event_type: eventType });
    return id;
  }

  #send(socket: WebSocket, command: Command, id: number): Promise<unknown> {
    const timeoutMs = this.#o.settings().command_timeout_ms;
    return new Promise((resolve, reject) => {
      const timer = this.#clock.setTimer(() => {
        this.#pending.delete(id);
        reject(new HomeAgentError('HA_ERR_HOMEASSISTANT_TIMEOUT', `Home Assistant did not answer ${command.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer, type: command.type });
      try {
        socket.send(JSON.stringify({ id, ...command }));
      } catch (error) {
        timer.cancel();
        this.#pending.delete(id);
        reject(new HomeAgentError('HA_ERR_HOMEASSISTANT_CONNECTION', `sending ${command.type} failed`, { cause: error }));
      }
    });
  }

  #problem(): string {
    if (this.#state === 'auth_failed') return `the token was refused: ${this.#lastError ?? ''}; set plugin.homeassistant.token`;
    return this.#lastError ?? this.#state;
  }

  #open(): void {
    const { url, token } = this.#o.settings();
    this.#state = 'connecting';
    this.#retryAt = undefined;
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, { handshakeTimeout: HANDSHAKE_TIMEOUT_MS, maxPayload: MAX_PAYLOAD_BYTES });
    } catch (error) {
      // An url ws cannot even parse: waiting will not fix it, but a setting change will (retry()).
      this.#lastError = `cannot connect to ${url}: ${describe(error)}`;
      this.#schedule();
      return;
    }
    this.#socket = socket;
    let failure: string | undefined;
    let refused = false;
    socket.on('error', (error: NodeJS.ErrnoException) => {
      failure ??= error.code ? `${error.code} (${error.message})` : error.message;
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CLOSING) socket.terminate();
    });
    socket.on('unexpected-response', (_request, response) => {
      failure = `HTTP ${response.statusCode ?? '?'} instead of a WebSocket (is ${url} Home Assistant's /api/websocket?)`;
      socket.terminate();
    });
    socket.on('open', () => {
      if (this.#socket !== socket) return;
      this.#state = 'authenticating';
    });
    socket.on('message', (data) => {
      if (this.#socket !== socket) return;
      try {
        const outcome = this.#onFrame(socket, String(data), token);
        if (outcome === 'refused') refused = true;
      } catch (error) {
        // ws calls this inside its data handler: nothing may escape into the daemon.
        this.#o.log.error({ err: error }, 'a Home Assistant message could not be handled');
      }
    });
    socket.on('close', (code) => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      const wasReady = this.#state === 'ready';
      const reason = failure ?? `closed (${code})`;
      this.#endConnection(reason);
      if (this.#state === 'stopped') return;
      if (refused) {
        this.#state = 'auth_failed';
        this.#o.log.warn(
          { url },
          `Home Assistant refused the access token (${this.#lastError}); not reconnecting until plugin.homeassistant.token changes`,
        );
        return;
      }
      this.#lastError = wasReady ? `connection lost: ${reason}` : `cannot connect: ${reason}`;
      const wait = this.#schedule();
      if (wasReady) this.#o.log.info({ url, retry_in_ms: wait }, `Home Assistant connection lost (${reason}); reconnecting in ${wait} ms`);
      else
        this.#o.log.warn({ url, retry_in_ms: wait }, `cannot connect to Home Assistant at ${url}: ${reason}; next attempt in ${wait} ms`);
    });
  }

  #onFrame(socket: WebSocket, text: string, token: string): 'refused' | undefined {
    const message = parseServerMessage(text);
    if (message === undefined) {
      this.#o.log.debug({ chars: text.length }, 'a Home Assistant frame HomeAgent does not know was ignored');
      return undefined;
    }
    switch (message.type) {
      case 'auth_required':
        if (token === '') {
          this.#lastError = 'no token: set plugin.homeassistant.token';
          socket.close(1000);
          return 'refused';
        }
        socket.send(JSON.stringify(authMessage(token)));
        return undefined;
      case 'auth_invalid':
        this.#lastError = message.message;
        socket.close(1000);
        return 'refused';
      case 'auth_ok':
        this.#state = 'ready';
        this.#readyAt = this.#clock.now();
        this.#haVersion = message.ha_version ?? null;
        this.#lastError = null;
        this.#connections++;
        this.#o.log.info({ url: this.#o.settings().url, ha_version: this.#haVersion }, 'connected to Home Assistant');
        this.#armPing(socket);
        this.#o.onReady().catch((error) => {
          if (this.#socket !== socket) return;
          this.#lastError = `the sync failed: ${describe(error)}`;
          this.#o.log.warn({ err: error }, 'reading Home Assistant failed; reconnecting');
          socket.terminate();
        });
        return undefined;
      case 'result': {
        const pending = this.#pending.get(message.id);
        if (pending === undefined) return undefined;
        this.#pending.delete(message.id);
        pending.timer.cancel();
        if (message.success) pending.resolve(message.result);
        else
          pending.reject(
            new HomeAgentError(
              'HA_ERR_HOMEASSISTANT_COMMAND',
              `Home Assistant refused ${pending.type}: ${message.error.code}: ${message.error.message}`,
              {
                details: { ha_code: message.error.code },
              },
            ),
          );
        return undefined;
      }
      case 'pong': {
        const pending = this.#pending.get(message.id);
        if (pending === undefined) return undefined;
        this.#pending.delete(message.id);
        pending.timer.cancel();
        pending.resolve(null);
        return undefined;
      }
      case 'event':
        this.#o.onEvent(message.id, message.event);
        return undefined;
    }
  }

  /** Pings on an interval; a ping that times out ends the connection (HA or the network is gone). */
  #armPing(socket: WebSocket): void {
    this.#pingTimer?.cancel();
    this.#pingTimer = this.#clock.setTimer(() => {
      this.#pingTimer = undefined;
      if (this.#socket !== socket || this.#state !== 'ready') return;
      this.#send(socket, { type: 'ping' }, this.#nextId++).then(
        () => {
          if (this.#socket === socket) this.#armPing(socket);
        },
        (error) => {
          if (this.#socket !== socket) return;
          this.#o.log.warn({ err: error }, 'Home Assistant did not answer a ping; reconnecting');
          socket.terminate();
        },
      );
    }, this.#o.settings().ping_interval_ms);
  }

  #endConnection(reason: string): void {
    this.#pingTimer?.cancel();
    this.#pingTimer = undefined;
    const wasReady = this.#state === 'ready';
    if (this.#readyAt !== undefined && this.#clock.now() - this.#readyAt >= HEALTHY_MS) this.#backoff.reset();
    this.#readyAt = undefined;
    this.#failPending(`the Home Assistant connection closed: ${reason}`);
    if (wasReady) this.#o.onDown(reason);
  }

  #failPending(reason: string): void {
    for (const [id, pending] of [...this.#pending]) {
      this.#pending.delete(id);
      pending.timer.cancel();
      pending.reject(new HomeAgentError('HA_ERR_HOMEASSISTANT_CONNECTION', `${pending.type} was not answered: ${reason}`));
    }
  }

  #schedule(): number {
    this.#state = 'waiting';
    const wait = this.#backoff.next();
    this.#retryAt = this.#clock.now() + wait;
    this.#retryTimer = this.#clock.setTimer(() => {
      this.#retryTimer = undefined;
      if (this.#state === 'waiting') this.#open();
    }, wait);
    return wait;
  }

  #cancelRetry(): void {
    this.#retryTimer?.cancel();
    this.#retryTimer = undefined;
    this.#retryAt = undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
