/**
 * The Supervisor's health rounds and the systemd watchdog: each component's statuses as the
 * rounds see them, the schedule, on-demand answers, and when WATCHDOG=1 is (not) sent.
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import t from 'tap';
import { systemClock } from '../../../src/shared/clock.js';
import { Store } from '../../../src/store/store.js';
import { settle } from '../../helpers/manual-timer-clock.js';
import { silentLogs, tempDir } from '../fixtures/support.js';
import { closedPort, component, listen, MIB, nextRound, startKit, supervisorKit } from './supervisor-fixture.js';

t.test('a first round at start: every kernel component, plugins, and the answer', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('mqtt');
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  const answer = await kit.supervisor.health();
  t.same(
    answer.components.map((c) => [c.name, c.kind, c.status]),
    [
      ['event_loop', 'kernel', 'ok'],
      ['state_db', 'kernel', 'ok'],
      ['memory', 'kernel', 'ok'],
      ['llm', 'kernel', 'ok'],
      ['devices', 'kernel', 'ok'],
      ['tracker', 'kernel', 'ok'],
      ['plugin:mqtt', 'plugin', 'ok'],
      ['plugin:weather', 'plugin', 'ok'],
    ],
  );
  t.equal(answer.status, 'ok');
  t.equal(answer.healthy, true);
  t.equal(answer.checked_at, '2026-01-05T08:00:00.000Z');
  t.equal(answer.trial, null);
  t.equal(answer.components.find((c) => c.name === 'llm')?.detail, 'no language model configured');
  t.equal(answer.components[0]?.since, '2026-01-05T08:00:00.000Z');
  t.ok(kit.loop.enabled, 'the loop measurement runs while started');
  t.same(kit.changes, [], 'components first seen ok are not news');
  await kit.supervisor.stop();
  t.notOk(kit.loop.enabled, 'stop disables it');
});

t.test('rounds repeat every heartbeat_interval_ms, re-read after each round, and stop with stop()', async (t) => {
  const kit = supervisorKit(t);
  await startKit(kit);
  t.equal(kit.plugins.healthCalls, 1, 'the round at start');
  await kit.clock.advance(999);
  t.equal(kit.plugins.healthCalls, 1, 'not before the interval');
  await kit.clock.advance(1);
  t.equal(kit.plugins.healthCalls, 2, 'one interval later');
  kit.settings.supervisor.heartbeat_interval_ms = 5000;
  await kit.clock.advance(1000);
  t.equal(kit.plugins.healthCalls, 3, 'the round already planned runs at the old interval');
  await kit.clock.advance(4999);
  t.equal(kit.plugins.healthCalls, 3, 'the new interval applies from the next round');
  await kit.clock.advance(1);
  t.equal(kit.plugins.healthCalls, 4);
  await kit.supervisor.stop();
  t.equal(kit.clock.pending(), 0, 'no timer left after stop');
  await kit.clock.advance(20000);
  t.equal(kit.plugins.healthCalls, 4, 'no round after stop');
});

t.test('health() answers the last round while younger than one interval; two callers share one round', async (t) => {
  const kit = supervisorKit(t);
  await startKit(kit);
  await kit.supervisor.health();
  t.equal(kit.plugins.healthCalls, 1, 'the start round is fresh enough');
  await kit.clock.advance(500);
  kit.inputs.devices = [{ id: 'sensor.x', detail: 'unavailable' }];
  t.equal((await component(kit, 'devices'))?.status, 'ok', 'half an interval later: the last answer, unchanged');
  // Let the scheduled round not interfere: stop its timer by stopping the supervisor.
  await kit.supervisor.stop();
  await kit.clock.advance(600);
  let open: () => void = () => {};
  kit.plugins.gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const first = kit.supervisor.health();
  const second = kit.supervisor.check();
  await settle();
  t.equal(kit.plugins.healthCalls, 2, 'one round for both callers');
  open();
  const [a, b] = await Promise.all([first, second]);
  t.equal(a, b, 'the same answer');
  t.equal(a.components.find((c) => c.name === 'devices')?.status, 'degraded', 'an older answer is replaced by a new round');
});

t.test('state_db: a real SQLite state database locked by another writer fails, then recovers', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'state.db');
  const store = new Store({
    databases: [{ name: 'state', file, synchronous: 'FULL' }],
    busyTimeoutMs: 50,
    startupCheck: 'quick',
    log: silentLogs().child('store'),
    clock: systemClock,
  });
  await store.start();
  t.teardown(() => store.stop());
  // As in the daemon, some component has migrated the state database (which creates schema_migrations).
  store.database('state').migrate('demo', [{ version: 1, name: 'x', up: (d) => void d.exec('CREATE TABLE x (y)') }]);
  const kit = supervisorKit(t, { options: { stateDb: () => store.database('state').checkWritable() } });
  t.equal((await kit.supervisor.check()).components.find((c) => c.name === 'state_db')?.status, 'ok');

  const other = new BetterSqlite3(file);
  t.teardown(() => other.close());
  other.exec('BEGIN IMMEDIATE');
  await kit.clock.advance(1000);
  const locked = await kit.supervisor.check();
  const db = locked.components.find((c) => c.name === 'state_db');
  t.equal(db?.status, 'failed');
  t.match(db?.detail, /locked|busy/i);
  t.equal(locked.healthy, false, 'a failed kernel component: not healthy');
  t.equal(locked.status, 'failed');
  t.same(kit.status.healthy, [false], 'the daemon status is told');
  t.equal(kit.status.notices.get('supervisor.state_db')?.level, 'error', 'an error notice under supervisor.state_db');
  t.match(kit.changes, [{ component: 'state_db', status: 'failed', previous: 'ok' }]);
  t.ok(
    kit.logs.records().some((r) => r.msg === 'health check failed; not feeding the systemd watchdog'),
    'the flip is logged',
  );

  await kit.clock.advance(1000);
  t.equal((await kit.supervisor.check()).components.find((c) => c.name === 'state_db')?.failures, 2, 'failures in a row');

  other.exec('ROLLBACK');
  await kit.clock.advance(1000);
  const free = await kit.supervisor.check();
  t.equal(free.components.find((c) => c.name === 'state_db')?.status, 'ok');
  t.equal(free.healthy, true);
  t.same(kit.status.healthy, [false, true]);
  t.notOk(kit.status.notices.has('supervisor.state_db'), 'the notice is cleared');
  t.equal(kit.changes.at(-1)?.status, 'ok');
});

t.test('memory: degraded over 80 %, failed over the limit; a lower cgroup limit counts', async (t) => {
  const kit = supervisorKit(t, { supervisor: { memory_limit_mb: 512 } });
  const status = async () => (await kit.supervisor.check()).components.find((c) => c.name === 'memory');
  kit.inputs.rss = 300 * MIB;
  t.equal((await status())?.status, 'ok');
  kit.inputs.cgroup = 350 * MIB;
  await kit.clock.advance(1000);
  const degraded = await status();
  t.equal(degraded?.status, 'degraded', '300 MB is over 80 % of the 350 MB cgroup limit');
  t.match(degraded?.detail, /of 350 MB \(cgroup memory limit/);
  kit.inputs.cgroup = 256 * MIB;
  await kit.clock.advance(1000);
  const failed = await kit.supervisor.check();
  t.equal(failed.components.find((c) => c.name === 'memory')?.status, 'failed');
  t.equal(failed.healthy, false, 'memory over its limit is a kernel failure');
  kit.inputs.cgroup = null;
  await kit.clock.advance(1000);
  t.equal((await status())?.status, 'ok', 'without the cgroup limit the 512 MB setting applies');
});

t.test('llm: probed over real HTTP; a 500 is reachable, a closed port degrades (never fails)', async (t) => {
  const kit = supervisorKit(t, { realProbe: true });
  const up = await listen(
    t,
    createServer((_req, res) => {
      res.statusCode = 500;
      res.end();
    }),
  );
  kit.inputs.llm = [{ name: 'local', base_url: `http://127.0.0.1:${up}/v1` }];
  const reachable = await kit.supervisor.check();
  t.same(
    reachable.components.find((c) => c.name === 'llm'),
    {
      name: 'llm',
      kind: 'kernel',
      status: 'ok',
      detail: '1 source reachable',
      detail_zh: '1 个来源可达',
      since: '2026-01-05T08:00:00.000Z',
      failures: 0,
    },
  );
  const down = await closedPort();
  kit.inputs.llm = [...kit.inputs.llm, { name: 'cloud', base_url: `http://127.0.0.1:${down}/v1` }];
  const answer = await kit.supervisor.check();
  const llm = answer.components.find((c) => c.name === 'llm');
  t.equal(llm?.status, 'degraded', 'a changed source list is probed at once');
  t.match(llm?.detail, /^unreachable: cloud \(.*ECONNREFUSED.*\); 1 reachable$/);
  t.equal(answer.healthy, true, 'an unreachable model does not make HomeAgent unhealthy');
  t.equal(answer.status, 'degraded');
  t.same(kit.status.healthy, [], 'nor the daemon status');
});

t.test('llm: probed at most every llm_check_interval_ms, cached in between', async (t) => {
  const probed: string[] = [];
  let reachable = true;
  const kit = supervisorKit(t, {
    supervisor: { llm_check_interval_ms: 30000, llm_check_timeout_ms: 1234 },
    options: {
      probe: async (url, timeout) => {
        probed.push(`${url} ${timeout}`);
        return reachable
          ? { reachable, detail: 'HTTP 200', detail_zh: 'HTTP 200' }
          : { reachable, detail: 'no answer within 1234 ms', detail_zh: '1234 ms 内没有应答' };
      },
    },
  });
  kit.inputs.llm = [{ name: 'a', base_url: 'http://a/v1' }];
  await kit.supervisor.check();
  t.same(probed, ['http://a/v1 1234'], 'probed with llm_check_timeout_ms');
  reachable = false;
  await kit.clock.advance(29000);
  t.equal((await kit.supervisor.check()).components.find((c) => c.name === 'llm')?.status, 'ok', 'cached result');
  t.equal(probed.length, 1);
  await kit.clock.advance(1000);
  t.equal((await kit.supervisor.check()).components.find((c) => c.name === 'llm')?.status, 'degraded', 'probed again after the interval');
  t.equal(probed.length, 2);
});

t.test('devices in error degrade; the tracker shows the trial; failed plugins are failed', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather', ok: false, detail: 'api key rejected' });
  kit.inputs.devices = [{ id: 'sensor.kitchen_temp', detail: 'unavailable' }];
  kit.tracker.startTrial([12, 13], ['x']);
  const answer = await kit.supervisor.check();
  const get = (name: string) => answer.components.find((c) => c.name === name);
  t.equal(get('devices')?.status, 'degraded');
  t.equal(get('devices')?.detail, '1 device in error: sensor.kitchen_temp (unavailable)');
  t.same([get('tracker')?.status, get('tracker')?.detail], ['ok', 'trying change 12, 13 on plugins x']);
  t.same([get('plugin:weather')?.status, get('plugin:weather')?.detail], ['failed', 'running: api key rejected']);
  t.equal(answer.healthy, true, 'a failed plugin is not a kernel failure');
  t.equal(answer.status, 'failed', 'but it is the worst status');
  t.same(answer.trial?.change_set_ids, [12, 13]);
  t.equal(kit.status.notices.get('supervisor.plugin:weather')?.level, 'error');
  t.match(kit.changes, [
    { component: 'devices', status: 'degraded', previous: null },
    { component: 'plugin:weather', status: 'failed', previous: null },
  ]);
});

t.test('tracking off: the tracker component says so', async (t) => {
  const kit = supervisorKit(t, { tracker: false });
  t.equal((await kit.supervisor.check()).components.find((c) => c.name === 'tracker')?.detail, 'change tracking is off');
});

t.test('an uninstalled plugin leaves the answer and its notice is cleared', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('gone', { ok: false });
  await kit.supervisor.check();
  t.ok(kit.status.notices.has('supervisor.plugin:gone'));
  kit.plugins.rows.delete('gone');
  await kit.clock.advance(1000);
  const answer = await kit.supervisor.check();
  t.notOk(answer.components.some((c) => c.name === 'plugin:gone'));
  t.notOk(kit.status.notices.has('supervisor.plugin:gone'));
});

t.test('watchdog: pings at its interval while healthy; a blocked loop holds the ping back once', async (t) => {
  const kit = supervisorKit(t, { watchdogMs: 200 });
  await startKit(kit);
  t.ok(
    kit.logs.records().some((r) => r.msg === 'feeding the systemd watchdog' && r.interval_ms === 200),
    'the interval is logged',
  );
  await kit.clock.advance(600);
  t.equal(kit.notifier.pings, 3, 'one ping per watchdog interval');

  kit.loop.stallOnce(2500);
  await kit.clock.advance(200);
  t.equal(kit.notifier.pings, 3, 'the tick after a stall over max_loop_delay_ms does not ping');
  t.equal((await component(kit, 'event_loop'))?.status, 'failed', 'the event loop is failed at once');
  t.same(kit.status.healthy, [false]);
  await kit.clock.advance(200);
  t.equal(kit.notifier.pings, 4, 'the loop runs on time again: pings resume');
  t.equal((await component(kit, 'event_loop'))?.status, 'ok');
  t.same(kit.status.healthy, [false, true]);
  t.same(
    kit.changes.map((c) => [c.component, c.status]),
    [
      ['event_loop', 'failed'],
      ['event_loop', 'ok'],
    ],
  );
});

t.test('watchdog: a stall during start-up (before READY) does not hold back the first ping', async (t) => {
  const kit = supervisorKit(t, { watchdogMs: 200 });
  await startKit(kit);
  // Module loading, migrations and the first grammar compile held the loop before READY.
  kit.loop.stallOnce(9000);
  kit.supervisor.ready();
  const before = kit.notifier.pings;
  await kit.clock.advance(200);
  t.equal(kit.notifier.pings, before + 1, 'the first tick after READY pings');
  t.not((await component(kit, 'event_loop'))?.status, 'failed', 'the event loop is not failed for start-up work');
  kit.loop.stallOnce(2500);
  await kit.clock.advance(200);
  t.equal(kit.notifier.pings, before + 1, 'a stall after READY still holds the ping back');
});

t.test('watchdog: a failed state database stops the pings until it takes writes again', async (t) => {
  const kit = supervisorKit(t, { watchdogMs: 200 });
  await startKit(kit);
  await kit.clock.advance(1000);
  const before = kit.notifier.pings;
  kit.inputs.dbError = new Error('disk I/O error');
  await kit.clock.advance(1000);
  const atFailure = kit.notifier.pings;
  await kit.clock.advance(1000);
  t.equal(kit.notifier.pings, atFailure, 'no ping for a whole interval while state_db is failed');
  t.ok(atFailure - before <= 5, 'pings stopped from the round that saw the failure on');
  kit.inputs.dbError = undefined;
  await kit.clock.advance(1000);
  await kit.clock.advance(400);
  t.ok(kit.notifier.pings >= atFailure + 2, 'pings resume once the next round sees it healthy');
});

t.test('watchdog: a failed plugin does not stop the pings', async (t) => {
  const kit = supervisorKit(t, { watchdogMs: 200 });
  kit.plugins.add('weather', { ok: false, detail: 'crashed' });
  await startKit(kit);
  await kit.clock.advance(2000);
  t.equal((await component(kit, 'plugin:weather'))?.status, 'failed');
  t.equal(kit.notifier.pings, 10, 'every tick pinged');
  t.same(kit.status.healthy, [], 'the daemon stays healthy');
});

t.test('no watchdog configured: no ping timer, the rounds judge the event loop', async (t) => {
  const kit = supervisorKit(t);
  await startKit(kit);
  t.equal(kit.clock.pending(), 1, 'only the round timer');
  kit.loop.stallOnce(5000);
  await nextRound(kit);
  t.equal((await component(kit, 'event_loop'))?.status, 'failed', 'the round saw the stall');
  await nextRound(kit);
  t.equal((await component(kit, 'event_loop'))?.status, 'ok');
  t.equal(kit.notifier.pings, 0);
});
