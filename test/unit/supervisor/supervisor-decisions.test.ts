/**
 * What the Supervisor does about failures: trial rollback and commit, rollback of uncommitted
 * changes after repeated failures, restarts with backoff, and the announcement of every rollback.
 */
import t from 'tap';
import { rollbackSentence } from '../../../src/supervisor/supervisor.js';
import { changeSet, nextRound, startKit, supervisorKit } from './supervisor-fixture.js';

const START = Date.UTC(2026, 0, 5, 8, 0, 0);

t.test('trial: a plugin that failed to start is rolled back at the first round', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  await kit.clock.advance(300);
  kit.tracker.startTrial([12], ['weather'], [{ plugin: 'weather', error: 'SyntaxError: Unexpected token' }]);
  await nextRound(kit);
  t.equal(kit.tracker.rollbacks.length, 1, 'rolled back');
  t.same(kit.tracker.rollbacks[0], {
    by: 'supervisor',
    reason: 'plugin weather failed to start: SyntaxError: Unexpected token',
    at: START + 1000,
  });
  t.ok((kit.tracker.rollbacks[0]?.at ?? Infinity) - (START + 300) <= 2 * kit.interval, 'within 2 intervals of the change');
  t.same(kit.tracker.commits, []);
  t.same(kit.plugins.restarts, [], 'no restart on top of a rollback');
});

t.test('trial: a failed plugin of the trial is rolled back; its reason names it and its detail', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  kit.plugins.add('mqtt');
  await startKit(kit);
  kit.tracker.startTrial([12], ['weather']);
  kit.plugins.set('weather', { ok: false, detail: 'health ping of weather timed out after 2000 ms' });
  await nextRound(kit);
  t.same(
    kit.tracker.rollbacks.map((r) => r.reason),
    ['plugin weather failed its health check: health ping of weather timed out after 2000 ms'],
  );
});

t.test('trial: a plugin of the trial that crashed since the trial began is rolled back even if it answers now', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  kit.plugins.add('mqtt');
  await startKit(kit);
  // Crashed before the trial (an earlier version): not held against this change.
  kit.plugins.set('weather', { crashed_at: START - 5000 });
  kit.tracker.startTrial([12], ['weather']);
  await nextRound(kit);
  t.same(kit.tracker.rollbacks, [], 'an old crash does not count');
  // Up again between two crashes of its own restart loop: the ping alone would pass.
  kit.plugins.set('weather', { crashed_at: kit.clock.now() });
  kit.plugins.set('mqtt', { crashed_at: kit.clock.now() });
  await nextRound(kit);
  t.same(
    kit.tracker.rollbacks.map((r) => r.reason),
    [`plugin weather crashed at ${new Date(kit.clock.now() - kit.interval).toISOString()} (running again since)`],
    'only the trial plugin counts',
  );
  t.same(kit.tracker.commits, []);
});

t.test('trial: a plugin of the trial still starting or stopping neither fails the trial nor counts for it', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  kit.tracker.startTrial([12], ['weather']);
  kit.plugins.set('weather', { state: 'starting', ok: false, detail: 'starting' });
  await nextRound(kit);
  kit.plugins.set('weather', { state: 'stopping', ok: false, detail: 'stopping' });
  await nextRound(kit);
  t.same(kit.tracker.rollbacks, [], 'not rolled back while it settles');
  t.same(kit.tracker.commits, [], 'and those rounds did not count');
  kit.plugins.set('weather', { state: 'running', ok: true, detail: 'fine' });
  await nextRound(kit);
  t.same(kit.tracker.commits, [], 'one healthy round is not enough');
  await nextRound(kit);
  t.equal(kit.tracker.commits.length, 1, 'committed after two healthy rounds once it runs');
});

t.test('trial: a failed kernel component rolls the trial back', async (t) => {
  const kit = supervisorKit(t);
  await startKit(kit);
  kit.tracker.startTrial([7], ['hog']);
  kit.inputs.rss = 600 * 1024 * 1024;
  await nextRound(kit);
  t.equal(kit.tracker.rollbacks.length, 1);
  t.match(kit.tracker.rollbacks[0]?.reason, /^memory use failed its check: resident 600 MB of 512 MB/);
});

