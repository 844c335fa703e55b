/**
 * A bounded JSON-lines record of activations and near misses (<plugin data dir>/activations.jsonl),
 * so that someone tuning the wake phrase, the wake word threshold or the refractory period can see
 * what was heard and why it was or was not taken. Appending only adds a line; once the file holds
 * twice the limit it is rewritten atomically with the newest entries, so the cost of the bound is
 * paid rarely. The log is a tuning aid: a corrupt line is skipped and a failed write never reaches
 * the voice pipeline.
 */
import { appendFile, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ActivationEntry, ActivationMethod } from '../../../src/sdk/api.js';

export const ACTIVATION_LOG_FILE = 'activations.jsonl';
/** A record, so that a method added to ActivationMethod but not here does not compile (its lines would not be read back). */
const METHODS: Record<ActivationMethod, true> = { wake_phrase: true, wake_word: true, push_to_talk: true };

export type NewActivationEntry = Omit<ActivationEntry, 'at'> & { at?: string };

export const MAX_HEARD_CHARS = 200;
const MAX_TEXT_CHARS = 200;

export interface ActivationLogOptions {
  /** The plugin's data directory; the log is {@link ACTIVATION_LOG_FILE} in it. */
  dir: string;
  /** Entries to keep (plugin.voice.activation.log_entries); 0 writes nothing. Read on every append. */
  maxEntries(): number;
  now?(): Date;
}

export class ActivationLog {
  readonly file: string;
  readonly #options: ActivationLogOptions;
  /** Lines in the file as far as this log knows; undefined until counted. */
  #lines: number | undefined;
  /** Writes and compactions run one at a time, in call order. */
  #queue: Promise<void> = Promise.resolve();

  constructor(options: ActivationLogOptions) {
    this.#options = options;
    this.file = join(options.dir, ACTIVATION_LOG_FILE);
  }

  /** Adds an entry; resolves once written. Never rejects: a log that cannot be written returns the error for a status line. */
  append(entry: NewActivationEntry): Promise<Error | undefined> {
    const result = this.#queue
      .then(() => this.#append(entry))
      .then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      );
    this.#queue = result.then(() => undefined);
    return result;
  }

  /** The newest `limit` entries, newest first; corrupt lines are skipped. */
  async recent(limit: number): Promise<ActivationEntry[]> {
    if (!(limit > 0)) return [];
    await this.#queue;
    const entries = await readEntries(this.file);
    return entries.slice(-limit).reverse();
  }

  async #append(entry: NewActivationEntry): Promise<void> {
    const max = this.#options.maxEntries();
    if (max <= 0) return;
    let line = `${JSON.stringify(clean(entry, this.#options.now?.() ?? new Date()))}\n`;
    if (this.#lines === undefined) {
      await mkdir(this.#options.dir, { recursive: true });
      const found = await countLines(this.file);
      this.#lines = found.lines;
      // A line cut off by a crash must not swallow the new one.
      if (!found.terminated) line = `\n${line}`;
    }
    await appendFile(this.file, line, 'utf8');
    this.#lines++;
    if (this.#lines > 2 * max) await this.#compact(max);
  }

  /** Rewrites the file with the newest `max` entries: temp file, fsync, rename, so a crash leaves the old or the new. */
  async #compact(max: number): Promise<void> {
    const keep = (await readEntries(this.file)).slice(-max);
    const temp = `${this.file}.${process.pid}.tmp`;
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(keep.map((e) => `${JSON.stringify(e)}\n`).join(''), 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, this.file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    this.#lines = keep.length;
  }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max);
}

/** Only the known fields, in a fixed order, texts clipped. */
function clean(entry: NewActivationEntry, now: Date): ActivationEntry {
  const out: ActivationEntry = { at: entry.at ?? now.toISOString(), method: entry.method, accepted: entry.accepted };
  if (entry.reason !== undefined) out.reason = clip(entry.reason, MAX_TEXT_CHARS);
  if (entry.score !== undefined && Number.isFinite(entry.score)) out.score = Math.round(entry.score * 1e4) / 1e4;
  if (entry.phrase !== undefined) out.phrase = clip(entry.phrase, MAX_TEXT_CHARS);
  if (entry.heard !== undefined) out.heard = clip(entry.heard, MAX_HEARD_CHARS);
  if (entry.model !== undefined) out.model = clip(entry.model, MAX_TEXT_CHARS);
  return out;
}

function isEntry(value: unknown): value is ActivationEntry {
  if (typeof value !== 'object' || value === null) return false;
  const e = value as Record<string, unknown>;
  return (
    typeof e.at === 'string' &&
    typeof e.accepted === 'boolean' &&
    typeof e.method === 'string' &&
    Object.hasOwn(METHODS, e.method) &&
    (e.score === undefined || typeof e.score === 'number')
  );
}

async function readEntries(file: string): Promise<ActivationEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const entries: ActivationEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isEntry(value)) entries.push(value);
    } catch {
      // A line cut by a crash or edited by hand: the rest of the log still counts.
    }
  }
  return entries;
}

/** Lines already in the file (at most about twice the limit, so reading it once is cheap). */
async function countLines(file: string): Promise<{ lines: number; terminated: boolean }> {
  try {
    const text = await readFile(file, 'utf8');
    return { lines: text.split('\n').filter((line) => line !== '').length, terminated: text === '' || text.endsWith('\n') };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: 0, terminated: true };
    throw error;
  }
}
