/**
 * Starts and stops registered devices. All work runs on one serial chain so a reload's stop of
 * the old device always finishes before its replacement starts (both may hold the same pin).
 * A device that fails or hangs is a status line, never a crash: errors and timeouts are logged
 * and recorded, and the chain moves on.
 */
import type { Logger } from '../log/logger.js';
import { describeError } from '../shared/errors.js';
import type { Device } from './types.js';

export type DeviceState = 'registered' | 'starting' | 'running' | 'failed' | 'stopping' | 'stopped';

export interface DeviceStatus {
  state: DeviceState;
  error?: string;
}

export class DeviceLifecycle {
  readonly #log: Logger;
  readonly #timeoutMs: number;
  #chain: Promise<void> = Promise.resolve();
  #abort: AbortController | null = null;
  /** Devices whose start() succeeded and whose stop() has not run yet, in start order. */
  #started: Device[] = [];
  // Keyed by object: after a reload the new device has the same name but is another object.
  readonly #status = new WeakMap<Device, DeviceStatus>();

  constructor(log: Logger, timeoutMs: number) {
    this.#log = log;
    this.#timeoutMs = timeoutMs;
  }

  get running(): boolean {
    return this.#abort !== null;
  }

  status(device: Device): DeviceStatus {
    return this.#status.get(device) ?? { state: 'registered' };
  }

  /** Starts `devices` (the current table) and every device added later, until stop(). */
  start(devices: Iterable<Device>, signal?: AbortSignal): Promise<void> {
    const abort = new AbortController();
    this.#abort = abort;
    signal?.addEventListener('abort', () => abort.abort(signal.reason), { once: true });
    return this.added(devices);
  }

  /** Stops every started device, newest first. */
  stop(): Promise<void> {
    this.#abort?.abort(new Error('the IO manager is stopping'));
    this.#abort = null;
    return this.#enqueue(async () => {
      for (const device of [...this.#started].reverse()) await this.#stopOne(device);
    });
  }

  /** Table change while running: stop what left (first), then start what arrived. */
  changed(removed: readonly Device[], added: readonly Device[]): Promise<void> {
    const stopping = this.#enqueue(async () => {
      for (const device of removed) if (this.#started.includes(device)) await this.#stopOne(device);
    });
    return Promise.all([stopping, this.added(added)]).then(() => undefined);
  }

  added(devices: Iterable<Device>): Promise<void> {
    const list = [...devices];
    return this.#enqueue(async () => {
      for (const device of list) {
        const abort = this.#abort;
        if (!abort || abort.signal.aborted) return;
        if (!this.#started.includes(device)) await this.#startOne(device, abort.signal);
      }
    });
  }

  /** Resolves when all lifecycle work queued so far is done. */
  settled(): Promise<void> {
    return this.#chain;
  }

  #enqueue(work: () => Promise<void>): Promise<void> {
    this.#chain = this.#chain.then(work, work);
    return this.#chain;
  }

  async #startOne(device: Device, signal: AbortSignal): Promise<void> {
    if (!device.start) {
      this.#started.push(device);
      this.#status.set(device, { state: 'running' });
      return;
    }
    this.#status.set(device, { state: 'starting' });
    try {
      await this.#bounded(device.start(signal), `start of device ${device.name}`);
      this.#started.push(device);
      this.#status.set(device, { state: 'running' });
    } catch (error) {
      this.#status.set(device, { state: 'failed', error: describeError(error) });
      this.#log.error({ device: device.name, owner: device.owner, err: error }, 'device failed to start');
      // A half-started device may hold resources (a pin, a file): give it its stop() anyway.
      await this.#stopQuietly(device);
    }
  }

  async #stopOne(device: Device): Promise<void> {
    this.#started = this.#started.filter((d) => d !== device);
    this.#status.set(device, { state: 'stopping' });
    try {
      if (device.stop) await this.#bounded(device.stop(), `stop of device ${device.name}`);
      this.#status.set(device, { state: 'stopped' });
    } catch (error) {
      this.#status.set(device, { state: 'failed', error: describeError(error) });
      this.#log.error({ device: device.name, owner: device.owner, err: error }, 'device failed to stop');
    }
  }

  async #stopQuietly(device: Device): Promise<void> {
    try {
      if (device.stop) await this.#bounded(device.stop(), `stop of device ${device.name}`);
    } catch (error) {
      this.#log.warn({ device: device.name, err: error }, 'device stop after a failed start failed too');
    }
  }

  async #bounded(work: Promise<void>, what: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${this.#timeoutMs} ms`)), this.#timeoutMs);
    });
    try {
      await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
