// History maintenance with an injected clock: raw reports folded per period (bit-exact min, mean,
// max), retention, the raw row cap, batches merging into one period, and the current state kept.
import t from 'tap';
import { FOLD_BATCH_ROWS } from '../../../src/home/entity-history.js';
import { type HomeSetup, openHome, T0 } from './home-fixture.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

function sum(values: number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** History rows in home.db after the registry wrote its queue (it writes behind). */
function count(home: HomeSetup, where = '1'): number {
  home.registry.flush();
  return (home.database.db.prepare(`SELECT COUNT(*) AS n FROM state_history WHERE ${where}`).get() as { n: number }).n;
}

t.test('raw rows past history_raw_days fold into one row per entity and period', async (t) => {
  const home = openHome(t);
  const { registry, clock } = home;
  const base = T0 - 10 * DAY; // on a full hour
  clock.set(base);
  const temp = registry.register('i2c', { domain: 'sensor', object_id: 'temp', name: 'Temp', unit: '°C', initial_state: 0.1 });
  const door = registry.register('gpio', { domain: 'binary_sensor', object_id: 'door', name: 'Door', initial_state: 'off' });
  const hour1 = [0.1, 0.2, 0.7, 1e-9, 3.3];
  // The first period: five numbers (the first is the registration's own row).
  for (const [i, v] of hour1.entries()) {
    clock.set(base + i * 10 * MIN);
    if (i > 0) temp.update(v);
    door.update(i % 2 === 0 ? 'on' : 'off');
  }
  // The second period: numbers, then the sensor went away.
  clock.set(base + HOUR + 5 * MIN);
  temp.update(-2);
  clock.set(base + HOUR + 6 * MIN);
  temp.update(4);
  clock.set(base + HOUR + 50 * MIN);
  temp.update('unavailable');
  // Recent: stays raw.
  clock.set(T0 - DAY);
  temp.update(20);
  door.update('off');
  clock.set(T0);

  const rawBefore = count(home);
  const result = registry.maintain();
  t.same(result, { downsampled: rawBefore - 2, deleted: 0 }, 'every raw row but the two recent ones folded');

  const temps = registry.history('sensor.temp', { from: 0 });
  t.equal(temps.length, 3);
  const [p1, p2, recent] = temps;
  const mean1 = sum(hour1) / hour1.length;
  t.same(p1, {
    entity_id: 'sensor.temp',
    at: base,
    state: Math.round(mean1 * 1000) / 1000,
    period_ms: HOUR,
    min: Math.min(...hour1),
    mean: mean1,
    max: 3.3,
  });
  t.equal(p1?.mean, mean1, 'the mean is bit-exact (summed in report order)');
  t.same(
    p2,
    { entity_id: 'sensor.temp', at: base + HOUR, state: 'unavailable', period_ms: HOUR, min: -2, mean: 1, max: 4 },
    'the last report wins over the mean',
  );
  t.same(recent, { entity_id: 'sensor.temp', at: T0 - DAY, state: 20, period_ms: 0 });

  const doors = registry.history('binary_sensor.door', { from: 0 });
  t.same(
    doors,
    [
      { entity_id: 'binary_sensor.door', at: base, state: 'on', period_ms: HOUR },
      { entity_id: 'binary_sensor.door', at: T0 - DAY, state: 'off', period_ms: 0 },
    ],
    'a period without numbers keeps its last state; no min/mean/max',
  );

  t.same(registry.maintain(), { downsampled: 0, deleted: 0 }, 'a second run has nothing to do');
  t.equal(registry.resolve('sensor.temp').state, 20, 'the current state is untouched');
});

t.test('only whole periods fold by age: the period holding the cutoff stays raw', async (t) => {
  const home = openHome(t, { settings: { history_raw_days: 1, history_period_minutes: 60 } });
  const { registry, clock } = home;
  const now = T0 + 30 * MIN; // the cutoff (now - 1 day) lies in the middle of an hour
  clock.set(now - DAY - 20 * MIN);
  const s = registry.register('x', { domain: 'sensor', object_id: 's', name: 'S', initial_state: 1 });
  clock.set(now - DAY - 10 * MIN);
  s.update(2);
  clock.set(now - DAY - 40 * MIN); // the previous hour
  s.update(3);
  clock.set(now);
  t.same(registry.maintain(), { downsampled: 1, deleted: 0 });
  t.same(
    registry.history('sensor.s', { from: 0 }).map((r) => [r.at - now, r.state, r.period_ms]),
    [
      [-DAY - 90 * MIN, 3, HOUR],
      [-DAY - 20 * MIN, 1, 0],
      [-DAY - 10 * MIN, 2, 0],
    ],
  );
});

t.test('downsampled rows past history_days are deleted; the entity keeps its state', async (t) => {
  const home = openHome(t, { settings: { history_raw_days: 1, history_days: 30 } });
  const { registry, clock } = home;
  clock.set(T0 - 40 * DAY);
  const s = registry.register('x', { domain: 'sensor', object_id: 'old', name: 'Old', initial_state: 5 });
  clock.set(T0 - 40 * DAY + MIN);
  s.update(6);
  clock.set(T0 - 20 * DAY);
  s.update(7);
  clock.set(T0);
  const result = registry.maintain();
  t.same(result, { downsampled: 1, deleted: 2 }, 'the two 40-day-old rows go, the 20-day-old one folds');
  t.same(
    registry.history('sensor.old', { from: 0 }).map((r) => [r.state, r.period_ms]),
    [[7, HOUR]],
  );
  clock.set(T0 + 15 * DAY);
  t.same(registry.maintain(), { downsampled: 0, deleted: 1 });
  t.same(registry.history('sensor.old', { from: 0 }), []);
  t.equal(registry.resolve('sensor.old').state, 7, 'the current state survives an empty history');
  registry.removeOwner('x');
  const again = home.reopen();
  again.register('x', { domain: 'sensor', object_id: 'old', name: 'Old' });
  t.equal(again.resolve('sensor.old').state, 7, 'and is restored after a restart');
});

t.test('more raw rows than history_max_rows: the oldest whole periods fold first', async (t) => {
  const home = openHome(t, { settings: { history_max_rows: 10, history_period_minutes: 10 } });
  const { registry, clock } = home;
  const start = T0 - 2 * HOUR;
  clock.set(start);
  const a = registry.register('x', { domain: 'sensor', object_id: 'a', name: 'A', initial_state: 0 });
  const b = registry.register('x', { domain: 'switch', object_id: 'b', name: 'B', initial_state: 'off' });
  // 30 rows over two entities, one every minute: rows 0..29 at start + i minutes.
  for (let i = 1; i < 15; i++) {
    clock.set(start + i * MIN);
    a.update(i);
    b.update(i % 2 === 0 ? 'off' : 'on');
  }
  clock.set(T0);
  t.equal(count(home, 'period_ms = 0'), 30);
  const result = registry.maintain();
  // 20 excess rows reach minute 9 (the 20th oldest row); its whole period [0, 10) folds: 20 rows.
  t.same(result, { downsampled: 20, deleted: 0 });
  t.equal(count(home, 'period_ms = 0'), 10, 'at the cap');
  t.same(
    registry.history('sensor.a', { from: 0 }).map((r) => [(r.at - start) / MIN, r.state, r.period_ms / MIN]),
    [
      [0, 4.5, 10],
      [10, 10, 0],
      [11, 11, 0],
      [12, 12, 0],
      [13, 13, 0],
      [14, 14, 0],
    ],
  );
  t.same(registry.history('switch.b', { from: 0 })[0], { entity_id: 'switch.b', at: start, state: 'on', period_ms: 10 * MIN });
  t.same([registry.resolve('sensor.a').state, registry.resolve('switch.b').state], [14, 'off'], 'current states untouched');

  // Rows folding into a period that already has a downsampled row merge into it (raw rows arriving late).
  home.database.db
    .prepare("INSERT INTO state_history (entity_id, at, state, period_ms) VALUES ('sensor.a', ?, '100', 0)")
    .run(start + 5 * MIN);
  home.settings.history_max_rows = 10;
  t.same(registry.maintain(), { downsampled: 1, deleted: 0 });
  const merged = registry.history('sensor.a', { from: 0 })[0];
  const values = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100];
  t.same(merged, {
    entity_id: 'sensor.a',
    at: start,
    state: Math.round((sum(values) / 11) * 1000) / 1000,
    period_ms: 10 * MIN,
    min: 0,
    mean: sum(values) / 11,
    max: 100,
  });
});

