/**
 * The daemon's one-line status and its notices: things a person should know about (a database
 * that was found corrupt and replaced, a plugin that failed). Every change goes to the event bus
 * and, through the daemon, to systemd as STATUS=.
 */

import type { Notice } from '../api/status.js';
import type { DaemonState, EventBus } from '../events/event-bus.js';
import type { Clock } from '../shared/clock.js';

export type { Notice };

export class DaemonStatus {
  readonly startedAt: number;
  readonly #events: EventBus;
  readonly #clock: Clock;
  readonly #notices = new Map<string, Notice>();
  #state: DaemonState = 'starting';
  #healthy = true;
  #summary = 'starting';

  constructor(options: { events: EventBus; clock: Clock }) {
    this.#events = options.events;
    this.#clock = options.clock;
    this.startedAt = options.clock.now();
  }

  /** `degraded` while running with a failing health check or an error notice. */
  get state(): DaemonState {
    const degraded = this.#state === 'running' && (!this.#healthy || this.notices().some((n) => n.level === 'error'));
    return degraded ? 'degraded' : this.#state;
  }

  notices(): Notice[] {
    return [...this.#notices.values()];
  }

  notice(level: Notice['level'], key: string, message: string): void {
    this.#notices.set(key, { level, key, message, at: new Date(this.#clock.now()).toISOString() });
    this.#publish();
  }

  clearNotice(key: string): void {
    if (this.#notices.delete(key)) this.#publish();
  }

  setHealthy(healthy: boolean): void {
    this.#healthy = healthy;
    this.#publish();
  }

  /** `summary` is the short description used while running, e.g. "CLI at /run/homeagent/homeagent.sock". */
  running(summary: string): void {
    this.#summary = summary;
    this.#state = 'running';
    this.#publish();
  }

  stopping(): void {
    this.#state = 'stopping';
    this.#publish();
  }

  text(): string {
    switch (this.#state) {
      case 'starting':
        return 'Starting';
      case 'stopping':
        return 'Stopping';
      default: {
        const problems = this.notices()
          .filter((n) => n.level === 'error')
          .map((n) => n.message);
        if (!this.#healthy) problems.unshift('health check failing');
        return problems.length > 0 ? `Degraded: ${problems.join('; ')}` : `Running: ${this.#summary}`;
      }
    }
  }

  #publish(): void {
    this.#events.emit('daemon.status', { state: this.state, text: this.text() });
  }
}
