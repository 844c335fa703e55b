/**
 * OneBot actions as promises: each request gets a unique `echo`, the response carrying the same
 * echo settles it, and one not answered within action_timeout_ms fails (so a silent
 * implementation never hangs a tool or a turn). A closed connection fails everything pending.
 */
import { HomeAgentError } from '../../src/sdk/index.js';
import type { ActionRequest, ActionResponse } from './protocol.js';

export interface CallerClock {
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

export const systemTimers: CallerClock = {
  setTimer(fn, ms) {
    const timeout = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(timeout) };
  },
};

interface Pending {
  action: string;
  resolve(data: unknown): void;
  reject(error: Error): void;
  timer: { cancel(): void };
}

export interface ActionCallerOptions {
  /** Sends a request on the current connection; throws HA_ERR_ONEBOT_CONNECTION when there is none. */
  send(request: ActionRequest): void;
  timeoutMs(): number;
  clock?: CallerClock;
}

export class ActionCaller {
  readonly #options: ActionCallerOptions;
  readonly #pending = new Map<string, Pending>();
  #seq = 0;

  constructor(options: ActionCallerOptions) {
    this.#options = options;
  }

  /** Resolves with the response's `data`; rejects HA_ERR_ONEBOT_ACTION (status failed), _TIMEOUT or _CONNECTION. */
  call(action: string, params: Record<string, unknown>): Promise<unknown> {
    const echo = `ha-${++this.#seq}-${Date.now().toString(36)}`;
    return new Promise((resolve, reject) => {
      const timeoutMs = this.#options.timeoutMs();
      const timer = (this.#options.clock ?? systemTimers).setTimer(() => {
        this.#pending.delete(echo);
        reject(new HomeAgentError('HA_ERR_ONEBOT_TIMEOUT', `${action} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(echo, { action, resolve, reject, timer });
      try {
        this.#options.send({ action, params, echo });
      } catch (error) {
        timer.cancel();
        this.#pending.delete(echo);
        reject(error);
      }
    });
  }

  /** Settles the call a response answers; false when its echo is not one of ours (late or foreign). */
  handle(response: ActionResponse): boolean {
    const echo = typeof response.echo === 'string' ? response.echo : undefined;
    const pending = echo === undefined ? undefined : this.#pending.get(echo);
    if (!pending || echo === undefined) return false;
    this.#pending.delete(echo);
    pending.timer.cancel();
    if (response.status === 'ok' || response.status === 'async') pending.resolve(response.data ?? null);
    else {
      const why = response.wording || response.msg || response.message || 'no reason given';
      pending.reject(
        new HomeAgentError('HA_ERR_ONEBOT_ACTION', `${pending.action} failed: retcode ${response.retcode}, ${why}`, {
          details: { retcode: response.retcode, wording: why },
        }),
      );
    }
    return true;
  }

  /** Fails every pending call (the connection closed). */
  failAll(reason: string): void {
    for (const [echo, pending] of this.#pending) {
      this.#pending.delete(echo);
      pending.timer.cancel();
      pending.reject(new HomeAgentError('HA_ERR_ONEBOT_CONNECTION', `${pending.action}: ${reason}`));
    }
  }

  get pending(): number {
    return this.#pending.size;
  }
}
