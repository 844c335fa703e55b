/**
 * One connection per database file, with the pragmas, migrations, integrity check, corruption
 * recovery and online backup every HomeAgent database shares. The connection components get
 * turns a full disk or a refused write into HA_ERR_STORE_FULL / HA_ERR_STORE_WRITE naming the
 * database (write-failure.ts), so a failed write reaches its caller as a coded error.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { DatabaseSizes, Recovery } from '../api/status.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { DatabaseSpec, Migration, SqlDatabase, SqlStatement } from './types.js';
import { mapWriteFailure } from './write-failure.js';

export type { DatabaseSizes, Recovery };

export type StartupCheck = 'full' | 'quick' | 'off';

export interface OpenOptions {
  busyTimeoutMs: number;
  startupCheck: StartupCheck;
  log: Logger;
  clock: Clock;
}

const CORRUPTION_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE']);

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  component  TEXT    NOT NULL,
  version    INTEGER NOT NULL,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL,
  PRIMARY KEY (component, version)
) STRICT`;

export class ManagedDatabase {
  readonly spec: DatabaseSpec;
  readonly recovery: Recovery | undefined;
  readonly #db: BetterSqlite3.Database;
  readonly #guarded: SqlDatabase;
  readonly #clock: Clock;
  readonly #log: Logger;

  private constructor(spec: DatabaseSpec, db: BetterSqlite3.Database, recovery: Recovery | undefined, log: Logger, clock: Clock) {
    this.spec = spec;
    this.#db = db;
    this.#guarded = guardWrites(db, describeDatabase(spec));
    this.recovery = recovery;
    this.#log = log;
    this.#clock = clock;
  }

  /**
   * Opens (creating if needed) the database. A file that SQLite reports as corrupt, or that fails
   * the startup integrity check, is moved aside (never deleted) and replaced by an empty database;
   * the returned object's `recovery` says so. Other failures (permissions, disk) throw.
   */
  static open(spec: DatabaseSpec, options: OpenOptions): ManagedDatabase {
    mkdirSync(dirname(spec.file), { recursive: true });
    let recovery: Recovery | undefined;
    let db: BetterSqlite3.Database;
    try {
      db = connect(spec, options);
      let problem: string | undefined;
      try {
        problem = runCheck(db, options.startupCheck);
      } catch (error) {
        // The check itself can fail with SQLITE_CORRUPT; never leave this connection open on a file about to be moved aside.
        db.close();
        throw error;
      }
      if (problem) {
        db.close();
        throw Object.assign(new Error(problem), { code: 'SQLITE_CORRUPT' });
      }
    } catch (error) {
      if (!isCorruption(error)) {
        throw new HomeAgentError('HA_ERR_STORE_OPEN', `cannot open ${spec.name} database ${spec.file}: ${describeError(error)}`, {
          cause: error,
        });
      }
      const movedTo = moveAside(spec.file, `corrupt-${stamp(options.clock)}`);
      recovery = { reason: describeError(error), movedTo };
      options.log.error(
        { database: spec.name, file: spec.file, moved_to: movedTo, reason: recovery.reason },
        'database is corrupt: moved it aside and starting with an empty one',
      );
      db = connect(spec, options);
    }
    return new ManagedDatabase(spec, db, recovery, options.log, options.clock);
  }

  /** The connection, for the component that owns tables in this database; failed writes come out coded. */
  get db(): SqlDatabase {
    return this.#guarded;
  }

  /** Highest applied migration version of a component, 0 when none. */
  schemaVersion(component: string): number {
    this.#db.exec(MIGRATIONS_TABLE);
    const row = this.#db.prepare('SELECT MAX(version) AS v FROM schema_migrations WHERE component = ?').get(component) as {
      v: number | null;
    };
    return row.v ?? 0;
  }

  /**
   * Applies the pending migrations of one component, each in its own transaction with its
   * bookkeeping row. A failing step is rolled back and reported with the database, component,
   * version and cause; earlier steps stay applied. A database newer than the code is refused.
   */
  migrate(component: string, migrations: readonly Migration[]): { from: number; to: number } {
    migrations.forEach((m, index) => {
      if (m.version !== index + 1) {
        throw new HomeAgentError(
          'HA_ERR_STORE_MIGRATION',
          `${component} migrations must be numbered 1, 2, 3, ... in order; found ${m.version} at position ${index + 1}`,
        );
      }
    });
    const from = this.schemaVersion(component);
    const latest = migrations.length;
    if (from > latest) {
      throw new HomeAgentError(
        'HA_ERR_STORE_TOO_NEW',
        `${this.spec.name} database ${this.spec.file} has ${component} schema version ${from}, but this HomeAgent knows only up to ${latest}; it was written by a newer version. Restore a backup or upgrade HomeAgent.`,
      );
    }
    const record = this.#db.prepare('INSERT INTO schema_migrations (component, version, name, applied_at) VALUES (?, ?, ?, ?)');
    for (const m of migrations.slice(from)) {
      try {
        this.#db.transaction(() => {
          m.up(this.#db);
          record.run(component, m.version, m.name, new Date(this.#clock.now()).toISOString());
        })();
        this.#log.info({ database: this.spec.name, component, version: m.version, migration: m.name }, 'migration applied');
      } catch (error) {
        throw new HomeAgentError(
          'HA_ERR_STORE_MIGRATION',
          `${this.spec.name} database: migration ${component} ${m.version} (${m.name}) failed and was rolled back: ${describeError(error)}. The database stays at ${component} version ${m.version - 1}.`,
          { cause: error },
        );
      }
    }
    return { from, to: latest };
  }

  sizes(): DatabaseSizes {
    return { file_bytes: fileSize(this.spec.file), wal_bytes: fileSize(`${this.spec.file}-wal`) };
  }

  /**
   * Proves the database takes a write right now: commits a row and its removal in one
   * transaction, which leaves no row but makes SQLite append to the write-ahead log and sync it
   * like any other change. (A transaction rolled back before its commit writes nothing to the
   * disk, so it would pass on a full disk.) Throws HA_ERR_STORE_FULL when the disk is full,
   * HA_ERR_STORE_WRITE when the file became read-only or the disk fails, and SQLITE_BUSY when the
   * write lock cannot be had.
   */
  checkWritable(): void {
    this.#guarded.exec(MIGRATIONS_TABLE);
    const at = new Date(this.#clock.now()).toISOString();
    this.#guarded.transaction(() => {
      this.#guarded
        .prepare('INSERT INTO schema_migrations (component, version, name, applied_at) VALUES (?, ?, ?, ?)')
        .run(HEALTH_PROBE, 0, 'probe', at);
      this.#guarded.prepare('DELETE FROM schema_migrations WHERE component = ?').run(HEALTH_PROBE);
    })();
  }

  /**
   * Online backup through SQLite's backup API into `dest`, which must not exist yet. Written to a
   * temporary name, checked and then renamed, so a half-written backup never has the final name.
   */
  async backup(dest: string): Promise<{ file: string; bytes: number }> {
    if (existsSync(dest)) {
      throw new HomeAgentError('HA_ERR_STORE_BACKUP', `${dest} already exists; choose a new file name`);
    }
    const partial = join(dirname(dest), `.${basename(dest)}.partial-${process.pid}`);
    try {
      mkdirSync(dirname(dest), { recursive: true });
      await this.#db.backup(partial);
      // The copy inherits WAL mode; as a self-contained rollback-journal file, opening it (the check
      // below, a later restore) leaves no -wal/-shm companions behind.
      const copy = new BetterSqlite3(partial);
      try {
        copy.pragma('journal_mode = DELETE');
      } finally {
        copy.close();
      }
      const problem = checkFile(partial, 'quick');
      if (problem) throw new Error(`the written copy failed its integrity check: ${problem}`);
      fsyncFile(partial);
      renameSync(partial, dest);
      fsyncFile(dirname(dest));
    } catch (error) {
      if (existsSync(partial)) unlinkSync(partial);
      if (error instanceof HomeAgentError) throw error;
      throw new HomeAgentError('HA_ERR_STORE_BACKUP', `backup of ${this.spec.name} to ${dest} failed: ${describeError(error)}`, {
        cause: error,
      });
    }
    return { file: dest, bytes: fileSize(dest) };
  }

  /** False once closed. */
  get open(): boolean {
    return this.#db.open;
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

/** The component name of checkWritable's probe row (never committed for good). */
const HEALTH_PROBE = '_health';

/** `the memory database /var/lib/homeagent/memory.db`: how error messages name a database. */
function describeDatabase(spec: DatabaseSpec): string {
  return `the ${spec.name} database ${spec.file}`;
}

/**
 * The connection as components see it: each call that can write (a statement, exec, pragma, a
 * transaction with its COMMIT) maps a full disk or a refused write to a coded error naming the
 * database. Other errors (constraints, syntax) pass unchanged, so their codes stay checkable.
 */
function guardWrites(db: BetterSqlite3.Database, what: string): SqlDatabase {
  const guard = <T>(fn: () => T): T => mapWriteFailure(what, fn);
  return {
    prepare(sql: string): SqlStatement {
      const statement = guard(() => db.prepare(sql));
      return {
        run: (...params: unknown[]) => guard(() => statement.run(...params)),
        get: (...params: unknown[]) => guard(() => statement.get(...params)),
        all: (...params: unknown[]) => guard(() => statement.all(...params)),
      };
    },
    exec: (sql: string) => guard(() => db.exec(sql)),
    transaction<T>(fn: () => T): () => T {
      const run = db.transaction(fn);
      return () => guard(() => run());
    },
    pragma: (source: string, options?: { simple?: boolean }) => guard(() => db.pragma(source, options)),
    get inTransaction() {
      return db.inTransaction;
    },
  };
}

function connect(spec: DatabaseSpec, options: OpenOptions): BetterSqlite3.Database {
  const db = new BetterSqlite3(spec.file, { timeout: options.busyTimeoutMs });
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`could not switch to WAL journal mode (got ${String(mode)})`);
    // better-sqlite3 builds with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1 (NORMAL); durability is opt-in.
    db.pragma(`synchronous = ${spec.synchronous}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function runCheck(db: BetterSqlite3.Database, check: StartupCheck): string | undefined {
  if (check === 'off') return undefined;
  const rows = db.pragma(check === 'full' ? 'integrity_check' : 'quick_check') as Array<Record<string, string>>;
  const messages = rows.map((r) => Object.values(r)[0]);
  return messages.length === 1 && messages[0] === 'ok' ? undefined : messages.slice(0, 5).join('; ');
}

/** Opens a file read-only and runs an integrity check; returns the problem or undefined. */
export function checkFile(file: string, check: Exclude<StartupCheck, 'off'>): string | undefined {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    return runCheck(db, check);
  } catch (error) {
    return describeError(error);
  } finally {
    db?.close();
  }
}

function isCorruption(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && CORRUPTION_CODES.has(code);
}

/** Renames the file and its -wal/-shm companions to `<file>.<suffix>`; returns the new main path. */
export function moveAside(file: string, suffix: string): string {
  const target = `${file}.${suffix}`;
  for (const ext of ['', '-wal', '-shm']) {
    if (existsSync(file + ext)) renameSync(file + ext, target + ext);
  }
  fsyncFile(dirname(file));
  return target;
}

export function stamp(clock: Clock): string {
  return new Date(clock.now()).toISOString().replace(/[:.]/g, '-');
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
