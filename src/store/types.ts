/**
 * The narrow database interface the rest of the kernel codes against. better-sqlite3 satisfies it
 * structurally; only src/store imports the driver itself.
 */
export interface SqlRunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface SqlStatement {
  run(...params: unknown[]): SqlRunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface SqlDatabase {
  prepare(sql: string): SqlStatement;
  exec(sql: string): unknown;
  /** Wraps `fn` so that calling the result runs it in a transaction (rolled back if it throws). */
  transaction<T>(fn: () => T): () => T;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  readonly inTransaction: boolean;
}

/**
 * One schema step. `up` runs inside a transaction together with the bookkeeping row, so a step
 * either applies completely or not at all. Steps must not use statements SQLite refuses inside a
 * transaction (VACUUM, PRAGMA journal_mode).
 */
export interface Migration {
  version: number;
  name: string;
  up(db: SqlDatabase): void;
}

export type SynchronousMode = 'FULL' | 'NORMAL';

export interface DatabaseSpec {
  /** Short name used in status, logs and backups, e.g. `state` or `memory`. */
  name: string;
  /** Absolute path of the database file. */
  file: string;
  /**
   * FULL for data that must survive power loss once acknowledged (settings, plugin state, change
   * sets); NORMAL for high-volume data where losing the last moments on power loss is acceptable
   * (still durable across process crashes in WAL mode).
   */
  synchronous: SynchronousMode;
}
