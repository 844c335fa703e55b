/**
 * Watches the library directory (recursively; Node 20 supports that on Linux through inotify,
 * following new subdirectories) and reports changes once they have been quiet for a while, so an
 * editor's save (temporary file, rename, metadata) becomes one reindex rather than five.
 * Watching can fail (inotify limits, the directory vanishing): that is logged and reported, never
 * thrown, and reindexing on request keeps working.
 */
import { type FSWatcher, watch } from 'node:fs';
import type { Logger } from '../log/logger.js';
import { describeError } from '../shared/errors.js';

export const DEFAULT_DEBOUNCE_MS = 500;

export interface KnowledgeWatcherOptions {
  root: string;
  debounceMs: number;
  /** A change was seen (called at once, for every change). */
  onDirty: () => void;
  /** Changes have been quiet for `debounceMs`. */
  onSettled: () => void;
  /** Watching stopped working. */
  onFailed: (reason: string) => void;
  log: Logger;
}

export class KnowledgeWatcher {
  readonly #o: KnowledgeWatcherOptions;
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: KnowledgeWatcherOptions) {
    this.#o = options;
  }

  get watching(): boolean {
    return this.#watcher !== undefined;
  }

  /**
   * Starts watching; false (logged) when the platform refuses. The watch keeps the process alive
   * on purpose: one that outlives stop() shows up as a process that does not exit.
   */
  start(): boolean {
    try {
      const watcher = watch(this.#o.root, { recursive: true }, (_event, file) => this.#changed(file));
      watcher.on('error', (error) => this.#fail(describeError(error)));
      this.#watcher = watcher;
      return true;
    } catch (error) {
      this.#fail(describeError(error));
      return false;
    }
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #changed(file: string | Buffer | null): void {
    if (!this.#watcher) return;
    const name = file === null ? '' : String(file);
    // Temporary files of atomic writes (ours and editors') are hidden; their rename is seen by its target's name.
    if (name !== '' && name.slice(name.lastIndexOf('/') + 1).startsWith('.')) return;
    this.#o.onDirty();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#o.onSettled();
    }, this.#o.debounceMs);
    this.#timer.unref();
  }

  #fail(reason: string): void {
    this.#o.log.warn(
      { root: this.#o.root, reason },
      'cannot watch the knowledge directory; edits on disk are picked up by `homeagentctl kb reindex`',
    );
    this.stop();
    this.#o.onFailed(reason);
  }
}
