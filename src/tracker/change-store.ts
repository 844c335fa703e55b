/**
 * Change sets of the plugins tree in the state database (synchronous=FULL: a change set recorded
 * or decided before a power cut must still be there after it, or the next start would not know
 * what it is rolling back). One row per change set, one per file it touched.
 */
import { HomeAgentError } from '../shared/errors.js';
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase } from '../store/types.js';
import type { ChangeFile, ChangeSet, ChangeStatus, ChangeSummary } from './change-types.js';

export const TRACKER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'change sets of the plugins tree',
    up(db) {
      db.exec(`
        CREATE TABLE change_sets (
          id          INTEGER PRIMARY KEY AUTOINCREMENT,
          actor       TEXT NOT NULL,
          tool        TEXT NOT NULL,
          channel     TEXT,
          task_id     TEXT,
          started_at  TEXT NOT NULL,
          finished_at TEXT NOT NULL,
          status      TEXT NOT NULL CHECK (status IN ('trial', 'committed', 'rolled_back')),
          plugins     TEXT NOT NULL,
          decided_at  TEXT,
          decided_by  TEXT,
          reason      TEXT,
          reverts     INTEGER
        ) STRICT;
        CREATE INDEX change_sets_status ON change_sets (status, id);
        CREATE TABLE change_files (
          change_set_id INTEGER NOT NULL REFERENCES change_sets (id) ON DELETE CASCADE,
          path          TEXT NOT NULL,
          op            TEXT NOT NULL CHECK (op IN ('add', 'modify', 'delete')),
          sha256_before TEXT,
          sha256_after  TEXT,
          kept          INTEGER NOT NULL CHECK (kept IN (0, 1)),
          PRIMARY KEY (change_set_id, path)
        ) STRICT;
      `);
    },
  },
];

/** A change set about to be stored (the database gives it its id). */
export type NewChangeSet = Omit<ChangeSet, 'id' | 'status' | 'decided_at' | 'decided_by' | 'reason'> & { task_id: string | null };

interface SetRow {
  id: number;
  actor: string;
  tool: string;
  channel: string | null;
  started_at: string;
  finished_at: string;
  status: ChangeStatus;
  plugins: string;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  reverts: number | null;
  file_count?: number;
}

interface FileRow {
  path: string;
  op: ChangeFile['op'];
  sha256_before: string | null;
  sha256_after: string | null;
  kept: number;
}

const SET_COLUMNS = 'id, actor, tool, channel, started_at, finished_at, status, plugins, decided_at, decided_by, reason, reverts';

export class ChangeStore {
  readonly #database: () => ManagedDatabase;
  #db: SqlDatabase | undefined;

  constructor(database: () => ManagedDatabase) {
    this.#database = database;
  }

  open(): void {
    const managed = this.#database();
    managed.migrate('tracker', TRACKER_MIGRATIONS);
    this.#db = managed.db;
  }

