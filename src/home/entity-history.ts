/**
 * Keeps the state history bounded: raw reports older than history_raw_days are folded into one
 * row per entity and period, downsampled rows older than history_days are deleted, and when there
 * are more raw rows than history_max_rows the oldest are folded first even if they are younger.
 *
 * Choices:
 * - Periods are aligned to the epoch (UTC): a 60-minute period starts on the full UTC hour.
 * - Only whole periods are folded by age (the period holding the cutoff stays raw until it has
 *   passed completely); the row cap folds whole periods too, so it may fold up to one period more
 *   than strictly needed.
 * - A folded period of numbers keeps min, max, mean (sum / count, summed in report order) and, as
 *   internal columns, the count and sum, so reports folded into the same period later (a batch
 *   boundary, the row cap reaching into a recent period) merge exactly. Its state is the mean
 *   rounded to 3 decimals, unless the period's last report is not a number ("unavailable"): then
 *   that report, so a sensor that went away still shows as gone. A period without numbers keeps
 *   its last state.
 * - Folding works in batches of the oldest raw rows over all entities, one transaction each, so a
 *   large backlog never holds the write lock long nor loads everything at once.
 * - The current state lives in the `entities` table, which maintenance never touches: an entity
 *   whose history is all past history_days keeps its state.
 */
import type { SqlDatabase } from '../store/types.js';

/** The part of core.home that bounds history. */
export interface HistoryRules {
  history_raw_days: number;
  history_days: number;
  history_period_minutes: number;
  history_max_rows: number;
}

export interface MaintenanceResult {
  /** Raw rows folded into downsampled rows. */
  downsampled: number;
  /** Rows deleted because they were older than history_days. */
  deleted: number;
}

const DAY_MS = 86_400_000;
/** Raw rows folded per transaction. */
export const FOLD_BATCH_ROWS = 5000;

interface RawRow {
  rowid: number;
  entity_id: string;
  at: number;
  state: string;
}

interface Bucket {
  entity_id: string;
  at: number;
  /** The existing downsampled row of this period, if any. */
  rowid: number | undefined;
  samples: number;
  sum: number;
  min: number | null;
  max: number | null;
  /** The last report folded in, as stored (JSON). */
  last: string;
}

export function maintainHistory(db: SqlDatabase, rules: HistoryRules, now: number): MaintenanceResult {
  const periodMs = rules.history_period_minutes * 60_000;
  const deleted = db.prepare('DELETE FROM state_history WHERE at < ?').run(now - rules.history_days * DAY_MS).changes;
  const cutoff = Math.max(floorTo(now - rules.history_raw_days * DAY_MS, periodMs), capCutoff(db, rules.history_max_rows, periodMs));
  const select = db.prepare(
    'SELECT rowid, entity_id, at, state FROM state_history WHERE period_ms = 0 AND at < ? ORDER BY at, rowid LIMIT ?',
  );
  const existing = db.prepare('SELECT rowid, samples, sum, min, max FROM state_history WHERE entity_id = ? AND at = ? AND period_ms = ?');
  const remove = db.prepare('DELETE FROM state_history WHERE rowid = ?');
  const insert = db.prepare(
    'INSERT INTO state_history (entity_id, at, state, period_ms, min, mean, max, samples, sum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const update = db.prepare('UPDATE state_history SET state = ?, min = ?, mean = ?, max = ?, samples = ?, sum = ? WHERE rowid = ?');

  let downsampled = 0;
  const foldBatch = db.transaction(() => {
    const rows = select.all(cutoff, FOLD_BATCH_ROWS) as RawRow[];
    const buckets = new Map<string, Bucket>();
    for (const row of rows) {
      const at = floorTo(row.at, periodMs);
      const key = `${row.entity_id}\u0000${at}`;
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        bucket = openBucket(existing.get(row.entity_id, at, periodMs) as StoredBucket | undefined, row.entity_id, at, row.state);
        buckets.set(key, bucket);
      }
      fold(bucket, row.state);
      remove.run(row.rowid);
    }
    for (const b of buckets.values()) {
      const mean = b.samples > 0 ? b.sum / b.samples : null;
      const state = bucketState(b.last, mean);
      const samples = b.samples > 0 ? b.samples : null;
      const sum = b.samples > 0 ? b.sum : null;
      if (b.rowid === undefined) insert.run(b.entity_id, b.at, state, periodMs, b.min, mean, b.max, samples, sum);
      else update.run(state, b.min, mean, b.max, samples, sum, b.rowid);
    }
    return rows.length;
  });
  for (;;) {
    const folded = foldBatch();
    downsampled += folded;
    if (folded < FOLD_BATCH_ROWS) break;
  }
  return { downsampled, deleted };
}

interface StoredBucket {
  rowid: number;
  samples: number | null;
  sum: number | null;
  min: number | null;
  max: number | null;
}

function openBucket(stored: StoredBucket | undefined, entityId: string, at: number, first: string): Bucket {
  return {
    entity_id: entityId,
    at,
    rowid: stored?.rowid,
    samples: stored?.samples ?? 0,
    sum: stored?.sum ?? 0,
    min: stored?.min ?? null,
    max: stored?.max ?? null,
    last: first,
  };
}

function fold(bucket: Bucket, state: string): void {
  bucket.last = state;
  const value = JSON.parse(state) as unknown;
  if (typeof value !== 'number') return;
  bucket.samples += 1;
  bucket.sum += value;
  bucket.min = bucket.min === null ? value : Math.min(bucket.min, value);
  bucket.max = bucket.max === null ? value : Math.max(bucket.max, value);
}

/** The state a folded period shows (see the header). */
function bucketState(last: string, mean: number | null): string {
  if (mean === null || typeof JSON.parse(last) !== 'number') return last;
  return JSON.stringify(Math.round(mean * 1000) / 1000);
}

/** The first period start after the rows that exceed the cap (so whole periods fold), or -Infinity. */
function capCutoff(db: SqlDatabase, maxRows: number, periodMs: number): number {
  const { n } = db.prepare('SELECT COUNT(*) AS n FROM state_history WHERE period_ms = 0').get() as { n: number };
  const excess = n - maxRows;
  if (excess <= 0) return Number.NEGATIVE_INFINITY;
  const row = db.prepare('SELECT at FROM state_history WHERE period_ms = 0 ORDER BY at LIMIT 1 OFFSET ?').get(excess - 1) as
    | { at: number }
    | undefined;
  return row === undefined ? Number.NEGATIVE_INFINITY : floorTo(row.at, periodMs) + periodMs;
}

function floorTo(at: number, periodMs: number): number {
  return Math.floor(at / periodMs) * periodMs;
}
