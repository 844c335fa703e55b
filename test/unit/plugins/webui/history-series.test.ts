// The page's chart series, built from stored rows as the daemon answers them: which source a span
// reads, where the line breaks (states that are not numbers, silences past the entity's pace) and
// the line held on to now. Pure functions, so every case is exact.
import t from 'tap';
import {
  type ChartSeries,
  gapThreshold,
  MIN_INTERVALS_FOR_PACE,
  numericValue,
  RAW_GAP,
  rawIsCut,
  rawSeries,
  SPAN_MS,
  sourceFor,
  statisticsSeries,
} from '../../../../plugins/webui/page/src/history-series.js';
import type { StateHistoryRow } from '../../../../src/api/home.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const T0 = Date.parse('2026-03-01T00:00:00Z');

function raw(at: number, state: StateHistoryRow['state']): StateHistoryRow {
  return { entity_id: 'sensor.t', at, state, period_ms: 0 };
}
function period(at: number, mean: number | null, state: StateHistoryRow['state'] = mean, spread = 1): StateHistoryRow {
  const row: StateHistoryRow = { entity_id: 'sensor.t', at, state, period_ms: HOUR };
  if (mean !== null) Object.assign(row, { min: mean - spread, mean, max: mean + spread });
  return row;
}
/** [ms, value] pairs of a series, to compare at a glance. */
function pairs(series: ChartSeries | undefined): Array<[number, number | null]> {
  return (series?.x ?? []).map((x, i) => [x * 1000 - T0, series?.y[i] ?? null]);
}

t.test('recent spans read every report, long ones the statistics; a cut raw answer is detected', async (t) => {
  t.equal(sourceFor(SPAN_MS.day), 'raw');
  t.equal(sourceFor(SPAN_MS.week), 'statistics');
  t.equal(sourceFor(SPAN_MS.month), 'statistics');
  const rows = [raw(T0, 1), raw(T0 + MIN, 2)];
  t.equal(rawIsCut(rows, 2), true, 'as many rows as asked for: older ones were left out');
  t.equal(rawIsCut(rows, 3), false);
});

t.test('numbers are numbers; unavailable, unknown, null and text are not', async (t) => {
  t.equal(numericValue(21.5), 21.5);
  t.equal(numericValue('21.5'), 21.5, 'a number reported as text');
  for (const state of ['unavailable', 'unknown', 'on', '', ' ', null, Number.NaN]) t.equal(numericValue(state), undefined, String(state));
});

t.test("a silence is a gap only past the entity's pace, never below the floor, never with too few rows", async (t) => {
  const everyMinute = Array.from({ length: 20 }, (_, i) => T0 + i * MIN);
  t.equal(gapThreshold(everyMinute, RAW_GAP), RAW_GAP.floorMs, '20 × 1 min is below the 1 h floor');
  const everyHour = Array.from({ length: 20 }, (_, i) => T0 + i * HOUR);
  t.equal(gapThreshold(everyHour, RAW_GAP), 20 * HOUR, 'an hourly pace allows 20 h');
  t.equal(gapThreshold(everyMinute.slice(0, MIN_INTERVALS_FOR_PACE), RAW_GAP), Number.POSITIVE_INFINITY, 'too few to tell');
});

t.test('raw: a state that is not a number breaks the line; the current state holds it on to now', async (t) => {
  const rows = [raw(T0, 20), raw(T0 + 10 * MIN, 21), raw(T0 + 20 * MIN, 'unavailable'), raw(T0 + 30 * MIN, null), raw(T0 + 40 * MIN, 22)];
  const series = rawSeries(rows, { state: 22, last_changed: T0 + 40 * MIN }, { from: T0 - HOUR, now: T0 + 50 * MIN });
  t.equal(series?.source, 'raw');
  t.same(pairs(series), [
    [0, 20],
    [10 * MIN, 21],
    [20 * MIN, null],
    [30 * MIN, null],
    [40 * MIN, 22],
    [50 * MIN, 22],
  ]);
  t.equal(series?.min, undefined, 'raw reports have no band');
});

