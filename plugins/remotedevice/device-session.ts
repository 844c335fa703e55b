/**
 * One bound device connection: its requests (each with an id, a deadline and a place in the
 * bounded pending table), its results, and the ping that proves it is still there. A request the
 * device does not answer in time fails with HA_ERR_REMOTEDEVICE_TIMEOUT and the device is told to
 * cancel it; a ping it does not answer in time closes the connection (the device is offline); a
 * closing connection fails every pending request. What the device answers is handed on as it is,
 * for the caller to check: nothing here trusts it.
 */
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import { HomeAgentError } from '../../src/sdk/index.js';
import type { RegisteredDevice } from './device-store.js';
import { CLOSE, DEVICE_CAPABILITY, type DeviceCapability, type ResultFrame } from './protocol.js';

export interface SessionLimits {
  ping_interval_ms: number;
  ping_timeout_ms: number;
  max_pending_requests: number;
  max_message_bytes: number;
}

export interface SessionInfo {
  client: string;
  platform: string;
  remote: string;
  /** What the device offered in its hello (a mask). */
  offered: number;
  bound_at: number;
}

interface Pending {
  capability: DeviceCapability;
  resolve(data: Record<string, unknown>): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class DeviceSession {
  readonly device: RegisteredDevice;
  readonly info: SessionInfo;
  readonly #ws: WebSocket;
  readonly #limits: () => SessionLimits;
  readonly #pending = new Map<string, Pending>();
  #pingTimer: NodeJS.Timeout | undefined;
  #pongDeadline: NodeJS.Timeout | undefined;
  #pingId = 0;
  #awaitedPong: number | undefined;
  #closed = false;
  /** Why the connection ended (a code of the catalogue), once it has. */
  closeReason: { code: string; message: string } | undefined;
  lastSeen: number;

  constructor(ws: WebSocket, device: RegisteredDevice, info: SessionInfo, limits: () => SessionLimits) {
    this.#ws = ws;
    this.device = device;
    this.info = info;
    this.#limits = limits;
    this.lastSeen = info.bound_at;
    this.#schedulePing();
  }

  /** What the device may be asked for: offered by it and granted by the owner. */
  get capabilities(): number {
    return this.info.offered & this.device.capabilities;
  }

  get pending(): number {
    return this.#pending.size;
  }

  get open(): boolean {
    return !this.#closed && this.#ws.readyState === WebSocket.OPEN;
  }

  can(capability: DeviceCapability): boolean {
    return (this.capabilities & DEVICE_CAPABILITY[capability]) !== 0;
  }

  /** Asks the device for one capability; resolves with its result's data, or rejects with a coded error. */
  request(capability: DeviceCapability, args: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    if (!this.open) return Promise.reject(offline(this.device.id));
    if (!this.can(capability)) {
      return Promise.reject(
        new HomeAgentError(
          'HA_ERR_REMOTEDEVICE_CAPABILITY',
          `${this.device.id} does not offer ${capability}${(this.info.offered & DEVICE_CAPABILITY[capability]) !== 0 ? ' with the owner’s grant' : ''}`,
        ),
      );
    }
    const limits = this.#limits();
    if (this.#pending.size >= limits.max_pending_requests) {
      return Promise.reject(
        new HomeAgentError(
          'HA_ERR_REMOTEDEVICE_BUSY',
          `${this.device.id} has ${this.#pending.size} requests pending already (plugin.remotedevice.max_pending_requests)`,
        ),
      );
    }
    const id = randomUUID();
    const text = JSON.stringify({ type: 'request', id, capability, args, timeout_ms: timeoutMs });
    if (Buffer.byteLength(text) > limits.max_message_bytes) {
      return Promise.reject(
        new HomeAgentError(
          'HA_ERR_REMOTEDEVICE_TOO_LARGE',
          `the ${capability} request would be ${Buffer.byteLength(text)} bytes, more than plugin.remotedevice.max_message_bytes (${limits.max_message_bytes})`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.#pending.delete(id)) return;
        this.#send({ type: 'cancel', id });
        reject(new HomeAgentError('HA_ERR_REMOTEDEVICE_TIMEOUT', `${this.device.id} did not answer ${capability} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { capability, resolve, reject, timer });
      this.#send(text);
    });
  }

  /** A result frame from the device; false when it answers no pending request (late or made up). */
  result(frame: ResultFrame): boolean {
    this.lastSeen = Date.now();
    const pending = this.#pending.get(frame.id);
    if (!pending) return false;
    this.#pending.delete(frame.id);
    clearTimeout(pending.timer);
    if (frame.ok) pending.resolve(frame.data);
    else {
      pending.reject(
        new HomeAgentError(
          'HA_ERR_REMOTEDEVICE_REFUSED',
          `${this.device.id} refused ${pending.capability}: ${frame.error?.code}: ${frame.error?.message}`,
        ),
      );
    }
    return true;
  }

  pong(id: number): void {
    this.lastSeen = Date.now();
    if (id !== this.#awaitedPong) return;
    this.#awaitedPong = undefined;
    clearTimeout(this.#pongDeadline);
    this.#pongDeadline = undefined;
    this.#schedulePing();
  }

  /** Any frame from the device shows it is there (the ping still needs its pong). */
  touch(): void {
    this.lastSeen = Date.now();
  }

  ping(id: number): void {
    this.#send({ type: 'pong', id });
  }

  /** Tells the device why (an error frame), closes the connection and fails what is pending. */
  close(code: number, reason: { code: string; message: string }): void {
    if (this.#closed) return;
    this.#send({ type: 'error', code: reason.code, message: reason.message });
    this.#ws.close(code, reason.code);
    // A device that never answers the close handshake must not keep the socket.
    setTimeout(() => this.#ws.terminate(), 2000).unref();
    this.ended(reason);
  }

  /** The connection is gone (closed by either side): stops the timers and fails what is pending, once. */
  ended(reason: { code: string; message: string }): void {
    if (this.#closed) return;
    this.#closed = true;
    this.closeReason = reason;
    clearTimeout(this.#pingTimer);
    clearTimeout(this.#pongDeadline);
    const error =
      reason.code === 'HA_ERR_REMOTEDEVICE_REVOKED'
        ? new HomeAgentError('HA_ERR_REMOTEDEVICE_REVOKED', `${this.device.id} was revoked while the request was pending`)
        : offline(this.device.id, reason.message);
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.#pending.clear();
  }

  #schedulePing(): void {
    clearTimeout(this.#pingTimer);
    this.#pingTimer = setTimeout(() => {
      if (this.#closed) return;
      const id = ++this.#pingId;
      this.#awaitedPong = id;
      const { ping_timeout_ms } = this.#limits();
      this.#pongDeadline = setTimeout(
        () =>
          this.close(CLOSE.TIMEOUT, {
            code: 'HA_ERR_REMOTEDEVICE_PING_TIMEOUT',
            message: `no pong within ${ping_timeout_ms} ms (plugin.remotedevice.ping_timeout_ms)`,
          }),
        ping_timeout_ms,
      );
      this.#send({ type: 'ping', id });
    }, this.#limits().ping_interval_ms);
  }

  #send(frame: object | string): void {
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    this.#ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }
}

function offline(id: string, why?: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_REMOTEDEVICE_OFFLINE', `${id} is not connected${why ? ` (${why})` : ''}`);
}
