/**
 * Prepared statements created on first use, so that store constructors only assign (the schema
 * may not exist yet when they run) and each SQL text is compiled once per connection.
 */
import type { SqlDatabase, SqlStatement } from './types.js';

export class StatementCache {
  readonly db: SqlDatabase;
  readonly #statements = new Map<string, SqlStatement>();

  constructor(db: SqlDatabase) {
    this.db = db;
  }

  get(sql: string): SqlStatement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` in a transaction; inside an open transaction it becomes a savepoint of that one. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
