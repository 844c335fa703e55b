/**
 * What a sensor's chart draws, built from the stored states as pure functions (unit-tested apart
 * from the page): which source a span reads (every report for recent spans, per-period statistics
 * for long ones), where the line breaks (a state that is not a number, such as `unavailable` or the
 * unknown state a sensor starts with after a restart, or a silence much longer than the entity's
 * usual pace) and the line held on to now for the current state.
 *
 * States are stored when they change, so between two rows the earlier value held: the chart draws
 * steps, and a row's value runs until the next row (or now).
 */
import type { EntityState, StateHistoryRow } from '../../../../src/sdk/api.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

export type Span = 'day' | 'week' | 'month';
export const SPANS: readonly Span[] = ['day', 'week', 'month'];
export const SPAN_MS: Record<Span, number> = { day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS };

/** Spans up to this read every report; longer ones would be tens of thousands of rows for a polled sensor. */
export const RAW_SPAN_MAX_MS = DAY_MS;
/**
 * A silence counts as a gap when it is some times the entity's usual pace (the median time between
 * its rows) and at least a floor: a sensor that reports every minute and is quiet for an hour was
 * not running; one that changes twice a day may be quiet for a day. Raw reports vary widely in
 * pace, so the factor is large; a polled sensor has every period, so among periods a few missing
 * ones already say the daemon was not running.
 */
export const RAW_GAP = { factor: 20, floorMs: HOUR_MS };
export const STATISTICS_GAP = { factor: 3, floorPeriods: 3 };
/** Fewer intervals than this say nothing about an entity's pace: no silence is then a gap. */
export const MIN_INTERVALS_FOR_PACE = 8;

export type Source = 'raw' | 'statistics';

/** Every report for recent spans, per-period statistics for long ones. */
export function sourceFor(spanMs: number): Source {
  return spanMs <= RAW_SPAN_MAX_MS ? 'raw' : 'statistics';
}

/** A raw answer of `limit` rows is the newest `limit`: the start of the span is missing, statistics cover it all. */
export function rawIsCut(rows: readonly StateHistoryRow[], limit: number): boolean {
  return rows.length >= limit;
}

/** Seconds since the epoch (uPlot's unit) and, per point, the value or null for a gap. */
export interface ChartSeries {
  source: Source;
  x: number[];
  /** The reported value (raw) or the period's mean (statistics); null breaks the line. */
  y: Array<number | null>;
  /** Statistics only: the band's edges. */
  min?: Array<number | null>;
  max?: Array<number | null>;
}

/** The entity now, to hold its line on to the present. */
export interface CurrentState {
  state: EntityState;
  last_changed: number;
}

/** A state as a number to draw, or undefined for text (`unavailable`, `unknown`, `on`) and null. */
export function numericValue(state: EntityState): number | undefined {
  if (typeof state === 'number') return Number.isFinite(state) ? state : undefined;
  if (typeof state !== 'string' || state.trim() === '') return undefined;
  const value = Number(state);
  return Number.isFinite(value) ? value : undefined;
}

/** The longest silence between two rows that is not a gap (Infinity when the rows are too few to tell). */
export function gapThreshold(times: readonly number[], rule: { factor: number; floorMs: number }): number {
  const intervals: number[] = [];
  for (let i = 1; i < times.length; i++) intervals.push((times[i] as number) - (times[i - 1] as number));
  if (intervals.length < MIN_INTERVALS_FOR_PACE) return Number.POSITIVE_INFINITY;
  intervals.sort((a, b) => a - b);
  const median = intervals[Math.floor(intervals.length / 2)] as number;
  return Math.max(rule.floorMs, rule.factor * median);
}

interface Point {
  at: number;
  y: number | null;
  min?: number | null;
  max?: number | null;
}

