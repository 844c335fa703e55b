/**
 * The raw conversation log: every turn as one JSON line, in files rotated by size and age and
 * deleted after the retention period (7 days by default). It is the untouched record that
 * extraction can be re-run on; memory itself never depends on it, so a failed write is logged and
 * the turn goes on. The one exception to "untouched": an event the household tells memory to forget
 * is cut out of every file, so its words do not outlive the forget by a week.
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';

export const DEFAULT_LOG_FILE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_LOG_FILE_AGE_MS = 24 * 3600 * 1000;
export const DEFAULT_LOG_RETENTION_MS = 7 * 24 * 3600 * 1000;

export interface ConversationRecord {
  /** `user`, `assistant`, `tool`, `system`. */
  role: string;
  content: string;
  /** Default: now. */
  timestamp?: number;
  session?: string;
  channel?: string;
  peer?: string;
  /** The context event of the turn. */
  event_id?: string;
  /** For tool records. */
  tool?: string;
}

export interface ConversationLogOptions {
  /** e.g. `<data>/memory/raw`; created at start. */
  directory: string;
  clock: Clock;
  log: Logger;
  /** A file is closed before it would grow past this. Default 8 MiB. */
  maxFileBytes?: number;
  /** A file is closed once it is this old. Default 24 h. */
  maxFileAgeMs?: number;
  /** Files whose last record is older than this are deleted. Default 7 days. */
  retentionMs?: number;
}

export interface LogFile {
  name: string;
  /** When the file was started (ms). */
  started_at: number;
  bytes: number;
}

/** What {@link ConversationLog.forgetEvent} removed. */
export interface ForgottenRecords {
  files_rewritten: number;
  records_removed: number;
}

const FILE_NAME = /^conversation-(\d+)(?:-(\d+))?\.jsonl$/;
/**
 * The copy a forget writes next to a log file before renaming it over the file. Not a log file name,
 * so files() never lists one; one left by a crash is deleted at the next start.
 */
const REWRITE_SUFFIX = '.forget-tmp';
const NEWLINE = 0x0a;

interface OpenFile {
  name: string;
  fd: number;
  started_at: number;
  bytes: number;
}

export class ConversationLog implements Service {
  readonly name = 'conversation-log';
  readonly #options: ConversationLogOptions;
  #current: OpenFile | undefined;
  #running = false;

  constructor(options: ConversationLogOptions) {
    this.#options = options;
  }

  /** Where the log files are (memory.event reads them from here). */
  get directory(): string {
    return this.#options.directory;
  }