  /** Stores a change set on trial with its files, in one transaction; answers its id. */
  insert(set: NewChangeSet): number {
    const db = this.#require();
    return db.transaction(() => {
      const result = db
        .prepare(
          `INSERT INTO change_sets (actor, tool, channel, task_id, started_at, finished_at, status, plugins, reverts)
           VALUES (?, ?, ?, ?, ?, ?, 'trial', ?, ?)`,
        )
        .run(set.actor, set.tool, set.channel, set.task_id, set.started_at, set.finished_at, JSON.stringify(set.plugins), set.reverts);
      const id = Number(result.lastInsertRowid);
      const file = db.prepare(
        'INSERT INTO change_files (change_set_id, path, op, sha256_before, sha256_after, kept) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const f of set.files) file.run(id, f.path, f.op, f.sha256_before, f.sha256_after, f.kept ? 1 : 0);
      return id;
    })();
  }

  get(id: number): ChangeSet | undefined {
    const db = this.#require();
    const row = db.prepare(`SELECT ${SET_COLUMNS} FROM change_sets WHERE id = ?`).get(id) as SetRow | undefined;
    return row && this.#withFiles(row);
  }

  /** Newest first. */
  list(options: { limit: number; status?: ChangeStatus }): ChangeSummary[] {
    const where = options.status === undefined ? '' : 'WHERE s.status = ?';
    const params: unknown[] = options.status === undefined ? [] : [options.status];
    const rows = this.#require()
      .prepare(
        `SELECT s.*,
                (SELECT COUNT(*) FROM change_files f WHERE f.change_set_id = s.id) AS file_count
         FROM change_sets s ${where} ORDER BY s.id DESC LIMIT ?`,
      )
      .all(...params, options.limit) as SetRow[];
    return rows.map((row) => ({ ...summaryOf(row), file_count: row.file_count ?? 0 }));
  }

  /** Every change set in a status, oldest first. */
  withStatus(status: ChangeStatus): ChangeSet[] {
    const rows = this.#require().prepare(`SELECT ${SET_COLUMNS} FROM change_sets WHERE status = ? ORDER BY id`).all(status) as SetRow[];
    return rows.map((row) => this.#withFiles(row));
  }

  /** Marks change sets still on trial as decided; sets decided already are left as they are. */
  decide(ids: readonly number[], status: 'committed' | 'rolled_back', decision: { at: string; by: string; reason: string | null }): void {
    const db = this.#require();
    const update = db.prepare(
      "UPDATE change_sets SET status = ?, decided_at = ?, decided_by = ?, reason = ? WHERE id = ? AND status = 'trial'",
    );
    db.transaction(() => {
      for (const id of ids) update.run(status, decision.at, decision.by, decision.reason, id);
    })();
  }

  /**
   * Deletes decided change sets beyond the newest `keep` decided ones and those decided before
   * `before` (ISO); sets on trial always stay. Answers the ids deleted.
   */
  prune(keep: number, before: string): number[] {
    const db = this.#require();
    return db.transaction(() => {
      const doomed = db
        .prepare(
          `SELECT id FROM change_sets WHERE status != 'trial' AND (
             decided_at < ? OR id NOT IN (SELECT id FROM change_sets WHERE status != 'trial' ORDER BY id DESC LIMIT ?))
           ORDER BY id`,
        )
        .all(before, keep) as Array<{ id: number }>;
      const remove = db.prepare('DELETE FROM change_sets WHERE id = ?');
      for (const { id } of doomed) remove.run(id);
      return doomed.map((row) => row.id);
    })();
  }

  /** Every content hash a stored change set refers to (the kept contents to keep). */
  referencedHashes(): Set<string> {
    const rows = this.#require()
      .prepare(
        `SELECT sha256_before AS h FROM change_files WHERE sha256_before IS NOT NULL
         UNION SELECT sha256_after FROM change_files WHERE sha256_after IS NOT NULL`,
      )
      .all() as Array<{ h: string }>;
    return new Set(rows.map((row) => row.h));
  }

  #withFiles(row: SetRow): ChangeSet {
    const files = this.#require()
      .prepare('SELECT path, op, sha256_before, sha256_after, kept FROM change_files WHERE change_set_id = ? ORDER BY path')
      .all(row.id) as FileRow[];
    return { ...summaryOf(row), files: files.map((f) => ({ ...f, kept: f.kept === 1 })) };
  }

  #require(): SqlDatabase {
    if (!this.#db) throw new HomeAgentError('HA_ERR_INTERNAL', 'the change store is not open');
    return this.#db;
  }
}

function summaryOf(row: SetRow): Omit<ChangeSet, 'files'> {
  return {
    id: row.id,
    actor: row.actor,
    tool: row.tool,
    channel: row.channel,
    started_at: row.started_at,
    finished_at: row.finished_at,
    status: row.status,
    plugins: parsePlugins(row.plugins),
    decided_at: row.decided_at,
    decided_by: row.decided_by,
    reason: row.reason,
    reverts: row.reverts,
  };
}

function parsePlugins(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}
