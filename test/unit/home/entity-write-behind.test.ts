// The registry writes behind: changes are announced at once and written in one transaction per
// turn of the event loop (or per flush interval), reads write the queue first, a refused write
// keeps the queue for the retry, and the queue of history rows is bounded while writes fail.
// Transactions are counted through the registry's onFlush hook, which runs after each commit.
import t, { type Test } from 'tap';
import type { FlushReport } from '../../../src/home/entity-write-queue.js';
import { LogManager } from '../../../src/log/logger.js';
import { captureLogs } from '../fixtures/support.js';
import { type HomeSetup, openHome, T0 } from './home-fixture.js';

const DAY = 86_400_000;
/** Makes every history insert fail, as a full disk would, until dropped. */
const REFUSE = "CREATE TRIGGER refuse BEFORE INSERT ON state_history BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END";

function flushRecorder() {
  const reports: FlushReport[] = [];
  const waiters: Array<(report: FlushReport) => void> = [];
  return {
    reports,
    onFlush: (report: FlushReport) => {
      reports.push(report);
      for (const wake of waiters.splice(0)) wake(report);
    },
    /** The next write (a retry or a cool-down's end). */
    next: () => new Promise<FlushReport>((resolve) => waiters.push(resolve)),
  };
}

/** Retries do not keep the process alive (their timer is unref'd): a test waiting for one does. */
function keepAlive(t: Test): void {
  const timer = setInterval(() => {}, 1000);
  t.teardown(() => clearInterval(timer));
}

/** One turn of the event loop: the registry's write, queued before, runs first. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** home.db as it is on disk, without asking the registry to write its queue first. */
function onDisk(home: HomeSetup, sql: string) {
  return home.database.db.prepare(sql).all() as Array<Record<string, unknown>>;
}

t.test('changes of one tick are announced at once and written in one transaction, in report order', async (t) => {
  const flushes = flushRecorder();
  const home = openHome(t, { writeBehind: { flushIntervalMs: 0 }, onFlush: flushes.onFlush });
  const door = home.registry.register('gpio', { domain: 'binary_sensor', object_id: 'door', name: 'Door', initial_state: 'off' });
  const temp = home.registry.register('i2c', { domain: 'sensor', object_id: 'temp', name: 'Temp', initial_state: 0 });
  t.equal(home.registry.flush(), true, 'the registrations are written');
  t.same(flushes.reports, [{ entities: 2, history: 2, ms: 0 }]);

  for (let i = 1; i <= 100; i++) {
    home.clock.advance(10);
    door.update(i % 2 === 1 ? 'on' : 'off');
    temp.update(i / 4);
  }
  t.equal(home.stateChanges().length, 200, 'every change announced in the same tick');
  t.equal(home.registry.resolve('sensor.temp').state, 25);
  t.equal(onDisk(home, 'SELECT * FROM state_history').length, 2, 'nothing written yet');
  t.same(onDisk(home, 'SELECT state FROM entities ORDER BY entity_id'), [{ state: '"off"' }, { state: '0' }]);

  await tick();
  t.same(flushes.reports.slice(1), [{ entities: 2, history: 200, ms: 0 }], 'one transaction for the whole tick');
  const history = onDisk(home, 'SELECT entity_id, at, state FROM state_history ORDER BY rowid');
  t.equal(history.length, 202);
  t.same(history.slice(2, 6), [
    { entity_id: 'binary_sensor.door', at: T0 + 10, state: '"on"' },
    { entity_id: 'sensor.temp', at: T0 + 10, state: '0.25' },
    { entity_id: 'binary_sensor.door', at: T0 + 20, state: '"off"' },
    { entity_id: 'sensor.temp', at: T0 + 20, state: '0.5' },
  ]);
  t.same(onDisk(home, 'SELECT entity_id, state, last_changed, last_updated FROM entities ORDER BY entity_id'), [
    { entity_id: 'binary_sensor.door', state: '"off"', last_changed: T0 + 1000, last_updated: T0 + 1000 },
    { entity_id: 'sensor.temp', state: '25', last_changed: T0 + 1000, last_updated: T0 + 1000 },
  ]);

  door.update('on');
  await tick();
  t.same(flushes.reports.slice(2), [{ entities: 1, history: 1, ms: 0 }], 'the next tick: the next transaction');
  await tick();
  t.equal(flushes.reports.length, 3, 'nothing more to write, no empty transaction');
});

