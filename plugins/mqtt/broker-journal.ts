/**
 * The embedded broker's state on disk, so that retained messages, persistent sessions and their
 * queued messages survive a restart of HomeAgent (aedes itself keeps them only in memory).
 *
 * Two kinds of file in the broker's folder:
 *   state.json                 a snapshot of the whole state and the generation it starts
 *   journal-<generation>.jsonl  every change since that snapshot, one JSON object a line
 *
 * Changes are appended in batches: what arrives while one batch is written goes into the next,
 * so a burst costs one write (and one fdatasync when a caller waits for it) per batch, not per
 * message. When the journal has grown past the snapshot's size (and at every start and stop) the
 * state is rewritten as a new snapshot of the next generation (temporary file, fsync, rename, fsync
 * of the folder) and the old journal is deleted: the files stay within about twice the state's size
 * plus {@link MIN_COMPACT_BYTES}. A crash between the rename and the delete leaves a stale journal,
 * which the next start recognises by its generation and deletes.
 *
 * A torn last line (power cut in the middle of a write) is dropped with a warning. Anything else
 * that cannot be read is corrupt: the files are moved aside (`*.corrupt-<time>`, the newest
 * {@link KEPT_CORRUPT_SETS} sets kept for inspection), the error is logged and the broker starts
 * empty. Refusing to start instead would make the broker fail at every restart (a crash loop) for
 * the sake of retained messages and queues that are by nature replaceable.
 */