function toSeries(source: Source, points: readonly Point[]): ChartSeries | undefined {
  if (!points.some((p) => p.y !== null)) return undefined;
  const series: ChartSeries = { source, x: points.map((p) => p.at / 1000), y: points.map((p) => p.y) };
  if (source === 'statistics') {
    series.min = points.map((p) => p.min ?? null);
    series.max = points.map((p) => p.max ?? null);
  }
  return series;
}

/**
 * Every report between `from` and `now`: a number is a point, anything else breaks the line at its
 * time, a silence past gapThreshold breaks it just after the last report before it. The current
 * state holds the line on to now (from the range's start when it has not changed in the range).
 * Undefined when there is no number to draw.
 */
export function rawSeries(
  rows: readonly StateHistoryRow[],
  current: CurrentState,
  range: { from: number; now: number },
): ChartSeries | undefined {
  const points: Point[] = [];
  const currentValue = numericValue(current.state);
  if (rows.length === 0 && currentValue !== undefined) points.push({ at: Math.max(range.from, current.last_changed), y: currentValue });
  const limit = gapThreshold(
    rows.map((r) => r.at),
    RAW_GAP,
  );
  let previous: StateHistoryRow | undefined;
  for (const row of rows) {
    if (previous !== undefined && row.at - previous.at > limit && numericValue(previous.state) !== undefined) {
      points.push({ at: previous.at + 1, y: null });
    }
    points.push({ at: row.at, y: numericValue(row.state) ?? null });
    previous = row;
  }
  holdToNow(points, currentValue, range.now, false);
  return toSeries('raw', points);
}

/**
 * One point per period at its start (its mean, between its min and max). A period that ended on a
 * state that is not a number breaks the line at its end unless the next period follows at once
 * with numbers; a run of missing periods past gapThreshold breaks it after the last one. The
 * current state holds the line on to now.
 */
export function statisticsSeries(
  rows: readonly StateHistoryRow[],
  periodMs: number,
  current: CurrentState,
  range: { from: number; now: number },
): ChartSeries | undefined {
  const points: Point[] = [];
  const limit = gapThreshold(
    rows.map((r) => r.at),
    {
      factor: STATISTICS_GAP.factor,
      floorMs: STATISTICS_GAP.floorPeriods * periodMs,
    },
  );
  for (const [i, row] of rows.entries()) {
    const previous = points.at(-1);
    const before = rows[i - 1];
    if (before !== undefined && previous?.y !== null && row.at - before.at > limit) points.push({ at: before.at + periodMs, y: null });
    const mean = row.mean ?? numericValue(row.state);
    points.push(mean === undefined ? { at: row.at, y: null } : { at: row.at, y: mean, min: row.min ?? mean, max: row.max ?? mean });
    const next = rows[i + 1];
    const endedAway = mean !== undefined && numericValue(row.state) === undefined;
    if (endedAway && (next === undefined || next.at > row.at + periodMs)) points.push({ at: row.at + periodMs, y: null });
  }
  const currentValue = numericValue(current.state);
  if (rows.length === 0 && currentValue !== undefined) {
    points.push({ at: Math.max(range.from, current.last_changed), y: currentValue, min: currentValue, max: currentValue });
  }
  holdToNow(points, currentValue, range.now, true);
  return toSeries('statistics', points);
}

/**
 * The current value drawn up to now: the last step runs on to the present instead of stopping at
 * the last change. A current state that is not a number adds nothing (its row already broke the
 * line). The band keeps the last period's edges.
 */
function holdToNow(points: Point[], currentValue: number | undefined, now: number, band: boolean): void {
  const last = points.at(-1);
  if (currentValue === undefined || last === undefined || last.at >= now) return;
  const held: Point = { at: now, y: currentValue };
  if (band) {
    held.min = last.y === null ? currentValue : Math.min(last.min ?? currentValue, currentValue);
    held.max = last.y === null ? currentValue : Math.max(last.max ?? currentValue, currentValue);
  }
  points.push(held);
}