t.test('trial: a stall the watchdog already saw end still rolls the trial back', async (t) => {
  const kit = supervisorKit(t, { watchdogMs: 200 });
  await startKit(kit);
  kit.tracker.startTrial([8], ['blocker']);
  kit.loop.stallOnce(3000);
  await kit.clock.advance(400);
  t.equal(kit.tracker.rollbacks.length, 0, 'the watchdog does not decide');
  await kit.clock.advance(600);
  t.equal(kit.tracker.rollbacks.length, 1, 'the next round does');
  t.match(kit.tracker.rollbacks[0]?.reason, /^the event loop failed its check: longest event-loop stall 3000 ms/);
});

t.test('trial: a failing plugin outside the trial neither rolls it back nor stops its commit', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  kit.plugins.add('zigbee', { ok: false, detail: 'adapter not found' });
  await startKit(kit);
  await kit.clock.advance(100);
  kit.tracker.startTrial([12], ['weather']);
  await nextRound(kit);
  await nextRound(kit);
  t.same(kit.tracker.rollbacks, []);
  t.same(kit.tracker.commits, ['supervisor']);
  t.same(
    kit.plugins.restarts.map((r) => r.name),
    ['zigbee'],
    'the other plugin is restarted as usual',
  );
});

t.test('trial: healthy → committed after exactly trial_health_intervals scheduled rounds started after it', async (t) => {
  for (const needed of [1, 2, 3]) {
    const kit = supervisorKit(t, { tracker_settings: { trial_health_intervals: needed } });
    kit.plugins.add('weather', { folder: 'weather' });
    await startKit(kit);
    await kit.clock.advance(500);
    kit.tracker.startTrial([12], ['weather']);
    await kit.supervisor.check();
    t.same(kit.tracker.commits, [], `${needed}: an on-demand round does not count`);
    for (let round = 1; round < needed; round++) {
      await kit.clock.advance(round === 1 ? 500 : 1000);
      t.same(kit.tracker.commits, [], `${needed}: not after ${round} round(s)`);
    }
    await kit.clock.advance(needed === 1 ? 500 : 1000);
    t.same(kit.tracker.commits, ['supervisor'], `${needed}: committed after round ${needed}`);
    t.same(kit.tracker.rollbacks, []);
    await kit.supervisor.stop();
  }
});

t.test('trial: a round that started before the trial does not count', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  let open: () => void = () => {};
  kit.plugins.gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  await kit.clock.advance(1000);
  // The round at 1000 is waiting for its plugin pings when the change is recorded.
  kit.tracker.startTrial([12], ['weather']);
  kit.plugins.gate = undefined;
  open();
  await kit.clock.advance(0);
  await nextRound(kit);
  t.same(kit.tracker.commits, [], 'one counting round so far (the one at 2000)');
  await nextRound(kit);
  t.same(kit.tracker.commits, ['supervisor'], 'committed at the second round that started after the trial');
});

t.test('trial: a change joining the trial restarts the count', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  await kit.clock.advance(500);
  kit.tracker.startTrial([12], ['weather']);
  await kit.clock.advance(500);
  const trial = kit.tracker.current;
  if (trial) kit.tracker.current = { ...trial, change_set_ids: [12, 13] };
  await nextRound(kit);
  t.same(kit.tracker.commits, [], 'the round after the join counts as the first');
  await nextRound(kit);
  t.same(kit.tracker.commits, ['supervisor']);
});

t.test('trial: a round during which a change joined the trial does not count', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  await kit.clock.advance(500);
  kit.tracker.startTrial([12], ['weather']);
  let open: () => void = () => {};
  kit.plugins.gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  await kit.clock.advance(500);
  const trial = kit.tracker.current;
  if (trial) kit.tracker.current = { ...trial, change_set_ids: [12, 13] };
  kit.plugins.gate = undefined;
  open();
  await kit.clock.advance(0);
  await nextRound(kit);
  t.same(kit.tracker.commits, [], 'the round at 1000 pinged before change 13 joined: only the one at 2000 counts');
  await nextRound(kit);
  t.same(kit.tracker.commits, ['supervisor']);
});

