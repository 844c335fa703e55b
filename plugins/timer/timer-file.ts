/**
 * The pending timers on disk, so that they survive a restart. Every save writes a whole snapshot
 * atomically (temporary file, fsync, rename, fsync of the folder): a power cut on the Pi leaves
 * either the old or the new file, never half of one. A file that cannot be read is moved aside
 * with a log line and the plugin starts with no timers; it never fails the plugin.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../src/sdk/index.js';

/** One pending timer as it is stored. Times are milliseconds since the Unix epoch. */
export interface StoredTimer {
  id: string;
  message: string;
  fires_at: number;
  set_at: number;
  /** Where the timer_set call came from, and the channel the expiry goes back to. */
  source: string;
  channel: string;
}

const FILE_VERSION = 1;

export class TimerFile {
  readonly #path: string;
  readonly #log: Logger;
  /** The newest snapshot not written yet; a burst of changes collapses into one write. */
  #pending: readonly StoredTimer[] | undefined;
  #writing: Promise<void> | undefined;

  constructor(path: string, log: Logger) {
    this.#path = path;
    this.#log = log;
  }

  get path(): string {
    return this.#path;
  }

  /** The stored timers; a missing file is none, an unreadable one is moved aside and is none. */
  async load(): Promise<StoredTimer[]> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      this.#log.error({ err: error, file: this.#path }, 'timer file could not be read; starting without stored timers');
      return [];
    }
    let entries: unknown[];
    try {
      entries = timerEntries(JSON.parse(text));
    } catch (error) {
      await this.#moveAside(error);
      return [];
    }
    const timers: StoredTimer[] = [];
    for (const entry of entries) {
      if (isStoredTimer(entry)) timers.push(entry);
      else this.#log.warn({ file: this.#path, entry }, 'malformed timer in the timer file skipped');
    }
    return timers;
  }

  /** Writes `timers` as the new content; resolves once this snapshot (or a newer one) is on disk. Never rejects. */
  save(timers: readonly StoredTimer[]): Promise<void> {
    this.#pending = timers.map((timer) => ({ ...timer }));
    this.#writing ??= this.#drain();
    return this.#writing;
  }

  /** Resolves when every save asked for so far is written. */
  async flush(): Promise<void> {
    await this.#writing;
  }

  async #drain(): Promise<void> {
    while (this.#pending) {
      const snapshot = this.#pending;
      this.#pending = undefined;
      try {
        await writeAtomically(this.#path, `${JSON.stringify({ version: FILE_VERSION, timers: snapshot }, null, 2)}\n`);
      } catch (error) {
        // The timers still run from memory; only a restart before the next good save would lose them.
        this.#log.error({ err: error, file: this.#path }, 'timer file could not be written');
      }
    }
    // Cleared in the same synchronous step as the last check of #pending, so a save arriving
    // now starts a new drain instead of joining one that has already finished.
    this.#writing = undefined;
  }

  async #moveAside(error: unknown): Promise<void> {
    const aside = `${this.#path}.corrupt-${Date.now()}`;
    try {
      await rename(this.#path, aside);
      this.#log.warn(
        { err: error, file: this.#path, moved_to: aside },
        'timer file is corrupt; moved aside, starting without stored timers',
      );
    } catch (renameError) {
      this.#log.error(
        { err: error, rename_err: renameError, file: this.#path },
        'timer file is corrupt and could not be moved aside; starting without stored timers',
      );
    }
  }
}

function timerEntries(data: unknown): unknown[] {
  if (typeof data !== 'object' || data === null || !Array.isArray((data as { timers?: unknown }).timers)) {
    throw new Error('the file is not an object with a "timers" array');
  }
  return (data as { timers: unknown[] }).timers;
}

function isStoredTimer(value: unknown): value is StoredTimer {
  if (typeof value !== 'object' || value === null) return false;
  const timer = value as Record<string, unknown>;
  return (
    typeof timer.id === 'string' &&
    timer.id !== '' &&
    typeof timer.message === 'string' &&
    Number.isFinite(timer.fires_at) &&
    Number.isFinite(timer.set_at) &&
    typeof timer.source === 'string' &&
    typeof timer.channel === 'string' &&
    timer.channel !== ''
  );
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(text, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  // Without syncing the folder the rename itself may not survive a power cut.
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the file itself is already synced.
  } finally {
    await folder.close();
  }
}
