/**
 * Clears checked-off list items past core.lists.keep_done_days: once at start and then every few
 * hours while the daemon runs. Upkeep that fails (a locked or damaged state.db) is logged; the
 * lists keep working and it is tried again at the next round.
 */
import type { Logger } from '../log/logger.js';
import type { Service } from '../shared/service.js';
import type { ListStore } from './list-store.js';

/** How often checked-off list items past core.lists.keep_done_days are cleared while running. */
export const LIST_UPKEEP_MS = 6 * 3_600_000;

export class ListUpkeep implements Service {
  readonly name = 'lists';
  readonly #lists: Pick<ListStore, 'maintain'>;
  readonly #log: Logger;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: { lists: Pick<ListStore, 'maintain'>; log: Logger; intervalMs?: number }) {
    this.#lists = options.lists;
    this.#log = options.log;
    this.#intervalMs = options.intervalMs ?? LIST_UPKEEP_MS;
  }

  async start(): Promise<void> {
    this.#upkeep();
    // unref: a pending round never keeps a stopping process alive.
    this.#timer = setInterval(() => this.#upkeep(), this.#intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #upkeep(): void {
    try {
      this.#lists.maintain();
    } catch (error) {
      this.#log.warn({ err: error }, 'old checked-off list items could not be cleared');
    }
  }
}