t.test('raw: a daemon that was stopped for hours leaves a gap after the last report', async (t) => {
  // A sensor polled every minute, then nothing for 5 hours (the daemon was down), then again.
  const before = Array.from({ length: 12 }, (_, i) => raw(T0 + i * MIN, 20 + i / 10));
  const after = [raw(T0 + 5 * HOUR, 25), raw(T0 + 5 * HOUR + MIN, 25.1)];
  const series = rawSeries(
    [...before, ...after],
    { state: 25.1, last_changed: T0 + 5 * HOUR + MIN },
    { from: T0, now: T0 + 5 * HOUR + MIN },
  );
  const points = pairs(series);
  const gap = points.findIndex(([, y]) => y === null);
  t.same(points[gap], [11 * MIN + 1, null], 'the line breaks just after the last report before the silence');
  t.same(points[gap + 1], [5 * HOUR, 25], 'and starts again with the first one after it');
  t.equal(points.filter(([, y]) => y === null).length, 1, 'one gap');
  t.same(points.at(-1), [5 * HOUR + MIN, 25.1], 'already at now: nothing is added');
});

t.test('raw: a sensor that has not changed in the span is one line from the start to now', async (t) => {
  const series = rawSeries([], { state: 1013, last_changed: T0 - 3 * HOUR }, { from: T0, now: T0 + 2 * HOUR });
  t.same(pairs(series), [
    [0, 1013],
    [2 * HOUR, 1013],
  ]);
  t.equal(rawSeries([], { state: 'unavailable', last_changed: T0 }, { from: T0, now: T0 + HOUR }), undefined, 'nothing to draw');
  t.equal(
    rawSeries([raw(T0, 'on'), raw(T0 + MIN, 'off')], { state: 'off', last_changed: T0 + MIN }, { from: T0, now: T0 + HOUR }),
    undefined,
    'text states are not a line',
  );
});

t.test('raw: a current state that is not a number adds nothing after its own row', async (t) => {
  const rows = [raw(T0, 20), raw(T0 + MIN, 'unavailable')];
  t.same(pairs(rawSeries(rows, { state: 'unavailable', last_changed: T0 + MIN }, { from: T0, now: T0 + HOUR })), [
    [0, 20],
    [MIN, null],
  ]);
});

t.test('statistics: means between min and max, missing hours past the pace and unavailable ends as gaps, held to now', async (t) => {
  const rows = [
    ...Array.from({ length: 10 }, (_, i) => period(T0 + i * HOUR, 20 + i)),
    // Five hours without a period: the daemon was stopped.
    period(T0 + 15 * HOUR, 30),
    // This period ended unavailable and the next hour has nothing.
    period(T0 + 16 * HOUR, 31, 'unavailable'),
    period(T0 + 18 * HOUR, 32),
    // A period with no numbers at all.
    period(T0 + 19 * HOUR, null, 'unavailable'),
    period(T0 + 20 * HOUR, 33),
  ];
  const now = T0 + 20 * HOUR + 25 * MIN;
  const series = statisticsSeries(rows, HOUR, { state: 33.5, last_changed: now - MIN }, { from: T0, now });
  t.equal(series?.source, 'statistics');
  const points = pairs(series);
  t.same(points.slice(9), [
    [9 * HOUR, 29],
    [10 * HOUR, null],
    [15 * HOUR, 30],
    [16 * HOUR, 31],
    [17 * HOUR, null],
    [18 * HOUR, 32],
    [19 * HOUR, null],
    [20 * HOUR, 33],
    [20 * HOUR + 25 * MIN, 33.5],
  ]);
  t.same(series?.min?.slice(0, 2), [19, 20], 'the band: each period min');
  t.same(series?.max?.slice(0, 2), [21, 22], 'and max');
  t.equal(series?.min?.at(-1), 32, 'now widens the last band to the current value if needed');
  t.equal(series?.max?.at(-1), 34);
  t.equal(series?.min?.[10], null, 'a gap has no band');
});

t.test('statistics: consecutive hours are no gap; an unavailable end followed at once by numbers is none either', async (t) => {
  const rows = [period(T0, 10, 'unavailable'), period(T0 + HOUR, 11), period(T0 + 2 * HOUR, 12)];
  const series = statisticsSeries(rows, HOUR, { state: 12, last_changed: T0 + 2 * HOUR }, { from: T0, now: T0 + 2 * HOUR + MIN });
  t.same(pairs(series), [
    [0, 10],
    [HOUR, 11],
    [2 * HOUR, 12],
    [2 * HOUR + MIN, 12],
  ]);
  t.same(
    statisticsSeries([], HOUR, { state: 5, last_changed: T0 - HOUR }, { from: T0, now: T0 + HOUR })?.y,
    [5, 5],
    'no period in the span: the current value from the start to now',
  );
});