t.test('a period larger than one batch folds in several transactions into one exact row', async (t) => {
  const home = openHome(t, { settings: { history_raw_days: 1, history_period_minutes: 1440 } });
  const { registry, clock } = home;
  const day = Math.floor((T0 - 3 * DAY) / DAY) * DAY;
  clock.set(day);
  const s = registry.register('x', { domain: 'sensor', object_id: 'fast', name: 'Fast', initial_state: 0 });
  const values = [0];
  const n = FOLD_BATCH_ROWS + 1234;
  for (let i = 1; i < n; i++) {
    clock.set(day + i);
    // Irregular fractions make the summation order matter; consecutive values always differ (7919 mod 1000 ≠ 0).
    const v = ((i * 7919) % 1000) / 7;
    values.push(v);
    s.update(v);
  }
  clock.set(T0);
  t.same(registry.maintain(), { downsampled: n, deleted: 0 });
  const rows = registry.history('sensor.fast', { from: 0 });
  t.equal(rows.length, 1);
  t.equal(rows[0]?.mean, sum(values) / n, 'the mean equals the sum in report order over the count');
  t.equal(rows[0]?.min, Math.min(...values));
  t.equal(rows[0]?.max, Math.max(...values));
  t.equal(count(home), 1);
});

t.test('statistics: folded and raw periods alike, merged exactly, oldest first, in range', async (t) => {
  const home = openHome(t, { settings: { history_raw_days: 1, history_period_minutes: 60 } });
  const { registry, clock } = home;
  const old = T0 - 3 * DAY; // on a full hour; folded by maintain() below
  clock.set(old);
  const temp = registry.register('i2c', { domain: 'sensor', object_id: 'temp', name: 'Temp', unit: '°C', initial_state: 10 });
  clock.set(old + 20 * MIN);
  temp.update(14);
  clock.set(old + HOUR + 10 * MIN);
  temp.update(2);
  clock.set(old + HOUR + 40 * MIN);
  temp.update('unavailable');
  registry.maintain(T0);
  t.equal(count(home, 'period_ms = 0'), 0, 'the old periods are folded');
  // Recent: raw, two periods, the second with a report that is not a number in the middle.
  const recent = T0 - 2 * HOUR;
  for (const [minute, value] of [
    [5, 20],
    [35, 22],
    [65, 30],
    [70, 'unavailable'],
    [80, 31],
  ] as const) {
    clock.set(recent + minute * MIN);
    temp.update(value);
  }
  clock.set(T0);

  const all = registry.statistics('sensor.temp', { from: 0, to: T0 });
  t.equal(all.period_ms, HOUR);
  t.same(
    all.rows.map(({ at, state, min, mean, max }) => ({ at, state, min, mean, max })),
    [
      { at: old, state: 12, min: 10, mean: 12, max: 14 },
      // The period ended unavailable: its state says so, its numbers stay.
      { at: old + HOUR, state: 'unavailable', min: 2, mean: 2, max: 2 },
      { at: recent, state: 21, min: 20, mean: 21, max: 22 },
      { at: recent + HOUR, state: 30.5, min: 30, mean: 30.5, max: 31 },
    ],
    'a folded period and a raw one give the same kind of row',
  );
  t.ok(
    all.rows.every((r) => r.period_ms === HOUR && r.entity_id === 'sensor.temp'),
    'every row is a period',
  );

  const window = registry.statistics('sensor.temp', { from: recent + 30 * MIN, to: recent + 66 * MIN });
  t.same(
    window.rows.map((r) => [r.at, r.mean]),
    [
      [recent, 21],
      [recent + HOUR, 30],
    ],
    'from is widened to its period start; to cuts the reports after it',
  );

  // A raw report landing in a period that is already folded (a late write) merges into it exactly.
  home.database.db
    .prepare('INSERT INTO state_history (entity_id, at, state, period_ms) VALUES (?, ?, ?, 0)')
    .run('sensor.temp', old + 50 * MIN, '18');
  const merged = registry.statistics('sensor.temp', { from: old, to: old + HOUR - 1 }).rows;
  t.same(
    merged.map(({ state, min, mean, max }) => ({ state, min, mean, max })),
    [{ state: 14, min: 10, mean: 14, max: 18 }],
    'counts and sums of the folded row and the raw one add up',
  );

  t.same(registry.statistics('sensor.nothing', { from: 0, to: T0 }).rows, [], 'an entity without history has no periods');
});

t.test('statistics of text states keep the last state of each period, without numbers', async (t) => {
  const home = openHome(t);
  const { registry, clock } = home;
  clock.set(T0 - HOUR);
  const door = registry.register('gpio', { domain: 'binary_sensor', object_id: 'door', name: 'Door', initial_state: 'off' });
  clock.set(T0 - HOUR + 10 * MIN);
  door.update('on');
  clock.set(T0 - HOUR + 20 * MIN);
  door.update('off');
  clock.set(T0);
  const { rows } = registry.statistics('binary_sensor.door');
  t.same(rows, [{ entity_id: 'binary_sensor.door', at: T0 - HOUR, state: 'off', period_ms: HOUR }]);
});