t.test('outside a trial: a plugin with uncommitted changes is rolled back after failures_before_rollback rounds in a row', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather', ok: false, detail: 'throws in health()' });
  kit.tracker.pending = ['weather'];
  kit.tracker.undo = [changeSet(21, { status: 'trial' })];
  await startKit(kit);
  await nextRound(kit);
  t.same(kit.tracker.rollbacks, [], 'not after 2 failed rounds');
  await nextRound(kit);
  t.same(
    kit.tracker.rollbacks.map((r) => [r.by, r.reason]),
    [['supervisor', 'plugin weather failed 3 health checks in a row: throws in health()']],
  );
  t.same(kit.plugins.restarts, [], 'a plugin with pending changes is not restarted');
});

t.test('outside a trial: failures must be in a row', async (t) => {
  const kit = supervisorKit(t, { supervisor: { failures_before_rollback: 3 } });
  kit.plugins.add('weather', { folder: 'weather', ok: false });
  kit.tracker.pending = ['weather'];
  await startKit(kit);
  await nextRound(kit);
  kit.plugins.set('weather', { ok: true });
  await nextRound(kit);
  kit.plugins.set('weather', { ok: false });
  await nextRound(kit);
  await nextRound(kit);
  t.same(kit.tracker.rollbacks, [], 'fail, fail, ok, fail, fail: no rollback');
  await nextRound(kit);
  t.equal(kit.tracker.rollbacks.length, 1, 'the third in a row');
});

t.test('outside a trial: a failing plugin without changes is restarted with a doubling, capped backoff that resets', async (t) => {
  const kit = supervisorKit(t, { supervisor: { restart_backoff_ms: 1000, restart_backoff_max_ms: 8000 } });
  kit.plugins.add('weather', { folder: 'weather', ok: false, detail: 'socket closed' });
  await startKit(kit);
  await kit.clock.advance(24000);
  t.same(
    kit.plugins.restarts.map((r) => r.at - START),
    [1000, 3000, 7000, 15000, 23000],
    'after 1 s, then 2, 4, 8 and 8 (the cap) s',
  );
  t.ok(
    kit.plugins.restarts.every((r) => r.actor === 'supervisor' && r.name === 'weather'),
    'as the supervisor',
  );
  t.same(kit.tracker.rollbacks, [], 'nothing to roll back');

  kit.plugins.set('weather', { ok: true });
  await nextRound(kit);
  kit.plugins.set('weather', { ok: false });
  const before = kit.plugins.restarts.length;
  await nextRound(kit);
  t.equal(kit.plugins.restarts.length, before, 'the first failure after an ok round waits again');
  await nextRound(kit);
  t.equal(kit.plugins.restarts.length, before + 1, 'and restarts after restart_backoff_ms, not the old 8 s');
});

t.test('outside a trial: a plugin restarting after a crash is left to its own restart loop', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('zigbee', { ok: false, state: 'restarting', detail: 'crashed (exit 1); restarting in 2 s' });
  await startKit(kit);
  await kit.clock.advance(10000);
  t.same(kit.plugins.restarts, []);
  t.equal((await kit.supervisor.health()).components.find((c) => c.name === 'plugin:zigbee')?.status, 'failed', 'still shown failed');
});

t.test('without a tracker failing plugins are restarted, never rolled back', async (t) => {
  const kit = supervisorKit(t, { tracker: false });
  kit.plugins.add('weather', { folder: 'weather', ok: false });
  kit.tracker.pending = ['weather'];
  await startKit(kit);
  await kit.clock.advance(3000);
  t.same(kit.tracker.rollbacks, []);
  t.ok(kit.plugins.restarts.length >= 1);
});

t.test('before start() a round decides nothing', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather', ok: false });
  kit.tracker.startTrial([12], ['weather']);
  await kit.supervisor.check();
  t.same(kit.tracker.rollbacks, []);
  t.same(kit.plugins.restarts, []);
});

t.test('announcements: the sentence, the log, the notice, and the change set channel', async (t) => {
  const kit = supervisorKit(t);
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  kit.tracker.startTrial([12], ['weather']);
  kit.tracker.undo = [changeSet(12, { channel: 'telegram' })];
  kit.plugins.set('weather', { ok: false, detail: 'timeout' });
  await nextRound(kit);
  const text =
    'I undid plugin change 12 (files_write by agent: plugins/weather) because plugin weather failed its health check: timeout; the plugins are back to their last good state.';
  t.same(kit.announced, [{ text, channel: 'telegram' }], 'sent where the change was asked for');
  t.same(kit.status.notices.get('supervisor.rollback'), { level: 'warning', message: text });
  t.ok(
    kit.logs.records().some((r) => r.level === 'warn' && r.msg === text),
    'logged as a warning',
  );
});

