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
 *
 * It also answers the hourly statistics behind the page's long charts (historyStatistics): folded
 * rows as stored, and raw rows not yet folded summed into the same periods on the fly, so a week
 * of a sensor polled every second is a few hundred rows whatever the retention settings.
 */
import type { EntityState, StateHistoryRow } from '../api/home.js';
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

/** One period of one entity as historyStatistics sums it (before it becomes a StateHistoryRow). */
interface PeriodSums {
  samples: number;
  sum: number;
  min: number | null;
  max: number | null;
  /** The period's last report, as stored (JSON). */
  last: string;
}

interface StoredPeriod {
  at: number;
  state: string;
  samples: number | null;
  sum: number | null;
  min: number | null;
  max: number | null;
}

interface RawPeriod {
  bucket: number;
  samples: number;
  sum: number | null;
  min: number | null;
  max: number | null;
  last: string;
}

/**
 * One row per period of `periodMs` in [from, to] (periods aligned to the epoch, as maintenance
 * folds them), oldest first: min, mean and max of the numbers reported in it and the state a folded
 * row would have (the mean, or the last report when that was not a number). Stored folded rows and
 * raw rows of the same period are merged exactly (counts and sums); the raw ones are the newer, so
 * their last report wins.
 */
export function historyStatistics(
  db: SqlDatabase,
  entityId: string,
  range: { from: number; to: number; periodMs: number },
): StateHistoryRow[] {
  const { periodMs } = range;
  const from = floorTo(range.from, periodMs);
  const periods = new Map<number, PeriodSums>();
  const stored = db
    .prepare(
      'SELECT at, state, samples, sum, min, max FROM state_history WHERE entity_id = ? AND period_ms > 0 AND at >= ? AND at <= ? ORDER BY at, rowid',
    )
    .all(entityId, from, range.to) as StoredPeriod[];
  for (const row of stored) {
    const at = floorTo(row.at, periodMs);
    const sums = periods.get(at) ?? { samples: 0, sum: 0, min: null, max: null, last: row.state };
    sums.last = row.state;
    if (row.samples !== null && row.sum !== null) {
      sums.samples += row.samples;
      sums.sum += row.sum;
      sums.min = row.min === null ? sums.min : sums.min === null ? row.min : Math.min(sums.min, row.min);
      sums.max = row.max === null ? sums.max : sums.max === null ? row.max : Math.max(sums.max, row.max);
    }
    periods.set(at, sums);
  }
  // Numbers are summed by SQLite; the window numbers the reports of a period newest first, so the
  // period's last report is the one numbered 1. A bound JS number is a REAL: the CAST keeps the
  // division an integer one, which is what puts a report into its period.
  const raw = db
    .prepare(
      `SELECT bucket, COUNT(value) AS samples, SUM(value) AS sum, MIN(value) AS min, MAX(value) AS max,
              MAX(CASE WHEN newest = 1 THEN state END) AS last
         FROM (SELECT (at / CAST(@period AS INTEGER)) * CAST(@period AS INTEGER) AS bucket, state,
                      CASE WHEN json_type(state) IN ('integer', 'real') THEN json_extract(state, '$') END AS value,
                      ROW_NUMBER() OVER (PARTITION BY at / CAST(@period AS INTEGER) ORDER BY at DESC, rowid DESC) AS newest
                 FROM state_history
                WHERE entity_id = @entity AND period_ms = 0 AND at >= @from AND at <= @to)
        GROUP BY bucket`,
    )
    .all({ period: periodMs, entity: entityId, from, to: range.to }) as RawPeriod[];
  for (const row of raw) {
    const sums = periods.get(row.bucket) ?? { samples: 0, sum: 0, min: null, max: null, last: row.last };
    sums.last = row.last;
    if (row.samples > 0 && row.sum !== null) {
      sums.samples += row.samples;
      sums.sum += row.sum;
      sums.min = sums.min === null ? row.min : Math.min(sums.min, row.min as number);
      sums.max = sums.max === null ? row.max : Math.max(sums.max, row.max as number);
    }
    periods.set(row.bucket, sums);
  }
  return [...periods.entries()]
    .sort(([a], [b]) => a - b)
    .map(([at, sums]) => {
      const mean = sums.samples > 0 ? sums.sum / sums.samples : null;
      const row: StateHistoryRow = {
        entity_id: entityId,
        at,
        state: JSON.parse(bucketState(sums.last, mean)) as EntityState,
        period_ms: periodMs,
      };
      if (mean !== null && sums.min !== null && sums.max !== null) {
        row.min = sums.min;
        row.mean = mean;
        row.max = sums.max;
      }
      return row;
    });
}
