/**
 * Which plugins the owner disabled, kept in the state database (synchronous=FULL) so a choice
 * made with `homeagentctl plugins disable` survives restarts and power cuts. A plugin with no row
 * follows its configuration (`plugin.<name>.enabled`, default on).
 */
import { HomeAgentError } from '../shared/errors.js';
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase } from '../store/types.js';

export const PLUGIN_STATE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'plugin enable/disable choices',
    up(db) {
      db.exec(`
        CREATE TABLE plugin_state (
          name       TEXT PRIMARY KEY,
          enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
          changed_at TEXT NOT NULL,
          changed_by TEXT NOT NULL
        ) STRICT;
      `);
    },
  },
];

export interface PluginChoice {
  enabled: boolean;
  changed_at: string;
  changed_by: string;
}

export class PluginStateStore {
  readonly #database: () => ManagedDatabase;
  #db: SqlDatabase | undefined;

  constructor(database: () => ManagedDatabase) {
    this.#database = database;
  }

  open(): void {
    const managed = this.#database();
    managed.migrate('plugins', PLUGIN_STATE_MIGRATIONS);
    this.#db = managed.db;
  }

  choice(name: string): PluginChoice | undefined {
    const row = this.#require().prepare('SELECT enabled, changed_at, changed_by FROM plugin_state WHERE name = ?').get(name) as
      | { enabled: number; changed_at: string; changed_by: string }
      | undefined;
    return row && { enabled: row.enabled === 1, changed_at: row.changed_at, changed_by: row.changed_by };
  }

  set(name: string, enabled: boolean, actor: string, at: string): void {
    this.#require()
      .prepare(
        `INSERT INTO plugin_state (name, enabled, changed_at, changed_by) VALUES (?, ?, ?, ?)
         ON CONFLICT(name) DO UPDATE SET enabled = excluded.enabled, changed_at = excluded.changed_at, changed_by = excluded.changed_by`,
      )
      .run(name, enabled ? 1 : 0, at, actor);
  }

  forget(name: string): void {
    this.#require().prepare('DELETE FROM plugin_state WHERE name = ?').run(name);
  }

  #require(): SqlDatabase {
    if (!this.#db) throw new HomeAgentError('HA_ERR_INTERNAL', 'the plugin state store is not open');
    return this.#db;
  }
}
