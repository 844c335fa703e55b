/**
 * Offline restore of a database from a backup made by `homeagentctl backup`. The daemon must be
 * stopped (the caller checks the data directory lock). The current file is moved aside, never
 * deleted, so a restore can itself be undone. The target is a kernel database or a built-in
 * plugin's own (`seq.sequences`), named as backup names them.
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { checkFile, moveAside, stamp } from './database.js';
import { parsePluginDatabaseName, pluginDatabaseFile } from './plugin-database-name.js';

/** Where the databases live (config/paths.ts RuntimePaths has these). */
export interface RestorePaths {
  stateDb: string;
  memoryDb: string;
  knowledgeDb: string;
  homeDb: string;
  pluginDataDir: string;
}

export interface RestoreTarget {
  file: string;
  /** A plugin database: the backup must hold this component's migrations (it is that plugin's). */
  component?: string;
}

/**
 * The file `homeagent restore FILE --db NAME` replaces: a kernel database by its name, a plugin's
 * as `<plugin>.<database>` (`<data>/plugin-data/<plugin>/<database>.db`, whether or not the plugin
 * is installed now). Throws HA_ERR_STORE_RESTORE for another name.
 */
export function restoreTarget(paths: RestorePaths, name: string): RestoreTarget {
  const kernel: Record<string, string> = { state: paths.stateDb, memory: paths.memoryDb, knowledge: paths.knowledgeDb, home: paths.homeDb };
  const file = Object.hasOwn(kernel, name) ? kernel[name] : undefined;
  if (file !== undefined) return { file };
  const plugin = parsePluginDatabaseName(name);
  if (!plugin) {
    throw new HomeAgentError(
      'HA_ERR_STORE_RESTORE',
      `no database named ${name}; known: ${Object.keys(kernel).join(', ')}, or a plugin's as <plugin>.<name> (seq.sequences); nothing was changed`,
    );
  }
  return { file: pluginDatabaseFile(join(paths.pluginDataDir, plugin.plugin), plugin.database), component: plugin.plugin };
}

export interface RestoreResult {
  restored: string;
  /** Where the replaced database was moved, if there was one. */
  previousMovedTo: string | undefined;
}

export function restoreDatabase(
  backupFile: string,
  targetFile: string,
  clock: Clock,
  options: { component?: string | undefined } = {},
): RestoreResult {
  if (!existsSync(backupFile)) throw new HomeAgentError('HA_ERR_STORE_RESTORE', `${backupFile}: no such file`);
  const problem = checkFile(backupFile, 'full');
  if (problem) {
    throw new HomeAgentError('HA_ERR_STORE_RESTORE', `${backupFile} is not a healthy SQLite database (${problem}); nothing was changed`);
  }
  if (!hasMigrationsTable(backupFile)) {
    throw new HomeAgentError(
      'HA_ERR_STORE_RESTORE',
      `${backupFile} is not a HomeAgent database (no schema_migrations table); nothing was changed`,
    );
  }
  if (options.component !== undefined && !hasComponent(backupFile, options.component)) {
    throw new HomeAgentError(
      'HA_ERR_STORE_RESTORE',
      `${backupFile} holds no tables of ${options.component} (no ${options.component} rows in schema_migrations), so it is a backup of another database; nothing was changed`,
    );
  }
  // Copy next to the target first, so the final step is a rename on the same file system.
  const staging = join(dirname(targetFile), `.restore-${process.pid}.db`);
  try {
    // A plugin's folder is missing when the plugin never ran on this device (a fresh install).
    mkdirSync(dirname(targetFile), { recursive: true, mode: 0o700 });
    copyFileSync(backupFile, staging);
  } catch (error) {
    throw new HomeAgentError('HA_ERR_STORE_RESTORE', `cannot copy ${backupFile}: ${describeError(error)}; nothing was changed`, {
      cause: error,
    });
  }
  const previousMovedTo = existsSync(targetFile) ? moveAside(targetFile, `before-restore-${stamp(clock)}`) : undefined;
  try {
    renameSync(staging, targetFile);
  } catch (error) {
    if (existsSync(staging)) unlinkSync(staging);
    throw new HomeAgentError(
      'HA_ERR_STORE_RESTORE',
      `cannot put the restored database in place: ${describeError(error)}; the previous database is at ${previousMovedTo}`,
      { cause: error },
    );
  }
  return { restored: targetFile, previousMovedTo };
}

function hasComponent(file: string, component: string): boolean {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT 1 FROM schema_migrations WHERE component = ? LIMIT 1').get(component) !== undefined;
  } finally {
    db.close();
  }
}

function hasMigrationsTable(file: string): boolean {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
  } finally {
    db.close();
  }
}
