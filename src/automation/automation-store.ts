/**
 * The automations' stored state (component `automations` in the home database): the run log,
 * bounded by core.automations.run_history, and the enable/disable flags set at run time, which
 * override a rule's configured `enabled` and survive restarts. Run records are written behind:
 * a finished run is queued and written with the others of the same tick in one transaction, so no
 * trigger ever waits for the disk; reads write the queue first.
 */
import type { Logger } from '../log/logger.js';
import { describeError } from '../shared/errors.js';
import type { ManagedDatabase } from '../store/database.js';
import type { Migration, SqlDatabase, SqlStatement } from '../store/types.js';
import type { AutomationRunRecord, LastRun, RunStatus, RunStep, TriggerData } from './types.js';

export const AUTOMATIONS_COMPONENT = 'automations';

export const AUTOMATIONS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'run log and enable flags',
    up(db) {
      db.exec(`
        -- rowid orders the log (oldest first); the oldest rows beyond run_history are dropped.
        CREATE TABLE automation_runs (
          id            TEXT    NOT NULL UNIQUE,
          automation_id TEXT    NOT NULL,
          trigger       TEXT    NOT NULL,
          started_at    INTEGER NOT NULL,
          finished_at   INTEGER NOT NULL,
          status        TEXT    NOT NULL CHECK (status IN ('done', 'failed', 'aborted')),
          error         TEXT,
          steps         TEXT    NOT NULL
        ) STRICT;
        CREATE INDEX automation_runs_by_automation ON automation_runs (automation_id);
        CREATE TABLE automation_flags (
          automation_id TEXT    PRIMARY KEY,
          enabled       INTEGER NOT NULL CHECK (enabled IN (0, 1)),
          changed_at    INTEGER NOT NULL,
          actor         TEXT    NOT NULL
        ) STRICT, WITHOUT ROWID;
      `);
    },
  },
];

/** A stored enable/disable. */
export interface AutomationFlag {
  enabled: boolean;
  changed_at: number;
  actor: string;
}

interface RunRow {
  id: string;
  automation_id: string;
  trigger: string;
  started_at: number;
  finished_at: number;
  status: RunStatus;
  error: string | null;
  steps: string;
}

export class AutomationStore {
  readonly #db: SqlDatabase;
  readonly #log: Logger;
  readonly #history: () => number;
  readonly #pending: AutomationRunRecord[] = [];
  #flushScheduled = false;
  readonly #insert: SqlStatement;
  readonly #prune: SqlStatement;
  readonly #writeBatch: (records: readonly AutomationRunRecord[], keep: number) => void;

