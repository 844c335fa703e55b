/**
 * Offline restore of a database from a backup made by `homeagentctl backup`. The daemon must be
 * stopped (the caller checks the data directory lock). The current file is moved aside, never
 * deleted, so a restore can itself be undone.
 */
import { copyFileSync, existsSync, renameSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { checkFile, moveAside, stamp } from './database.js';

export interface RestoreResult {
  restored: string;
  /** Where the replaced database was moved, if there was one. */
  previousMovedTo: string | undefined;
}

export function restoreDatabase(backupFile: string, targetFile: string, clock: Clock): RestoreResult {
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
  // Copy next to the target first, so the final step is a rename on the same file system.
  const staging = join(dirname(targetFile), `.restore-${process.pid}.db`);
  try {
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

function hasMigrationsTable(file: string): boolean {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
  } finally {
    db.close();
  }
}
