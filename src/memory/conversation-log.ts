/**
 * The raw conversation log: every turn as one JSON line, in files rotated by size and age and
 * deleted after the retention period (7 days by default). It is the untouched record that
 * extraction can be re-run on; memory itself never depends on it, so a failed write is logged and
 * the turn goes on.
 */
import { closeSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError } from '../shared/errors.js';
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

const FILE_NAME = /^conversation-(\d+)(?:-(\d+))?\.jsonl$/;

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

  async start(): Promise<void> {
    mkdirSync(this.#options.directory, { recursive: true });
    this.#running = true;
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

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
