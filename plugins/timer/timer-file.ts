/**
 * The pending timers on disk, so that they survive a restart. Every save writes a whole snapshot
 * atomically (temporary file, fsync, rename, fsync of the folder): a power cut on the Pi leaves
 * either the old or the new file, never half of one. A file that cannot be read is moved aside
 * with a log line and the plugin starts with no timers; it never fails the plugin.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isTrust, type Logger, type Trust } from '../../src/sdk/index.js';

/** What every stored timer has. Times are milliseconds since the Unix epoch. */
interface TimerFields {
  id: string;
  message: string;
  /** What the household calls it ("pizza"); absent when it was set without one. */
  name?: string;
  /** The length it was set for, after adjustments, in milliseconds. */
  duration_ms: number;
  set_at: number;
  /** Where the timer_set call came from, and the channel the expiry goes back to. */
  source: string;
  channel: string;
  /**
   * The trust the ringing input carries: the setting turn's, at most household (a reminder is not
   * the owner speaking now). Files written before it was kept load as untrusted.
   */
  trust: Trust;
}

/** A counting timer: it rings at fires_at. */
export interface RunningTimer extends TimerFields {
  fires_at: number;
}

/** A paused timer keeps the time it had left instead of a moment to ring, so it never rings while paused. */
export interface PausedTimer extends TimerFields {
  remaining_ms: number;
}

export type StoredTimer = RunningTimer | PausedTimer;

export function isPaused(timer: StoredTimer): timer is PausedTimer {
  return 'remaining_ms' in timer;
}

/**
 * Version 2 added name, duration_ms and paused timers; version 1 files load as running timers.
 * A version 1 daemon (after a rollback) skips paused timers as malformed and keeps the rest.
 */
const FILE_VERSION = 2;

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
      const timer = toStoredTimer(entry);
      if (timer) timers.push(timer);
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

/** The entry as a timer, filling in what version 1 did not store; undefined when it is malformed. */
function toStoredTimer(value: unknown): StoredTimer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as Record<string, unknown>;
  const { id, message, name, set_at, source, channel, fires_at, remaining_ms, duration_ms, trust } = entry;
  if (typeof id !== 'string' || id === '' || typeof message !== 'string') return undefined;
  if (!isTime(set_at) || typeof source !== 'string' || typeof channel !== 'string' || channel === '') return undefined;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) return undefined;
  if (trust !== undefined && !isTrust(trust)) return undefined;
  const fields = { id, message, ...(name === undefined ? {} : { name }), set_at, source, channel, trust: trust ?? 'untrusted' };
  const paused = remaining_ms !== undefined;
  if (paused === (fires_at !== undefined)) return undefined;
  if (paused) {
    if (!isTime(remaining_ms)) return undefined;
    return { ...fields, duration_ms: isTime(duration_ms) ? duration_ms : remaining_ms, remaining_ms };
  }
  if (!Number.isFinite(fires_at)) return undefined;
  const firesAt = fires_at as number;
  // Version 1 stored no length; the time between setting and ringing is what it was set for.
  return { ...fields, duration_ms: isTime(duration_ms) ? duration_ms : Math.max(0, firesAt - set_at), fires_at: firesAt };
}

/** A finite, non-negative number of milliseconds. */
function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
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
