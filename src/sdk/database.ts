/**
 * A SQLite database of a built-in plugin's own, in its data folder: the kernel's managed connection
 * (pragmas, integrity check, corrupt files moved aside, versioned migrations, coded write failures)
 * behind the narrow statement interface, so a plugin keeps rows that survive restarts without
 * importing the driver (only src/store does). The plugin opens it in `start` (`ctx.database.open`, which
 * also lists it with the kernel's databases for status, backup and restore) and closes it in `stop`.
 */
import type { Logger } from '../log/logger.js';
import { systemClock } from '../shared/clock.js';
import { ManagedDatabase, type Recovery } from '../store/database.js';
import type { Migration, SqlDatabase, SqlRunResult, SqlStatement } from '../store/types.js';

export type { Migration, Recovery, SqlDatabase, SqlRunResult, SqlStatement };

export interface PluginDatabaseOptions {
  /** Short name for logs and errors (`sequences`). */
  name: string;
  /** Absolute path of the file, normally inside `ctx.paths.data`. */
  file: string;
  /** The component the migrations belong to (usually the plugin's name). */
  component: string;
  /** Numbered 1, 2, 3, ...; each applies in its own transaction. */
  migrations: readonly Migration[];
  log: Logger;
  /**
   * Lists the open connection with the kernel's store (status, `homeagentctl backup`) and answers
   * the function that takes it off again; called once the migrations have applied.
   */
  attach?: (managed: ManagedDatabase) => () => void;
}

/** What a plugin passes to `ctx.database.open`: the file and the migrations' component follow from the plugin. */
export interface PluginDatabaseRequest {
  /** Lower-case letters, digits, _ (`sequences`): the file is `<ctx.paths.data>/<name>.db`, listed as `<plugin>.<name>`. */
  name: string;
  /** Numbered 1, 2, 3, ...; each applies in its own transaction (recorded under the plugin's name). */
  migrations: readonly Migration[];
}

/**
 * A built-in plugin's databases (`ctx.database`). Throws HA_ERR_PLUGIN_PERMISSION for external
 * plugins (they run in their own process) and for a name that is not lower-case letters, digits, _.
 */
export interface PluginDatabases {
  open(request: PluginDatabaseRequest): PluginDatabase;
}

/** An open plugin database. */
export interface PluginDatabase {
  readonly db: SqlDatabase;
  /** Set when the file was corrupt and has been moved aside (the database then starts empty). */
  readonly recovery: Recovery | undefined;
  close(): void;
}

/**
 * Opens (creating if needed) the database with synchronous=FULL (acknowledged writes survive a
 * power cut) and applies the pending migrations. Throws HA_ERR_STORE_OPEN / HA_ERR_STORE_MIGRATION /
 * HA_ERR_STORE_TOO_NEW as the kernel's databases do.
 */
export function openPluginDatabase(options: PluginDatabaseOptions): PluginDatabase {
  const managed = ManagedDatabase.open(
    { name: options.name, file: options.file, synchronous: 'FULL' },
    { busyTimeoutMs: 5000, startupCheck: 'quick', log: options.log, clock: systemClock },
  );
  let detach: () => void = () => undefined;
  try {
    managed.migrate(options.component, options.migrations);
    if (options.attach) detach = options.attach(managed);
  } catch (error) {
    managed.close();
    throw error;
  }
  return {
    db: managed.db,
    recovery: managed.recovery,
    close: () => {
      detach();
      managed.close();
    },
  };
}
