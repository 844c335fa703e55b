/**
 * The list store's tables (component `lists` in the state database, synchronous FULL: an item
 * someone was told is on the list must still be there after a power cut). A list is unique by its
 * key (list-text.ts), an open item by its key within the list, so saying an item twice cannot
 * store it twice even if two callers race.
 */
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase } from '../store/types.js';

export const LISTS_COMPONENT = 'lists';

export const LISTS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'lists and items',
    up(db) {
      db.exec(`
        CREATE TABLE lists (
          id         INTEGER PRIMARY KEY,
          name       TEXT    NOT NULL,
          key        TEXT    NOT NULL UNIQUE,
          created_at INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE list_items (
          id       INTEGER PRIMARY KEY,
          list_id  INTEGER NOT NULL REFERENCES lists (id),
          text     TEXT    NOT NULL,
          key      TEXT    NOT NULL,
          done     INTEGER NOT NULL CHECK (done IN (0, 1)),
          added_at INTEGER NOT NULL,
          done_at  INTEGER
        ) STRICT;
        CREATE INDEX list_items_by_list ON list_items (list_id, done, id);
        CREATE UNIQUE INDEX list_items_open_key ON list_items (list_id, key) WHERE done = 0;
        -- maintain() looks for done items older than core.lists.keep_done_days over all lists.
        CREATE INDEX list_items_done_at ON list_items (done_at) WHERE done = 1;
      `);
    },
  },
];

/** Applies the list migrations and returns the connection. */
export function openListDatabase(managed: ManagedDatabase): SqlDatabase {
  managed.migrate(LISTS_COMPONENT, LISTS_MIGRATIONS);
  return managed.db;
}
