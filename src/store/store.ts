/**
 * The Store service: opens every registered database at start (integrity check, corruption
 * recovery) and closes them at stop. Components then run their own migrations on the database
 * they own tables in. Built-in plugins' own databases (opened and closed by their plugin) are
 * attached while open, so status lists them and backup reaches them like the kernel's.
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
  /**
   * Plugin databases by name, newest last: during a hot reload the new generation opens the file
   * before the old one closes it, and either may close first.
   */
  readonly #attached = new Map<string, ManagedDatabase[]>();

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
    // Their plugins close them (plugins stop before the store); only the entries go.
    this.#attached.clear();
  }

  database(name: string): ManagedDatabase {
    const db = this.#open.get(name) ?? this.#newestAttached(name);
    if (!db) throw new HomeAgentError('HA_ERR_INTERNAL', `database ${name} is not open`);
    return db;
  }

  /**
   * Lists an open plugin database under its spec's name until the returned function runs (its
   * plugin closes it or stops). Throws HA_ERR_STORE_OPEN when the name is a kernel database's.
   */
  attach(db: ManagedDatabase): () => void {
    const name = db.spec.name;
    if (this.#options.databases.some((spec) => spec.name === name)) {
      throw new HomeAgentError('HA_ERR_STORE_OPEN', `database name ${name} belongs to the kernel; a plugin database cannot take it`);
    }
    const list = this.#attached.get(name) ?? [];
    list.push(db);
    this.#attached.set(name, list);
    return () => {
      const current = this.#attached.get(name);
      const at = current?.indexOf(db) ?? -1;
      if (!current || at < 0) return;
      current.splice(at, 1);
      if (current.length === 0) this.#attached.delete(name);
    };
  }

  /** The SQLite library version the driver was built with. */
  sqliteVersion(): string {
    const first = this.#open.values().next().value;
    if (!first) return 'unknown';
    return (first.db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  }

  status(): DatabaseStatus[] {
    const attached = [...this.#attached.keys()].map((name) => this.#newestAttached(name)).filter((db) => db !== undefined);
    return [...this.#open.values(), ...attached].map((db) => ({
      name: db.spec.name,
      file: db.spec.file,
      synchronous: db.spec.synchronous,
      ...db.sizes(),
      recovered_from_corruption: db.recovery ?? null,
    }));
  }

  /** The newest still-open connection attached under the name (a plugin that closed without detaching is skipped). */
  #newestAttached(name: string): ManagedDatabase | undefined {
    return this.#attached.get(name)?.findLast((db) => db.open);
  }
}
