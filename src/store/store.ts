/**
 * The Store service: opens every registered database at start (integrity check, corruption
 * recovery) and closes them at stop. Components then run their own migrations on the database
 * they own tables in.
 */

import type { DatabaseStatus } from '../api/status.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import { ManagedDatabase, type StartupCheck } from './database.js';
import type { DatabaseSpec } from './types.js';

export type { DatabaseStatus };

export interface StoreOptions {
  databases: DatabaseSpec[];
  busyTimeoutMs: number;
  startupCheck: StartupCheck;
  log: Logger;
  clock: Clock;
}

export class Store implements Service {
  readonly name = 'store';
  readonly #options: StoreOptions;
  readonly #open = new Map<string, ManagedDatabase>();

  constructor(options: StoreOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    const { databases, busyTimeoutMs, startupCheck, log, clock } = this.#options;
    for (const spec of databases) {
      this.#open.set(spec.name, ManagedDatabase.open(spec, { busyTimeoutMs, startupCheck, log, clock }));
    }
  }

  async stop(): Promise<void> {
    for (const db of [...this.#open.values()].reverse()) db.close();
    this.#open.clear();
  }

  database(name: string): ManagedDatabase {
    const db = this.#open.get(name);
    if (!db) throw new HomeAgentError('HA_ERR_INTERNAL', `database ${name} is not open`);
    return db;
  }

  /** The SQLite library version the driver was built with. */
  sqliteVersion(): string {
    const first = this.#open.values().next().value;
    if (!first) return 'unknown';
    return (first.db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  }

  status(): DatabaseStatus[] {
    return [...this.#open.values()].map((db) => ({
      name: db.spec.name,
      file: db.spec.file,
      synchronous: db.spec.synchronous,
      ...db.sizes(),
      recovered_from_corruption: db.recovery ?? null,
    }));
  }
}