  async start(): Promise<void> {
    mkdirSync(this.#options.directory, { recursive: true });
    this.#running = true;
    this.#removeLeftoverRewrites();
    this.removeExpired();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#close();
  }

  /** Appends one record; false (and a logged error) when it could not be written or the log is stopped. */
  append(record: ConversationRecord): boolean {
    if (!this.#running) return false;
    const now = this.#options.clock.now();
    const line = `${JSON.stringify({ ...record, timestamp: new Date(record.timestamp ?? now).toISOString() })}\n`;
    const bytes = Buffer.byteLength(line);
    try {
      const file = this.#fileFor(bytes, now);
      writeSync(file.fd, line);
      file.bytes += bytes;
      return true;
    } catch (error) {
      this.#options.log.error({ error: describeError(error), directory: this.#options.directory }, 'cannot write the conversation log');
      this.#close();
      return false;
    }
  }

  /** The log files, oldest first. */
  files(): LogFile[] {
    let names: string[];
    try {
      names = readdirSync(this.#options.directory);
    } catch {
      return [];
    }
    return names
      .flatMap((name) => {
        const m = FILE_NAME.exec(name);
        if (!m) return [];
        return [{ name, started_at: Number(m[1]), seq: Number(m[2] ?? 0), bytes: sizeOf(join(this.#options.directory, name)) }];
      })
      .sort((a, b) => a.started_at - b.started_at || a.seq - b.seq)
      .map(({ name, started_at, bytes }) => ({ name, started_at, bytes }));
  }

  /**
   * Deletes files whose last record is older than the retention period. A file ends where the
   * next one starts, so the file being written is never deleted. Returns the deleted names.
   */
  removeExpired(): string[] {
    const cutoff = this.#options.clock.now() - (this.#options.retentionMs ?? DEFAULT_LOG_RETENTION_MS);
    const files = this.files();
    const removed: string[] = [];
    files.forEach((file, i) => {
      const next = files[i + 1];
      if (!next || next.started_at > cutoff || file.name === this.#current?.name) return;
      try {
        unlinkSync(join(this.#options.directory, file.name));
        removed.push(file.name);
      } catch (error) {
        this.#options.log.warn({ error: describeError(error), file: file.name }, 'cannot delete an expired conversation log');
      }
    });
    return removed;
  }

  /**
   * Removes every record of the event (its `event_id`) from every file, for `memory.forget`. Each
   * file that holds one is replaced atomically by a copy without those lines (temp file in the same
   * directory, fsync, rename, fsync of the directory); other files are not touched, and every other
   * line keeps its exact bytes, malformed ones included (not ours to judge). Works whether the log
   * is running or not. Synchronous on purpose: no append can slip in between reading a file and
   * replacing it. When a file cannot be rewritten the others are still done, the failed one stays
   * as it was, and HA_ERR_MEMORY_RAW_LOG names it.
   */
  forgetEvent(eventId: string): ForgottenRecords {
    // The writer's descriptor would point at the replaced inode; the next append reopens by name.
    this.#close();
    const result: ForgottenRecords = { files_rewritten: 0, records_removed: 0 };
    const failed: string[] = [];
    for (const file of this.files()) {
      try {
        const removed = this.#rewriteWithout(file.name, eventId);
        if (removed > 0) {
          result.files_rewritten++;
          result.records_removed += removed;
        }
      } catch (error) {
        // Deleted by someone else since it was listed: its records are gone with it.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        this.#options.log.error(
          { error: describeError(error), file: file.name, event_id: eventId },
          'cannot remove a forgotten event from the conversation log; the file is left as it was',
        );
        failed.push(file.name);
      }
    }
    if (failed.length > 0) {
      throw new HomeAgentError(
        'HA_ERR_MEMORY_RAW_LOG',
        `the raw conversation log could not be rewritten without event ${JSON.stringify(eventId)}: ${failed.join(', ')} in ${this.#options.directory} still hold its records (see the daemon log); forget it again once the directory is writable`,
        { details: { ...result, failed_files: failed } },
      );
    }
    return result;
  }

  /** The number of the event's records removed from one file (0: the file was not touched). */
  #rewriteWithout(name: string, eventId: string): number {
    const path = join(this.#options.directory, name);
    const content = readFileSync(path);
    // A record's JSON holds the id exactly like this; a line without it cannot be the event's.
    const needle = Buffer.from(JSON.stringify(eventId));
    if (!content.includes(needle)) return 0;
    const kept: Buffer[] = [];
    let removed = 0;
    let malformed = 0;
    for (let start = 0; start < content.length; ) {
      const newline = content.indexOf(NEWLINE, start);
      const end = newline < 0 ? content.length : newline + 1;
      const line = content.subarray(start, end);
      start = end;
      if (!line.includes(needle)) {
        kept.push(line);
        continue;
      }
      const record = parseRecord(line);
      if (record?.event_id === eventId) {
        removed++;
        continue;
      }
      if (record === undefined) malformed++;
      kept.push(line);
    }
    if (malformed > 0) {
      this.#options.log.warn(
        { file: name, event_id: eventId, lines: malformed },
        'malformed lines of the conversation log mention a forgotten event; they are left as they are',
      );
    }
    if (removed > 0) replaceFile(path, Buffer.concat(kept), this.#options.log);
    return removed;
  }

  /** Copies a forget wrote but a crash kept from renaming: the file they were made from is still there. */
  #removeLeftoverRewrites(): void {
    for (const name of readdirSync(this.#options.directory)) {
      if (!name.endsWith(REWRITE_SUFFIX)) continue;
      try {
        unlinkSync(join(this.#options.directory, name));
      } catch (error) {
        this.#options.log.warn({ error: describeError(error), file: name }, 'cannot delete a leftover conversation log rewrite');
      }
    }
  }

  #fileFor(bytes: number, now: number): OpenFile {
    const maxBytes = this.#options.maxFileBytes ?? DEFAULT_LOG_FILE_BYTES;
    const maxAge = this.#options.maxFileAgeMs ?? DEFAULT_LOG_FILE_AGE_MS;
    if (!this.#current) this.#current = this.#reopenLatest(now, maxBytes, maxAge);
    const current = this.#current;
    if (current && (now - current.started_at >= maxAge || (current.bytes > 0 && current.bytes + bytes > maxBytes))) {
      this.#close();
      this.#current = undefined;
    }
    if (!this.#current) {
      this.#current = this.#create(now);
      this.removeExpired();
    }
    return this.#current;
  }

  /** After a restart, keeps writing the newest file if it is still young and small enough. */
  #reopenLatest(now: number, maxBytes: number, maxAge: number): OpenFile | undefined {
    const latest = this.files().at(-1);
    if (!latest || now - latest.started_at >= maxAge || latest.bytes >= maxBytes) return undefined;
    return { ...latest, fd: openSync(join(this.#options.directory, latest.name), 'a', 0o600) };
  }

  #create(now: number): OpenFile {
    const taken = new Set(this.files().map((f) => f.name));
    let name = `conversation-${now}.jsonl`;
    for (let n = 1; taken.has(name); n++) name = `conversation-${now}-${n}.jsonl`;
    return { name, fd: openSync(join(this.#options.directory, name), 'a', 0o600), started_at: now, bytes: 0 };
  }

  #close(): void {
    if (!this.#current) return;
    try {
      closeSync(this.#current.fd);
    } catch {
      // Already closed after a write error.
    }
    this.#current = undefined;
  }
}

/**
 * Replaces the file with `data` so that a crash leaves either the old or the new content: a copy
 * next to it, synced, renamed over it, then the directory synced so the rename itself is durable.
 * On failure the copy is removed and the original is as it was.
 */
function replaceFile(path: string, data: Buffer, log: Logger): void {
  const temp = `${path}${REWRITE_SUFFIX}`;
  let fd: number | undefined;
  let created = false;
  try {
    fd = openSync(temp, 'w', 0o600);
    created = true;
    writeFileSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // The error below is the one to report.
      }
    }
    if (created) {
      try {
        unlinkSync(temp);
      } catch {
        // Deleted at the next start.
      }
    }
    throw error;
  }
  syncDirectory(dirname(path), log);
}

function syncDirectory(directory: string, log: Logger): void {
  try {
    const fd = openSync(directory, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    // The rename is done; only its durability across a power cut is in doubt.
    log.warn({ error: describeError(error), directory }, 'cannot sync the conversation log directory after a rewrite');
  }
}

function parseRecord(line: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