  /** Applies the migrations; `history` is core.automations.run_history, read at each write. */
  constructor(database: ManagedDatabase, options: { log: Logger; history: () => number }) {
    database.migrate(AUTOMATIONS_COMPONENT, AUTOMATIONS_MIGRATIONS);
    this.#db = database.db;
    this.#log = options.log;
    this.#history = options.history;
    this.#insert = this.#db.prepare(
      `INSERT INTO automation_runs (id, automation_id, trigger, started_at, finished_at, status, error, steps)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // Everything up to the (keep+1)-th newest row goes; rowids only grow because only the oldest are deleted.
    this.#prune = this.#db.prepare(
      'DELETE FROM automation_runs WHERE rowid <= (SELECT rowid FROM automation_runs ORDER BY rowid DESC LIMIT 1 OFFSET ?)',
    );
    const batch = (records: readonly AutomationRunRecord[], keep: number) => {
      for (const r of records) {
        this.#insert.run(
          r.id,
          r.automation_id,
          JSON.stringify(r.trigger),
          r.started_at,
          r.finished_at,
          r.status,
          r.error,
          JSON.stringify(r.steps),
        );
      }
      this.#prune.run(keep);
    };
    const tx = this.#db.transaction.bind(this.#db);
    this.#writeBatch = (records, keep) => tx(() => batch(records, keep))();
  }

  /** The stored flags by automation id. */
  flags(): Map<string, AutomationFlag> {
    const rows = this.#db.prepare('SELECT automation_id, enabled, changed_at, actor FROM automation_flags').all() as Array<{
      automation_id: string;
      enabled: number;
      changed_at: number;
      actor: string;
    }>;
    return new Map(rows.map((r) => [r.automation_id, { enabled: r.enabled === 1, changed_at: r.changed_at, actor: r.actor }]));
  }

  setFlag(automationId: string, flag: AutomationFlag): void {
    this.#db
      .prepare(
        `INSERT INTO automation_flags (automation_id, enabled, changed_at, actor) VALUES (?, ?, ?, ?)
         ON CONFLICT (automation_id) DO UPDATE SET enabled = excluded.enabled, changed_at = excluded.changed_at, actor = excluded.actor`,
      )
      .run(automationId, flag.enabled ? 1 : 0, flag.changed_at, flag.actor);
  }

  /** Queues a finished run; it is written with the others of this tick. */
  append(record: AutomationRunRecord): void {
    this.#pending.push(record);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes the queued runs now (reads and stop call it). A failed write is logged and the runs are dropped. */
  flush(): void {
    this.#flushScheduled = false;
    if (this.#pending.length === 0) return;
    const records = this.#pending.splice(0);
    try {
      this.#writeBatch(records, this.#history());
    } catch (error) {
      this.#log.error({ err: describeError(error), runs: records.length }, 'could not store automation runs');
    }
  }

  /** Newest first; of one automation or all. */
  runs(options: { automation_id?: string; limit: number }): AutomationRunRecord[] {
    this.flush();
    const rows = (
      options.automation_id === undefined
        ? this.#db.prepare('SELECT * FROM automation_runs ORDER BY rowid DESC LIMIT ?').all(options.limit)
        : this.#db
            .prepare('SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY rowid DESC LIMIT ?')
            .all(options.automation_id, options.limit)
    ) as RunRow[];
    return rows.map(toRecord);
  }

  /** The newest stored run of each automation. */
  lastRuns(): Map<string, LastRun> {
    this.flush();
    const rows = this.#db
      .prepare('SELECT * FROM automation_runs WHERE rowid IN (SELECT MAX(rowid) FROM automation_runs GROUP BY automation_id)')
      .all() as RunRow[];
    return new Map(rows.map((row) => [row.automation_id, lastRunOf(toRecord(row))]));
  }

  /** Whether any run of the automation is stored (its rule may since have been removed). */
  hasRuns(automationId: string): boolean {
    this.flush();
    return this.#db.prepare('SELECT 1 FROM automation_runs WHERE automation_id = ? LIMIT 1').get(automationId) !== undefined;
  }
}

function toRecord(row: RunRow): AutomationRunRecord {
  return {
    id: row.id,
    automation_id: row.automation_id,
    trigger: JSON.parse(row.trigger) as TriggerData,
    started_at: row.started_at,
    finished_at: row.finished_at,
    status: row.status,
    error: row.error,
    steps: JSON.parse(row.steps) as RunStep[],
  };
}

/** The summary `automations list` shows of a run. */
export function lastRunOf(record: AutomationRunRecord): LastRun {
  return {
    run_id: record.id,
    status: record.status,
    trigger: summarizeTrigger(record.trigger),
    started_at: record.started_at,
    finished_at: record.finished_at,
    error: record.error,
  };
}

/** One line saying what fired a run: `state switch.hall off→on`, `mqtt home/door`, `manual by cli`. */
export function summarizeTrigger(trigger: TriggerData): string {
  switch (trigger.type) {
    case 'state':
    case 'numeric':
      return `${trigger.type} ${trigger.entity_id ?? '?'} ${String(trigger.from_state ?? 'unknown')}→${String(trigger.to_state ?? 'unknown')}`;
    case 'edge':
      return `edge ${trigger.pin ?? '?'} ${trigger.edge ?? ''}`.trimEnd();
    case 'time':
      return `time ${trigger.schedule ?? ''}`.trimEnd();
    case 'mqtt':
      return `mqtt ${trigger.topic ?? '?'}`;
    case 'input':
      return `input ${JSON.stringify(trigger.text ?? '')}`;
    case 'manual':
      return `manual by ${trigger.actor ?? 'unknown'}`;
  }
}
