/**
 * The entity registry's write-behind queue: the rows of state changes waiting for home.db.
 *
 * A report is on the fast path (a GPIO edge → update → event within about 2 ms), so the database
 * is written behind: the registry changes the entity in memory and emits at once, and the rows wait
 * here to be written in one transaction (write-behind; a synchronous write measured up to 97 ms at
 * WAL checkpoints). The queue is written
 * - on the next turn of the event loop (setImmediate) after the first change,
 * - but at most once per {@link WRITE_BEHIND_DEFAULTS} flushIntervalMs (100 ms), so a burst
 *   becomes one transaction instead of one per tick, unless flushBatch changes (200) are waiting;
 *   such a write takes at most flushBatch history rows (the rest follow on the next turns), so it
 *   holds the event loop briefly (200 rows took about 1 ms on the development machine), never as
 *   long as a backlog would,
 * - and before every read of the database (the registry's history(), maintain()) and at its stop(),
 *   so a caller never misses its own write (register() restoring a stored state takes a waiting row
 *   from the queue).
 * A write that fails (disk full, database closed) is logged with the entity ids and the queue is
 * kept and retried (after retryMs, doubling up to a minute); the edge path never waits for it.
 * The cool-down keeps a process alive until it has written (at most flushIntervalMs); a retry
 * does not (a database that keeps failing must not keep a process from exiting).
 * While it fails, at most maxPendingHistory history rows wait: beyond that the oldest are dropped,
 * counted in one error log per write attempt. A process that dies without stop() loses what still
 * waits, normally the changes of the last flush interval (a power cut with synchronous NORMAL may
 * lose a little more).
 *
 * These limits are constants, not settings: they trade memory against how much a crash loses,
 * which the owner has no reason to tune; tests and benchmarks pass their own.
 */
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError } from '../shared/errors.js';
import type { EntityInfo, EntityState } from './types.js';

/** How the queue of unwritten changes is written (see the module comment). */
export interface WriteBehindLimits {
  /** Least time between two writes, in ms; 0 writes on every turn of the event loop that changed something. */
  flushIntervalMs: number;
  /**
   * Changes waiting that are written on the next turn even within the interval; also the most
   * history rows one write of the timers takes (the rest follow on the next turns), so a backlog
   * never holds the event loop long. flush() writes everything at once.
   */
  flushBatch: number;
  /** History rows waiting at most while writes fail; beyond, the oldest are dropped. */
  maxPendingHistory: number;
  /** Wait before the first retry of a failed write, in ms; it doubles up to {@link MAX_RETRY_MS}. */
  retryMs: number;
}

export const WRITE_BEHIND_DEFAULTS: Readonly<WriteBehindLimits> = {
  flushIntervalMs: 100,
  // About 1 ms of writing (5 µs a row measured on the loaded 2-core development machine).
  flushBatch: 200,
  // About 100 bytes each: 2 MB while the database refuses writes.
  maxPendingHistory: 20_000,
  retryMs: 1000,
};
export const MAX_RETRY_MS = 60_000;

/** One write of the queue, as {@link EntityWriteQueueOptions.onFlush} sees it. */
export interface FlushReport {
  /** Entities rows written. */
  entities: number;
  /** History rows written. */
  history: number;
  /** How long the transaction held the event loop (the injected clock's monotonic ms). */
  ms: number;
}

/** An entity whose row waits: written as it is when written, not as it was when queued. */
export interface QueuedEntity {
  readonly info: EntityInfo;
  /** last_updated moved without a change and is not yet written; cleared once its row is written. */
  touched: boolean;
}

/** A history row waiting to be written (serialised then, not on the fast path). */
export interface PendingHistory {
  entity_id: string;
  at: number;
  state: EntityState;
}

export interface EntityWriteQueueOptions {
  /**
   * Writes the rows in one transaction. It may prepare the statements on first use, and whatever
   * it throws counts as a refused write (logged, the queue kept, retried).
   */
  write: (entities: readonly QueuedEntity[], history: readonly PendingHistory[]) => void;
  log: Logger;
  clock: Clock;
  /** Overrides of {@link WRITE_BEHIND_DEFAULTS} (tests, benchmarks). */
  limits?: Partial<WriteBehindLimits>;
  /** Called after each stored batch, with what it held (tests and benchmarks observe the transactions). */
  onFlush?: (report: FlushReport) => void;
}

/** Entity ids named in one failed-write log line at most. */
const LOGGED_IDS = 20;

export class EntityWriteQueue {
  readonly #options: EntityWriteQueueOptions;
  readonly #limits: WriteBehindLimits;
  /** Entities whose row is to be written, by id; a re-registration replaces its predecessor. */
  readonly #dirty = new Map<string, QueuedEntity>();
  /** History rows in report order (over all entities). */
  #pendingHistory: PendingHistory[] = [];
  /** Changes queued since the last write (for flushBatch). */
  #queued = 0;
  /** History rows dropped since the last log line. */
  #dropped = 0;
  #immediate: NodeJS.Immediate | undefined;
  /** Runs while the last write is younger than flushIntervalMs; it writes what came meanwhile (and keeps the process alive until then). */
  #cooldown: NodeJS.Timeout | undefined;
  /** Set after a failed write: the next try (changes do not schedule writes meanwhile); unref'd. */
  #retry: NodeJS.Timeout | undefined;
  /** The wait of the scheduled retry, and of the next one (doubling after each failure). */
  #retryDelay = 0;
  #retryMs: number;