t.test('within the flush interval changes wait, unless flushBatch of them are waiting', async (t) => {
  const flushes = flushRecorder();
  const home = openHome(t, { writeBehind: { flushIntervalMs: 60_000, flushBatch: 50 }, onFlush: flushes.onFlush });
  const h = home.registry.register('x', { domain: 'sensor', object_id: 'n', name: 'N', initial_state: 0 });
  await tick();
  t.same(flushes.reports, [{ entities: 1, history: 1, ms: 0 }], 'the first change after a quiet time: the next tick');

  let value = 0;
  for (let turn = 0; turn < 3; turn++) {
    for (let i = 0; i < 10; i++) h.update(++value);
    await tick();
  }
  t.equal(flushes.reports.length, 1, '30 changes in three ticks wait for the interval to end');
  t.equal(onDisk(home, 'SELECT * FROM state_history').length, 1);
  for (let i = 0; i < 20; i++) h.update(++value);
  await tick();
  t.same(flushes.reports.slice(1), [{ entities: 1, history: 50, ms: 0 }], 'the 50th waiting change writes them all at once');

  h.update(++value);
  await tick();
  t.equal(flushes.reports.length, 2, 'a new interval began with that write');
  t.same(home.registry.history('sensor.n', { from: 0 }).at(-1)?.state, 51, 'a read writes the queue first');
  t.equal(flushes.reports.length, 3);
  await home.registry.stop(); // ends the minute-long cool-down
});

t.test('a backlog is written flushBatch history rows per turn; flush() writes it all at once', async (t) => {
  const flushes = flushRecorder();
  const home = openHome(t, { writeBehind: { flushIntervalMs: 0, flushBatch: 50 }, onFlush: flushes.onFlush });
  const a = home.registry.register('x', { domain: 'sensor', object_id: 'a', name: 'A', initial_state: 0 });
  const b = home.registry.register('x', { domain: 'sensor', object_id: 'b', name: 'B', initial_state: 0 });
  t.equal(home.registry.flush(), true);
  for (let v = 1; v <= 60; v++) {
    a.update(v);
    b.update(v);
  }
  await tick();
  t.same(flushes.reports.slice(1), [{ entities: 2, history: 50, ms: 0 }], 'the first 50 rows and both entities rows');
  t.same(onDisk(home, 'SELECT state FROM entities ORDER BY entity_id'), [{ state: '60' }, { state: '60' }], 'the entities are current');
  await tick();
  await tick();
  t.same(
    flushes.reports.slice(2).map((r) => r.history),
    [50, 20],
    'the rest on the next turns',
  );
  const rows = onDisk(home, "SELECT entity_id, state FROM state_history WHERE state != '0' ORDER BY rowid");
  t.same(
    rows.slice(0, 4).map((r) => [r.entity_id, r.state]),
    [
      ['sensor.a', '1'],
      ['sensor.b', '1'],
      ['sensor.a', '2'],
      ['sensor.b', '2'],
    ],
  );
  t.equal(rows.length, 120, 'every row once, in report order');

  for (let v = 61; v <= 160; v++) a.update(v);
  t.equal(home.registry.flush(), true);
  t.same(flushes.reports.at(-1), { entities: 1, history: 100, ms: 0 }, 'an explicit flush takes everything');
});