t.test('announcements: announce_channel wins; a change set without a channel goes to the default one', async (t) => {
  const configured = supervisorKit(t, { supervisor: { announce_channel: 'speaker' } });
  await startKit(configured);
  configured.tracker.startTrial([12], ['weather'], [{ plugin: 'weather', error: 'boom' }]);
  configured.tracker.undo = [changeSet(12, { channel: 'telegram' })];
  await nextRound(configured);
  t.same(
    configured.announced.map((a) => a.channel),
    ['speaker'],
  );

  const none = supervisorKit(t);
  await startKit(none);
  none.tracker.startTrial([13], ['weather'], [{ plugin: 'weather', error: 'boom' }]);
  none.tracker.undo = [changeSet(13, { channel: null, actor: 'cli', tool: 'plugins.install' })];
  await nextRound(none);
  t.same(none.announced, [
    {
      text: 'I undid plugin change 13 (plugins.install by cli: plugins/weather) because plugin weather failed to start: boom; the plugins are back to their last good state.',
      channel: undefined,
    },
  ]);
});

t.test('announcements: startup rollbacks are announced once, at start', async (t) => {
  const undone = [
    changeSet(30, { status: 'rolled_back', reason: 'HomeAgent restarted while a change was on trial', channel: 'telegram' }),
    changeSet(31, {
      status: 'rolled_back',
      reason: 'HomeAgent restarted while a change was on trial',
      channel: 'telegram',
      plugins: ['lights'],
    }),
  ];
  const kit = supervisorKit(t, { startupRollbacks: undone });
  t.same(kit.announced, [], 'nothing before start');
  await startKit(kit);
  t.same(kit.announced, [
    {
      text: 'I undid plugin changes 30 (files_write by agent: plugins/weather) and 31 (files_write by agent: plugins/lights) because HomeAgent restarted while a change was on trial; the plugins are back to their last good state.',
      channel: 'telegram',
    },
  ]);
  await kit.supervisor.stop();
  await startKit(kit);
  t.equal(kit.announced.length, 1, 'a second start does not repeat it');
});

t.test('announcements: a failing send is logged, never thrown; the rounds go on', async (t) => {
  const kit = supervisorKit(t, {
    options: {
      announce: async () => {
        throw new Error('channel telegram is offline');
      },
    },
  });
  kit.plugins.add('weather', { folder: 'weather' });
  await startKit(kit);
  kit.tracker.startTrial([12], ['weather'], [{ plugin: 'weather', error: 'boom' }]);
  await nextRound(kit);
  t.equal(kit.tracker.rollbacks.length, 1);
  t.ok(
    kit.logs.records().some((r) => r.msg === 'could not announce the rollback'),
    'the send failure is logged',
  );
  const calls = kit.plugins.healthCalls;
  await nextRound(kit);
  t.equal(kit.plugins.healthCalls, calls + 1, 'the next round runs');
});

t.test('a rollback that fails leaves an error notice and keeps supervising', async (t) => {
  const kit = supervisorKit(t);
  await startKit(kit);
  kit.tracker.startTrial([12], ['weather'], [{ plugin: 'weather', error: 'boom' }]);
  kit.tracker.rollbackError = new Error('overlay busy');
  await nextRound(kit);
  t.equal(kit.status.notices.get('supervisor.rollback')?.level, 'error');
  t.match(kit.status.notices.get('supervisor.rollback')?.message, /overlay busy/);
  t.same(kit.announced, []);
  kit.tracker.rollbackError = undefined;
  await nextRound(kit);
  t.equal(kit.tracker.rollbacks.length, 1, 'tried again at the next round');
});

t.test('rollbackSentence: one change without plugins, three changes', async (t) => {
  t.equal(
    rollbackSentence([changeSet(5, { plugins: [], tool: 'cmd_run' })], 'x'),
    'I undid plugin change 5 (cmd_run by agent) because x; the plugins are back to their last good state.',
  );
  t.match(
    rollbackSentence([changeSet(1), changeSet(2), changeSet(3)], 'y'),
    /^I undid plugin changes 1 \(.*\), 2 \(.*\) and 3 \(.*\) because y;/,
  );
});
