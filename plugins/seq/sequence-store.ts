/**
 * The stored sequences: one row per sequence in <plugin data>/sequences.db (synchronous=FULL, so an
 * acknowledged seq_create survives a power cut), keyed by its name's compared form. A definition is
 * checked whole before it is written, and written in one statement, so a bad one never replaces a
 * good row; a row that no longer reads (edited by hand, written by a newer version) is listed as
 * broken and left alone rather than taking the others down.
 */
import type { Migration, PluginDatabase, PluginDatabases, SqlStatement } from '../../src/sdk/index.js';
import { nameKey, type Sequence } from './sequence-definition.js';

/** Opened through ctx.database, so the kernel lists it as `seq.sequences` (status, backup, restore). */
const DATABASE_NAME = 'sequences';
export const SEQUENCES_FILE = `${DATABASE_NAME}.db`;

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sequences',
    up(db) {
      db.exec(`
        CREATE TABLE sequences (
          name_key   TEXT    PRIMARY KEY,
          name       TEXT    NOT NULL,
          definition TEXT    NOT NULL CHECK (json_valid(definition)),
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          created_by TEXT    NOT NULL
        ) STRICT, WITHOUT ROWID;
      `);
    },
  },
];

export interface StoredSequence {
  sequence: Sequence;
  created_at: number;
  updated_at: number;
  created_by: string;
}

export type ListedSequence = StoredSequence | { name: string; broken: string };

interface Row {
  name_key: string;
  name: string;
  definition: string;
  created_at: number;
  updated_at: number;
  created_by: string;
}

export class SequenceStore {
  readonly #database: PluginDatabase;
  readonly #get: SqlStatement;
  readonly #all: SqlStatement;
  readonly #upsert: SqlStatement;
  readonly #delete: SqlStatement;
  readonly #count: SqlStatement;

  constructor(databases: PluginDatabases) {
    this.#database = databases.open({ name: DATABASE_NAME, migrations: MIGRATIONS });
    const db = this.#database.db;
    this.#get = db.prepare('SELECT * FROM sequences WHERE name_key = ?');
    this.#all = db.prepare('SELECT * FROM sequences ORDER BY name_key');
    this.#upsert = db.prepare(
      `INSERT INTO sequences (name_key, name, definition, created_at, updated_at, created_by) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(name_key) DO UPDATE SET name = excluded.name, definition = excluded.definition, updated_at = excluded.updated_at`,
    );
    this.#delete = db.prepare('DELETE FROM sequences WHERE name_key = ?');
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM sequences');
  }

  get recovered(): string | undefined {
    return this.#database.recovery?.movedTo;
  }

  count(): number {
    return (this.#count.get() as { n: number }).n;
  }

  has(name: string): boolean {
    return this.#get.get(nameKey(name)) !== undefined;
  }

  /** The sequence, undefined when none has the name; throws when its row does not read. */
  get(name: string): StoredSequence | undefined {
    const row = this.#get.get(nameKey(name)) as Row | undefined;
    return row === undefined ? undefined : fromRow(row);
  }

  list(): ListedSequence[] {
    return (this.#all.all() as Row[]).map((row) => {
      try {
        return fromRow(row);
      } catch (error) {
        return { name: row.name, broken: error instanceof Error ? error.message : String(error) };
      }
    });
  }

  /** Creates or replaces; returns whether it replaced one. */
  save(sequence: Sequence, actor: string, now: number): boolean {
    const existed = this.has(sequence.name);
    this.#upsert.run(nameKey(sequence.name), sequence.name, JSON.stringify(sequence), now, now, actor);
    return existed;
  }

  delete(name: string): boolean {
    return this.#delete.run(nameKey(name)).changes > 0;
  }

  close(): void {
    this.#database.close();
  }
}

function fromRow(row: Row): StoredSequence {
  const sequence = JSON.parse(row.definition) as Sequence;
  if (typeof sequence !== 'object' || sequence === null || !Array.isArray(sequence.groups))
    throw new Error(`the stored definition of ${row.name} has no groups`);
  return { sequence, created_at: row.created_at, updated_at: row.updated_at, created_by: row.created_by };
}