t.test('history(), maintain(), register() and stop() see every change made before them', async (t) => {
  const home = openHome(t);
  const old = T0 - 10 * DAY;
  home.clock.set(old);
  const h = home.registry.register('i2c', { domain: 'sensor', object_id: 'lux', name: 'Lux', initial_state: 1 });
  home.clock.advance(1000);
  h.update(2);
  t.same(
    home.registry.history('sensor.lux', { from: 0 }).map((r) => r.state),
    [1, 2],
    'history() in the same tick as the change',
  );
  home.clock.advance(1000);
  h.update(3);
  home.clock.set(T0);
  t.same(home.registry.maintain(), { downsampled: 3, deleted: 0 }, 'maintain() folds the change of this tick too');

  h.update(4);
  const again = home.registry.register('i2c', { domain: 'sensor', object_id: 'lux', name: 'Lux' });
  t.equal(home.registry.resolve('sensor.lux').state, 4, 're-registering restores the state reported in the same tick');
  home.clock.advance(1000);
  again.update(4, { battery: 80 });
  home.clock.advance(1000);
  again.update(4);
  await home.registry.stop();
  t.same(onDisk(home, 'SELECT state, attributes, last_changed, last_updated FROM entities'), [
    { state: '4', attributes: '{"battery":80}', last_changed: T0, last_updated: T0 + 2000 },
  ]);

  const restarted = home.reopen();
  restarted.register('i2c', { domain: 'sensor', object_id: 'lux', name: 'Lux' });
  t.match(restarted.resolve('sensor.lux'), { state: 4, last_changed: T0 }, 'a restart restores what stop() wrote');
});

t.test('a refused write keeps the changes in memory and in the queue; the retry writes them', async (t) => {
  const captured = captureLogs();
  const flushes = flushRecorder();
  const home = openHome(t, { logs: captured.logs, writeBehind: { retryMs: 5 }, onFlush: flushes.onFlush });
  keepAlive(t);
  const a = home.registry.register('gpio', { domain: 'switch', object_id: 'a', name: 'A', initial_state: 'off' });
  const b = home.registry.register('gpio', { domain: 'switch', object_id: 'b', name: 'B', initial_state: 'off' });
  t.equal(home.registry.flush(), true);
  home.database.db.exec(REFUSE);

  home.clock.advance(1000);
  a.update('on');
  b.update('on');
  t.equal(home.registry.flush(), false, 'the write failed');
  t.same(
    home.registry.list().map((e) => e.state),
    ['on', 'on'],
    'memory keeps the new states',
  );
  t.equal(home.stateChanges().length, 2, 'and the listeners heard them');
  t.same(
    onDisk(home, 'SELECT state FROM entities').map((r) => r.state),
    ['"off"', '"off"'],
    'the entities rows were rolled back with the history',
  );
  const failure = captured.records().find((r) => /could not store the states/.test(String(r.msg)));
  t.match(failure, {
    level: 'error',
    msg: /could not store the states of switch\.a, switch\.b: kept in memory, tried again/,
    entity_ids: ['switch.a', 'switch.b'],
    history_rows: 2,
    retry_ms: 5,
    err: /disk full \(test\)/,
  });

  t.same(
    home.registry.history('switch.a', { from: 0 }).map((r) => [r.at - T0, r.state]),
    [
      [0, 'off'],
      [1000, 'on'],
    ],
    'history() shows the rows the database refused',
  );
  home.registry.register('gpio', { domain: 'switch', object_id: 'a', name: 'A' });
  t.equal(home.registry.resolve('switch.a').state, 'on', 'a re-registration restores the waiting state, not the stored one');

  home.database.db.exec('DROP TRIGGER refuse');
  const retried = await flushes.next();
  t.same(retried, { entities: 2, history: 2, ms: 0 }, 'the retry wrote the queue');
  t.same(onDisk(home, 'SELECT entity_id, state FROM entities ORDER BY entity_id'), [
    { entity_id: 'switch.a', state: '"on"' },
    { entity_id: 'switch.b', state: '"on"' },
  ]);
  t.same(
    onDisk(home, 'SELECT entity_id, at, state FROM state_history ORDER BY rowid').slice(2),
    [
      { entity_id: 'switch.a', at: T0 + 1000, state: '"on"' },
      { entity_id: 'switch.b', at: T0 + 1000, state: '"on"' },
    ],
    'once each, in report order',
  );
});

