/**
 * The entity registry's tables (component `home` in `<data>/home.db`). A row in `entities` outlives
 * its owner's stop, so the last state is there to restore when the owner registers the entity
 * again (and to show it as last known). States are stored as JSON text so a number stays a number
 * and `null` (unknown) stays distinct from the string "null". `entity_overrides` holds what the
 * owner changed of an entity (name, area, aliases): it outlives every re-registration.
 */
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase } from '../store/types.js';

export const HOME_COMPONENT = 'home';

export const HOME_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'entities and state history',
    up(db) {
      db.exec(`
        CREATE TABLE entities (
          entity_id    TEXT    PRIMARY KEY,
          domain       TEXT    NOT NULL,
          name         TEXT    NOT NULL,
          aliases      TEXT    NOT NULL,
          area         TEXT,
          device       TEXT,
          unit         TEXT,
          device_class TEXT,
          attributes   TEXT    NOT NULL,
          state        TEXT    NOT NULL,
          last_changed INTEGER NOT NULL,
          last_updated INTEGER NOT NULL,
          owner        TEXT    NOT NULL
        ) STRICT, WITHOUT ROWID;
        -- Raw reports have period_ms 0; a downsampled row covers [at, at + period_ms) and, for numbers,
        -- keeps how many reports it folded and their sum, so folding more reports into it later stays exact.
        CREATE TABLE state_history (
          entity_id TEXT    NOT NULL,
          at        INTEGER NOT NULL,
          state     TEXT    NOT NULL,
          period_ms INTEGER NOT NULL,
          min       REAL,
          mean      REAL,
          max       REAL,
          samples   INTEGER,
          sum       REAL
        ) STRICT;
        CREATE INDEX state_history_by_entity ON state_history (entity_id, at);
        -- Maintenance looks for the oldest raw rows over all entities (age limit and row cap).
        CREATE INDEX state_history_raw_by_at ON state_history (at) WHERE period_ms = 0;
      `);
    },
  },
  {
    version: 2,
    name: 'entity categories, state classes and owner overrides',
    up(db) {
      // Existing rows keep everything; their entities get the new fields from the driver at the next registration.
      db.exec(`
        ALTER TABLE entities ADD COLUMN entity_category TEXT;
        ALTER TABLE entities ADD COLUMN state_class TEXT;
        -- What the owner set (homeagentctl entities rename|area|alias, the page), apart from what drivers
        -- register: a driver registering again overwrites its entities row, never this one. NULL name: the
        -- driver's; area_set 0: the driver's area, 1: area (NULL: none); aliases as JSON arrays.
        CREATE TABLE entity_overrides (
          entity_id       TEXT    PRIMARY KEY,
          name            TEXT,
          area_set        INTEGER NOT NULL,
          area            TEXT,
          aliases_added   TEXT    NOT NULL,
          aliases_removed TEXT    NOT NULL,
          updated_at      INTEGER NOT NULL,
          actor           TEXT    NOT NULL
        ) STRICT, WITHOUT ROWID;
      `);
    },
  },
];

/** Applies the home migrations and returns the connection. */
export function openHomeDatabase(managed: ManagedDatabase): SqlDatabase {
  managed.migrate(HOME_COMPONENT, HOME_MIGRATIONS);
  return managed.db;
}
