/**
 * Starts kernel services in order and stops them in reverse, tracking each one's state. A
 * critical service that fails to start stops the start-up (already started services are stopped
 * again); stopping is bounded by a deadline so a hung service cannot hold the daemon forever.
 */

import type { ServiceStatus } from '../api/status.js';
import type { EventBus } from '../events/event-bus.js';
import type { Logger } from '../log/logger.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service, ServiceState } from '../shared/service.js';

export type { ServiceStatus };

interface Entry {
  service: Service;
  state: ServiceState;
  error?: string;
}

export interface StopResult {
  clean: boolean;
  timedOut: string[];
  failed: string[];
}

export class ServiceRunner {
  readonly #entries: Entry[] = [];
  readonly #events: EventBus;
  readonly #log: Logger;
  readonly #stopTimeoutMs: () => number;

  constructor(options: { events: EventBus; log: Logger; stopTimeoutMs: () => number }) {
    this.#events = options.events;
    this.#log = options.log;
    this.#stopTimeoutMs = options.stopTimeoutMs;
  }

  add(service: Service): void {
    this.#entries.push({ service, state: 'created' });
  }

  status(): ServiceStatus[] {
    return this.#entries.map((e) => ({ name: e.service.name, state: e.state, ...(e.error ? { error: e.error } : {}) }));
  }

  async startAll(signal: AbortSignal): Promise<void> {
    for (const entry of this.#entries) {
      if (signal.aborted) throw new HomeAgentError('HA_ERR_ABORTED');
      this.#set(entry, 'starting');
      try {
        await entry.service.start(signal);
        this.#set(entry, 'running');
      } catch (error) {
        this.#set(entry, 'failed', describeError(error));
        await this.stopAll(this.#stopTimeoutMs());
        if (error instanceof HomeAgentError) throw error;
        throw new HomeAgentError('HA_ERR_SERVICE_START', `${entry.service.name} failed to start: ${describeError(error)}`, {
          cause: error,
        });
      }
    }
  }

  /** Stops started services in reverse order; the whole stop shares one deadline. */
  async stopAll(timeoutMs = this.#stopTimeoutMs()): Promise<StopResult> {
    const deadline = performance.now() + timeoutMs;
    const result: StopResult = { clean: true, timedOut: [], failed: [] };
    for (const entry of [...this.#entries].reverse()) {
      if (entry.state === 'created' || entry.state === 'stopped') continue;
      const wasFailed = entry.state === 'failed';
      this.#set(entry, 'stopping', entry.error);
      const remaining = Math.max(0, deadline - performance.now());
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        entry.service.stop().then(
          () => 'stopped' as const,
          (error: unknown) => {
            this.#log.error({ service: entry.service.name, err: error }, 'service failed to stop cleanly');
            return 'failed' as const;
          },
        ),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), remaining);
        }),
      ]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        result.clean = false;
        result.timedOut.push(entry.service.name);
        this.#set(entry, 'failed', 'did not stop in time');
      } else if (outcome === 'failed') {
        result.clean = false;
        result.failed.push(entry.service.name);
        this.#set(entry, 'failed', 'stop failed');
      } else {
        this.#set(entry, wasFailed ? 'failed' : 'stopped', wasFailed ? entry.error : undefined);
      }
    }
    return result;
  }

  #set(entry: Entry, state: ServiceState, error?: string): void {
    entry.state = state;
    if (error === undefined) delete entry.error;
    else entry.error = error;
    this.#log.debug({ service: entry.service.name, state, error }, 'service state');
    this.#events.emit('service.state', {
      name: entry.service.name,
      kind: 'service',
      state,
      ...(error === undefined ? {} : { error }),
    });
  }
}
