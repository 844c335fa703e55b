/**
 * The last log lines kept in memory for `logs.recent` (the web page's log view). The ring is teed
 * off pino's destination, after pino has formatted and redacted each line, so the journal gets
 * exactly what it got before and the ring never sees a secret. Writing costs one array store per
 * line; lines are parsed only when someone reads them. A line over the byte limit is the one
 * exception: it is shortened at once into a smaller valid JSON record (the journal keeps it whole).
 */
import type { DestinationStream } from 'pino';

/** pino's level labels and numbers (the lines carry the label, see LogManager's formatter). */
export const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

export type RecentLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export interface RecentLinesOptions {
  /** core.log.recent_lines: lines kept; older ones are dropped. */
  lines: number;
  /** core.log.recent_line_bytes: a longer line is shortened. */
  lineBytes: number;
}

export interface RecentLinesFilter {
  /** Only lines at this level or above. */
  level?: RecentLevel;
  /** Only lines whose subsystem starts with this (`plugin` finds `plugin.cli`). */
  subsystem?: string;
  /** Only lines whose JSON text contains this, ignoring case. */
  q?: string;
  /** true: only audit records. */
  audit?: boolean;
  /** The newest matching lines at most. */
  limit: number;
}

export interface RecentLog {
  /** The matching records, newest last. */
  lines: Array<Record<string, unknown>>;
  /** Lines pushed out of the ring by newer ones since the start: older history is in the journal only. */
  dropped: number;
}

/** Longest text of one field in a shortened line. */
const FIELD_CHARS = 200;
/** Fields a shortened line keeps before any other. */
const FIRST_FIELDS = ['level', 'time', 'subsystem', 'audit', 'actor', 'action'];

export class RecentLines {
  readonly capacity: number;
  readonly lineBytes: number;
  readonly #ring: string[] = [];
  /** Where the next line goes once the ring is full. */
  #next = 0;
  #written = 0;

  constructor(options: RecentLinesOptions) {
    this.capacity = Math.max(0, Math.trunc(options.lines));
    // Room for the shortest shortened record (level, time and the truncation marker).
    this.lineBytes = Math.max(128, Math.trunc(options.lineBytes));
  }

  push(line: string): void {
    if (this.capacity === 0) return;
    const kept = fitsIn(line, this.lineBytes) ? line : shorten(line, this.lineBytes);
    if (this.#ring.length < this.capacity) this.#ring.push(kept);
    else {
      this.#ring[this.#next] = kept;
      this.#next = (this.#next + 1) % this.capacity;
    }
    this.#written++;
  }

  /** Lines kept now. */
  get size(): number {
    return this.#ring.length;
  }

  query(filter: RecentLinesFilter): RecentLog {
    const minLevel = filter.level === undefined ? undefined : LEVEL_VALUES[filter.level];
    const needle = filter.q?.toLowerCase();
    const structured = minLevel !== undefined || filter.subsystem !== undefined || filter.audit === true;
    const found: Array<Record<string, unknown>> = [];
    // Newest first, so a small limit reads (and parses) only the end of the ring.
    for (let i = this.#ring.length - 1; i >= 0 && found.length < filter.limit; i--) {
      const line = this.#ring[(this.#next + i) % this.#ring.length] as string;
      if (needle !== undefined && !line.toLowerCase().includes(needle)) continue;
      const record = parse(line);
      if (record === undefined) {
        // Not pino's JSON (a foreign destination): only shown when nothing structured is asked for.
        if (!structured) found.push({ raw: line.trimEnd() });
        continue;
      }
      if (minLevel !== undefined && (LEVEL_VALUES[String(record.level)] ?? 0) < minLevel) continue;
      if (filter.subsystem !== undefined && !(typeof record.subsystem === 'string' && record.subsystem.startsWith(filter.subsystem))) {
        continue;
      }
      if (filter.audit === true && record.audit !== true) continue;
      found.push(record);
    }
    return { lines: found.reverse(), dropped: this.#written - this.#ring.length };
  }
}

/**
 * A destination that keeps each line in `ring` and hands it on to `destination` unchanged. pino
 * calls only write() and flush(), so the real destination keeps its own sync or async behaviour
 * (and its flush at exit).
 */
export function teeDestination(ring: RecentLines, destination: DestinationStream): DestinationStream {
  const target = destination as DestinationStream & { flush?: (cb: (error?: Error) => void) => void };
  const tee: DestinationStream & { flush?: (cb: (error?: Error) => void) => void } = {
    write(line: string) {
      ring.push(line);
      return target.write(line);
    },
  };
  if (typeof target.flush === 'function') tee.flush = (cb) => target.flush?.(cb);
  return tee;
}

function fitsIn(line: string, maxBytes: number): boolean {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most lines are decided without counting.
  if (line.length * 3 <= maxBytes) return true;
  if (line.length > maxBytes) return false;
  return Buffer.byteLength(line) <= maxBytes;
}

function parse(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A line over the limit as a valid, smaller record: level, time, subsystem and audit fields
 * first, the message cut, then as many other fields (each cut) as fit; `truncated` and the
 * original size say that it was shortened.
 */
export function shorten(line: string, maxBytes: number): string {
  const record = parse(line) ?? { msg: line };
  const marker = { truncated: true, line_bytes: Buffer.byteLength(line) };
  // Multi-byte text can overflow even with the first fields alone: then everything is cut shorter.
  for (let chars = Math.max(16, Math.floor(maxBytes / 4)); chars >= 8; chars = Math.floor(chars / 2)) {
    let result: Record<string, unknown> = {};
    for (const key of [...FIRST_FIELDS, 'msg']) {
      if (key in record) result[key] = compact(record[key], key === 'msg' ? chars : Math.min(chars, FIELD_CHARS));
    }
    result = { ...result, ...marker };
    if (!fitsIn(serialized(result), maxBytes)) continue;
    for (const [key, value] of Object.entries(record)) {
      if (key in result) continue;
      const candidate = { ...result, [key]: compact(value, Math.min(chars, FIELD_CHARS)) };
      if (fitsIn(serialized(candidate), maxBytes)) result = candidate;
    }
    return serialized(result);
  }
  return serialized({ level: compact(record.level, 8), time: compact(record.time, 32), ...marker });
}

function serialized(record: Record<string, unknown>): string {
  return `${JSON.stringify(record)}\n`;
}

/** A field no longer than `max` characters: long text is cut, a large object becomes its cut JSON text. */
function compact(value: unknown, max: number = FIELD_CHARS): unknown {
  if (typeof value === 'string') return cutText(value, max);
  if (value === null || typeof value !== 'object') return value;
  const json = JSON.stringify(value);
  return json.length <= max ? value : cutText(json, max);
}

function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