  constructor(options: EntityWriteQueueOptions) {
    this.#options = options;
    this.#limits = { ...WRITE_BEHIND_DEFAULTS, ...options.limits };
    this.#retryMs = this.#limits.retryMs;
  }

  /** Queues the entity's row and, when `historyAt` is given, a history row of its state now; never writes here. */
  add(entity: QueuedEntity, historyAt: number | undefined): void {
    this.#dirty.set(entity.info.entity_id, entity);
    if (historyAt !== undefined) {
      this.#pendingHistory.push({ entity_id: entity.info.entity_id, at: historyAt, state: entity.info.state });
      if (this.#pendingHistory.length > this.#limits.maxPendingHistory) {
        // A tenth at once: shifting one row per update is linear in the queue, on the hot path.
        const excess = Math.ceil(this.#limits.maxPendingHistory / 10);
        this.#pendingHistory.splice(0, excess);
        this.#dropped += excess;
      }
    }
    this.#queued++;
    this.#scheduleWrite();
  }

  /** The entity whose row waits under this id (newer than the database's row), or undefined. */
  waitingEntity(entityId: string): QueuedEntity | undefined {
    return this.#dirty.get(entityId);
  }

  /** History rows of an entity still waiting (a refused write keeps them), `from`..`to` inclusive, oldest first. */
  waitingHistory(entityId: string, from: number, to: number): PendingHistory[] {
    return this.#pendingHistory.filter((r) => r.entity_id === entityId && r.at >= from && r.at <= to);
  }

  /**
   * Writes the queued changes now, in one transaction. Returns false when the write failed: it is
   * logged, the queue is kept and a retry is scheduled.
   */
  flush(): boolean {
    return this.#write(Number.POSITIVE_INFINITY);
  }

  /** Writes everything waiting and the rows of the `touched` among `entities`, then ends the timers. */
  stop(entities: Iterable<QueuedEntity>): void {
    for (const entity of entities) if (entity.touched) this.#dirty.set(entity.info.entity_id, entity);
    this.flush();
    clearTimeout(this.#cooldown);
    clearTimeout(this.#retry);
    this.#cooldown = undefined;
    this.#retry = undefined;
    this.#retryMs = this.#limits.retryMs;
  }

  /** Writes every waiting entities row and at most `maxHistory` of the oldest waiting history rows. */
  #write(maxHistory: number): boolean {
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    if (!this.#waiting()) return true;
    const entities = [...this.#dirty.values()];
    const all = this.#pendingHistory;
    const history = all.length > maxHistory ? all.slice(0, maxHistory) : all;
    const { clock } = this.#options;
    const started = clock.monotonic();
    try {
      this.#options.write(entities, history);
    } catch (error) {
      this.#writeFailed(error, entities, history);
      return false;
    }
    const ms = clock.monotonic() - started;
    // The transaction ran synchronously: nothing was queued meanwhile.
    this.#dirty.clear();
    if (history === all) this.#pendingHistory = [];
    else all.splice(0, history.length);
    this.#queued = this.#pendingHistory.length;
    for (const entity of entities) entity.touched = false;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#retryMs = this.#limits.retryMs;
    this.#reportDropped();
    this.#startCooldown();
    this.#scheduleWrite();
    this.#options.onFlush?.({ entities: entities.length, history: history.length, ms });
    return true;
  }

  #waiting(): boolean {
    return this.#dirty.size > 0 || this.#pendingHistory.length > 0;
  }

  /** The next turn of the loop writes, unless a write is due anyway (a retry, the cool-down's end) and the batch is not full. */
  #scheduleWrite(): void {
    if (this.#immediate !== undefined || this.#retry !== undefined || !this.#waiting()) return;
    if (this.#cooldown !== undefined && this.#queued < this.#limits.flushBatch) return;
    this.#immediate = setImmediate(this.#writeBatch);
  }

  readonly #writeBatch = (): void => {
    this.#immediate = undefined;
    this.#write(this.#limits.flushBatch);
  };

  #startCooldown(): void {
    clearTimeout(this.#cooldown);
    this.#cooldown = undefined;
    if (this.#limits.flushIntervalMs <= 0) return;
    this.#cooldown = setTimeout(() => {
      this.#cooldown = undefined;
      if (this.#retry === undefined) this.#write(this.#limits.flushBatch);
    }, this.#limits.flushIntervalMs);
  }

  #writeFailed(error: unknown, entities: readonly QueuedEntity[], history: readonly PendingHistory[]): void {
    if (this.#retry === undefined) {
      this.#retryDelay = this.#retryMs;
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.#write(this.#limits.flushBatch);
      }, this.#retryDelay);
      this.#retry.unref();
      this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    }
    const ids = [...new Set([...entities.map((e) => e.info.entity_id), ...history.map((r) => r.entity_id)])];
    const named = ids.slice(0, LOGGED_IDS);
    this.#options.log.error(
      { err: describeError(error), entity_ids: named, entities: ids.length, history_rows: history.length, retry_ms: this.#retryDelay },
      `could not store the states of ${named.join(', ')}${ids.length > named.length ? ` and ${ids.length - named.length} more` : ''}: kept in memory, tried again`,
    );
    this.#reportDropped();
  }

  #reportDropped(): void {
    if (this.#dropped === 0) return;
    const cap = this.#limits.maxPendingHistory;
    this.#options.log.error(
      { dropped: this.#dropped, max_pending: cap },
      `dropped the ${this.#dropped} oldest state history rows: more than ${cap} waited for the database`,
    );
    this.#dropped = 0;
  }
}