import { type FileHandle, mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../src/sdk/index.js';

export const SNAPSHOT_FILE = 'state.json';
const SNAPSHOT_FORMAT = 'homeagent-mqtt-broker-state';
const SNAPSHOT_VERSION = 1;
/** Below this the journal is never compacted: rewriting a small state for every few changes would cost more than it saves. */
export const MIN_COMPACT_BYTES = 1024 * 1024;
const KEPT_CORRUPT_SETS = 3;
/** Buffers in JSON; a key no MQTT field or property uses. */
const BUFFER_TAG = '__ha_buffer_b64';

const JOURNAL_NAME = /^journal-(\d+)\.jsonl$/;
const journalFile = (generation: number) => `journal-${generation}.jsonl`;

/** What was on disk; `entries` are the journal lines after the snapshot, in order. */
export interface JournalContents {
  state: unknown;
  entries: unknown[];
}

export class JournalCorruptError extends Error {
  override readonly name = 'JournalCorruptError';
}

export interface BrokerJournalOptions {
  dir: string;
  log: Logger;
  /** The whole state as a JSON-able value, taken synchronously when a snapshot is written. */
  snapshot: () => unknown;
  /** Default {@link MIN_COMPACT_BYTES}. */
  minCompactBytes?: number;
}

interface Batch {
  lines: string[];
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

export class BrokerJournal {
  readonly #dir: string;
  readonly #log: Logger;
  readonly #snapshot: () => unknown;
  readonly #minCompactBytes: number;
  #generation = 0;
  #handle: FileHandle | undefined;
  #journalBytes = 0;
  #snapshotBytes = 0;
  #pending: Batch = { lines: [], waiters: [] };
  #draining: Promise<void> | undefined;
  /** Set after a failed write (the journal may end in half a line): the next batch is a full snapshot instead. */
  #snapshotDue = false;
  #closed = false;

  constructor(options: BrokerJournalOptions) {
    this.#dir = options.dir;
    this.#log = options.log;
    this.#snapshot = options.snapshot;
    this.#minCompactBytes = options.minCompactBytes ?? MIN_COMPACT_BYTES;
  }

  /**
   * Reads what the last run left. Throws {@link JournalCorruptError} when it cannot be read (the
   * caller then calls {@link quarantine}); a missing folder or files are an empty state.
   */
  async read(): Promise<JournalContents> {
    await mkdir(this.#dir, { recursive: true });
    const snapshotText = await readIfExists(join(this.#dir, SNAPSHOT_FILE));
    let state: unknown;
    if (snapshotText !== undefined) {
      const parsed = parseJson(snapshotText, SNAPSHOT_FILE) as Record<string, unknown> | null;
      if (typeof parsed !== 'object' || parsed === null || parsed.format !== SNAPSHOT_FORMAT || !Number.isSafeInteger(parsed.generation))
        throw new JournalCorruptError(`${SNAPSHOT_FILE} is not a broker state file`);
      if (parsed.version !== SNAPSHOT_VERSION)
        throw new JournalCorruptError(`${SNAPSHOT_FILE} has version ${String(parsed.version)}, this HomeAgent reads ${SNAPSHOT_VERSION}`);
      this.#generation = parsed.generation as number;
      this.#snapshotBytes = snapshotText.length;
      state = parsed.state;
    }
    const name = journalFile(this.#generation);
    const journalText = (await readIfExists(join(this.#dir, name))) ?? '';
    const lines = journalText.split('\n');
    const torn = lines.pop();
    if (torn !== undefined && torn !== '')
      this.#log.warn({ file: name, bytes: torn.length }, 'broker journal ends in half a line (interrupted write); that change is dropped');
    const entries = lines.map((line, index) => parseJson(line, `${name} line ${index + 1}`));
    return { state, entries };
  }

  /** Moves the unreadable files aside so that the broker can start empty; returns the new names. */
  async quarantine(reason: string): Promise<string[]> {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const moved: string[] = [];
    for (const name of await this.#ownFiles()) {
      const target = `${name}.corrupt-${stamp}`;
      await rename(join(this.#dir, name), join(this.#dir, target));
      moved.push(target);
    }
    this.#generation = 0;
    this.#snapshotBytes = 0;
    this.#log.error(
      { dir: this.#dir, moved_to: moved, reason },
      'the embedded broker state could not be read; moved aside, starting without retained messages and sessions',
    );
    await this.#pruneCorrupt();
    return moved;
  }

  /** Starts a new generation from the current state; after this, changes may be appended. */
  async begin(): Promise<void> {
    await this.#writeSnapshot();
    for (const name of await readdir(this.#dir)) {
      const match = JOURNAL_NAME.exec(name);
      if (match && Number(match[1]) !== this.#generation) await unlink(join(this.#dir, name)).catch(() => {});
      if (name === `${SNAPSHOT_FILE}.tmp`) await unlink(join(this.#dir, name)).catch(() => {});
    }
  }

  /** Appends one change; written with the next batch. Failures are logged (and heal with the next snapshot). */
  add(entry: unknown): void {
    if (this.#closed) return;
    this.#pending.lines.push(`${encodeJson(entry)}\n`);
    this.#kick();
  }

  /** Appends one change and resolves once it is on the disk (fdatasync); rejects when it could not be written. */
  addAndSync(entry: unknown): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#pending.lines.push(`${encodeJson(entry)}\n`);
    const done = new Promise<void>((resolve, reject) => this.#pending.waiters.push({ resolve, reject }));
    this.#kick();
    return done;
  }

  /** Resolves when everything added so far is written. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /** Writes everything, then a final snapshot (so the next start reads one file), and closes. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    try {
      await this.#writeSnapshot();
    } catch (error) {
      this.#log.error({ err: error, dir: this.#dir }, 'the embedded broker state could not be saved at stop');
    }
    await this.#handle?.close();
    this.#handle = undefined;
  }

  #kick(): void {
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
      if (this.#pending.lines.length > 0) this.#kick();
    });
  }

  async #drain(): Promise<void> {
    // Let the changes made in this tick join the batch.
    await Promise.resolve();
    while (this.#pending.lines.length > 0) {
      const batch = this.#pending;
      this.#pending = { lines: [], waiters: [] };
      const text = batch.lines.join('');
      try {
        const grown = this.#journalBytes + text.length > Math.max(this.#minCompactBytes, this.#snapshotBytes);
        // The snapshot is taken now, synchronously: it holds exactly the changes in this batch and before.
        if (this.#snapshotDue || grown) await this.#writeSnapshot();
        else {
          const handle = await this.#journalHandle();
          await handle.write(text);
          if (batch.waiters.length > 0) await handle.datasync();
          this.#journalBytes += text.length;
        }
        for (const waiter of batch.waiters) waiter.resolve();
      } catch (error) {
        this.#snapshotDue = true;
        this.#log.error({ err: error, dir: this.#dir }, 'the embedded broker could not write its state');
        for (const waiter of batch.waiters) waiter.reject(error);
      }
    }
  }

  async #journalHandle(): Promise<FileHandle> {
    this.#handle ??= await open(join(this.#dir, journalFile(this.#generation)), 'a');
    return this.#handle;
  }

  /** The state as snapshot of the next generation, atomically; then the old journal goes. */
  async #writeSnapshot(): Promise<void> {
    const generation = this.#generation + 1;
    const text = encodeJson({ format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, generation, state: this.#snapshot() });
    const path = join(this.#dir, SNAPSHOT_FILE);
    const temporary = `${path}.tmp`;
    const file = await open(temporary, 'w');
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
    await syncFolder(this.#dir);
    const previous = this.#generation;
    await this.#handle?.close();
    this.#handle = undefined;
    this.#generation = generation;
    this.#snapshotBytes = text.length;
    this.#journalBytes = 0;
    this.#snapshotDue = false;
    await unlink(join(this.#dir, journalFile(previous))).catch(() => {});
  }

  async #ownFiles(): Promise<string[]> {
    return (await readdir(this.#dir)).filter(
      (name) => name === SNAPSHOT_FILE || name === `${SNAPSHOT_FILE}.tmp` || JOURNAL_NAME.test(name),
    );
  }

  /** Keeps the newest few sets of moved-aside files; repeated corruption must not fill the disk. */
  async #pruneCorrupt(): Promise<void> {
    const stamps = new Map<string, string[]>();
    for (const name of await readdir(this.#dir)) {
      const stamp = /\.corrupt-(.+)$/.exec(name)?.[1];
      if (stamp === undefined) continue;
      stamps.set(stamp, [...(stamps.get(stamp) ?? []), name]);
    }
    const old = [...stamps.keys()].sort().slice(0, -KEPT_CORRUPT_SETS);
    for (const stamp of old) for (const name of stamps.get(stamp) ?? []) await unlink(join(this.#dir, name)).catch(() => {});
  }
}

/** JSON with Buffers (payloads, MQTT 5 binary properties) as base64. */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value, function replacer(this: Record<string, unknown>, key, converted) {
    const original = this[key];
    return original instanceof Uint8Array ? { [BUFFER_TAG]: Buffer.from(original).toString('base64') } : converted;
  });
}

export function decodeJson(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const encoded = (value as Record<string, unknown>)[BUFFER_TAG];
      if (typeof encoded === 'string' && Object.keys(value).length === 1) return Buffer.from(encoded, 'base64');
    }
    return value;
  });
}

function parseJson(text: string, where: string): unknown {
  try {
    return decodeJson(text);
  } catch (error) {
    throw new JournalCorruptError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Makes a rename durable (the folder entry itself); not supported everywhere, hence best effort. */
async function syncFolder(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // some file systems refuse fsync on a directory; the rename is still atomic
  } finally {
    await handle?.close();
  }
}