t.test('retries back off, doubling, until a write succeeds; then a new failure starts again at retryMs', async (t) => {
  const failures: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  const logs = new LogManager({
    level: 'info',
    levels: {},
    destination: {
      write: (line: string) => {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (!/could not store the states/.test(String(record.msg))) return;
        failures.push(record);
        for (const wake of waiters.splice(0)) wake();
      },
    },
  });
  const nextFailure = () => new Promise<void>((resolve) => waiters.push(resolve));
  const flushes = flushRecorder();
  const home = openHome(t, { logs, writeBehind: { retryMs: 5 }, onFlush: flushes.onFlush });
  keepAlive(t);
  const h = home.registry.register('i2c', { domain: 'sensor', object_id: 'n', name: 'N', initial_state: 0 });
  t.equal(home.registry.flush(), true);
  home.database.db.exec(REFUSE);
  h.update(1);
  t.equal(home.registry.flush(), false);
  await nextFailure();
  await nextFailure();
  t.same(
    failures.map((f) => f.retry_ms),
    [5, 10, 20],
    'each failed retry waits twice as long for the next',
  );
  home.database.db.exec('DROP TRIGGER refuse');
  t.same(await flushes.next(), { entities: 1, history: 1, ms: 0 }, 'the retry after 20 ms writes');
  home.database.db.exec(REFUSE);
  h.update(2);
  t.equal(home.registry.flush(), false);
  t.equal(failures.at(-1)?.retry_ms, 5, 'a success resets the wait');
  home.database.db.exec('DROP TRIGGER refuse');
  t.equal(home.registry.flush(), true);
});

t.test('while writes fail the waiting history is capped: the oldest rows go, counted in one error', async (t) => {
  const captured = captureLogs();
  const home = openHome(t, { logs: captured.logs, writeBehind: { flushIntervalMs: 0, maxPendingHistory: 5, retryMs: 60_000 } });
  const failures = () => captured.records().filter((r) => /could not store the states/.test(String(r.msg))).length;
  const h = home.registry.register('i2c', { domain: 'sensor', object_id: 'n', name: 'N', initial_state: 0 });
  t.equal(home.registry.flush(), true);
  home.database.db.exec(REFUSE);

  home.clock.advance(1000);
  h.update(1);
  await tick();
  t.equal(failures(), 1, 'the write of the tick failed');
  for (let v = 2; v <= 8; v++) {
    home.clock.advance(1000);
    h.update(v);
  }
  await tick();
  t.equal(failures(), 1, 'until the retry is due, changes try no write');
  t.equal(home.registry.resolve('sensor.n').state, 8, 'the entity is current all the same');

  t.equal(home.registry.flush(), false);
  const dropped = captured.records().filter((r) => /oldest state history rows/.test(String(r.msg)));
  t.same(
    dropped.map((r) => [r.level, r.msg, r.dropped, r.max_pending]),
    [['error', 'dropped the 3 oldest state history rows: more than 5 waited for the database', 3, 5]],
  );

  home.database.db.exec('DROP TRIGGER refuse');
  t.equal(home.registry.flush(), true);
  t.same(
    home.registry.history('sensor.n', { from: 0 }).map((r) => r.state),
    [0, 4, 5, 6, 7, 8],
    'the newest five waited and were written',
  );
  t.same(onDisk(home, 'SELECT state FROM entities'), [{ state: '8' }], 'the entity row is current');
  t.equal(captured.records().filter((r) => /oldest state history rows/.test(String(r.msg))).length, 1, 'logged once');
});

t.test('a report that changes nothing queues nothing', async (t) => {
  const flushes = flushRecorder();
  const home = openHome(t, { writeBehind: { flushIntervalMs: 0 }, onFlush: flushes.onFlush });
  const h = home.registry.register('i2c', { domain: 'sensor', object_id: 'n', name: 'N', initial_state: 7 });
  await tick();
  t.equal(flushes.reports.length, 1);
  for (let i = 0; i < 10; i++) {
    home.clock.advance(1000);
    h.update(7);
  }
  await tick();
  t.equal(flushes.reports.length, 1, 'a sensor repeating its value writes nothing');
  t.equal(home.registry.resolve('sensor.n').last_updated, T0 + 10_000);
});
