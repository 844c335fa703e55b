import t from 'tap';
import { expectErrorAsync } from '../../fixtures/support.js';
import { processExists, processFixture, toolPlugin } from './fixtures/process-fixture.js';

const signal = () => new AbortController().signal;

const CRASHY = toolPlugin(`
  if (args.crash) process.exit(3);
  return process.pid;`);

t.test('a crash fails the call in flight and later calls at once, then the process restarts with backoff', async (t) => {
  const f = processFixture(t, { source: CRASHY, limits: { restart_backoff_ms: 200 } });
  await f.plugin.start(signal());
  const firstPid = await f.harness.call('demo_run', {});

  const restarting = f.nextState();
  const inFlight = await expectErrorAsync(t, () => f.harness.call('demo_run', { crash: true }), 'HA_ERR_PLUGIN_DEAD');
  t.match(inFlight.message, /exited with code 3/, 'the call in flight fails with the reason');
  const report = await restarting;
  const crashedAt = Date.now();
  t.equal(report.state, 'restarting');
  t.match(report.detail, /exited with code 3.*restarting in 200 ms/, 'the report says why and when');

  const dead = await expectErrorAsync(t, () => f.harness.call('demo_run', {}), 'HA_ERR_PLUGIN_DEAD');
  t.match(
    dead.message,
    /plugin demo is not running: it crashed \(exited with code 3\) and restarts in about \d+ ms/,
    'names the plugin and when it restarts',
  );
  t.ok(f.harness.tools.get('demo_run'), 'the tool stays registered while the plugin is down');
  t.equal((await f.plugin.health()).ok, false, 'not healthy while down');

  t.equal((await f.nextState()).state, 'running', 'restarted');
  t.ok(Date.now() - crashedAt >= 150, 'not before the backoff');
  const secondPid = await f.harness.call('demo_run', {});
  t.not(secondPid, firstPid, 'a new process answers');
  t.notOk(processExists(firstPid as number), 'the crashed process is gone');

  const again = f.nextState();
  await expectErrorAsync(t, () => f.harness.call('demo_run', { crash: true }), 'HA_ERR_PLUGIN_DEAD');
  t.match((await again).detail, /restarting in 400 ms/, 'the second crash within the window waits twice as long');
  t.equal((await f.nextState()).state, 'running');
  t.equal(typeof (await f.harness.call('demo_run', {})), 'number', 'works again');
});

t.test('restart_max_crashes crashes within the window mark the plugin failed and it stays down', async (t) => {
  const f = processFixture(t, {
    // Crashes shortly after every start.
    source: toolPlugin('return 1;', 'setTimeout(() => process.exit(1), 30);'),
    limits: { restart_backoff_ms: 10, restart_max_crashes: 4 },
  });
  await f.plugin.start(signal());
  let report = await f.nextState();
  while (report.state !== 'failed') report = await f.nextState();
  t.same(
    f.states.map((s) => s.state),
    ['restarting', 'running', 'restarting', 'running', 'restarting', 'running', 'failed'],
    'three restarts, then failed at the fourth crash',
  );
  t.match(report.detail, /crashed 4 times within 5 min/, 'the failure says why');
  const error = await expectErrorAsync(t, () => f.harness.call('demo_run', {}), 'HA_ERR_PLUGIN_DEAD');
  t.match(error.message, /crashed 4 times .* will not restart until it is reloaded/);
  t.equal(f.plugin.pid, undefined, 'no process runs');
  t.equal((await f.plugin.health()).ok, false);
});

t.test('a call that takes longer than call_timeout_ms fails with HA_ERR_PLUGIN_TIMEOUT and is cancelled in the child', async (t) => {
  const f = processFixture(t, {
    // Long enough that the ping after the timeout is answered even on a busy machine.
    limits: { call_timeout_ms: 1000 },
    source: toolPlugin(
      // Counted in the listener itself: it runs as the cancel is read, before any later message.
      `if (args.report) return cancelled;
       await new Promise((resolve) => tool.signal.addEventListener('abort', () => resolve(cancelled++)));`,
      'let cancelled = 0;',
    ),
  });
  await f.plugin.start(signal());
  const error = await expectErrorAsync(t, () => f.harness.call('demo_run', {}), 'HA_ERR_PLUGIN_TIMEOUT');
  t.match(error.message, /demo: tool\.call did not finish within 1000 ms/);
  t.equal(await f.harness.call('demo_run', { report: true }), 1, "the tool's signal was aborted in the child");
  t.same(f.states, [], 'a slow call is not a crash');
});

t.test('a stuck event loop: the call times out, the ping gets no answer, the process is killed and restarted', async (t) => {
  const f = processFixture(t, {
    // plugin.init and plugin.start run under the same limit: 300 ms was too short for a child to
    // load its plugin on a loaded test machine.
    limits: { call_timeout_ms: 1500 },
    source: toolPlugin('if (args.spin) for (;;) {} return "ok";'),
  });
  await f.plugin.start(signal());
  const pid = f.plugin.pid;
  const restarting = f.nextState();
  await expectErrorAsync(t, () => f.harness.call('demo_run', { spin: true }), 'HA_ERR_PLUGIN_TIMEOUT');
  t.match((await restarting).detail, /stopped answering/, 'killed as stuck');
  t.equal((await f.nextState()).state, 'running');
  t.notOk(processExists(pid as number), 'the stuck process is gone');
  t.equal(await f.harness.call('demo_run', {}), 'ok');
});

t.test("an aborted ToolContext.signal cancels the call at once and aborts the tool's signal in the child", async (t) => {
  const f = processFixture(t, {
    source: toolPlugin(`
      await ctx.io.injectInput({ channel: 'c', payload: 'started' });
      // The cancel may arrive before this line runs: a signal aborted already does not fire again.
      if (!tool.signal.aborted) await new Promise((resolve) => tool.signal.addEventListener('abort', resolve));
      const reason = String(tool.signal.reason?.message);
      await ctx.io.injectInput({ channel: 'c', payload: 'aborted: ' + reason });
      return 'late';`),
  });
  await f.plugin.start(signal());
  const controller = new AbortController();
  const started = f.harness.nextInjected();
  const call = f.harness.call('demo_run', {}, { signal: controller.signal });
  t.equal((await started).input.payload, 'started');
  const aborted = f.harness.nextInjected();
  controller.abort();
  await expectErrorAsync(t, () => call, 'HA_ERR_ABORTED');
  t.match((await aborted).input.payload, /^aborted: /, 'the tool in the child saw its signal abort');
});

t.test('a plugin that exhausts its heap dies alone and comes back', async (t) => {
  const f = processFixture(t, {
    limits: { process_heap_mb: 32 },
    source: toolPlugin(`
      if (!args.hog) return 'fine';
      const hoard = [];
      for (;;) hoard.push(new Array(100000).fill(Math.random()));`),
  });
  await f.plugin.start(signal());
  const restarting = f.nextState();
  const error = await expectErrorAsync(t, () => f.harness.call('demo_run', { hog: true }), 'HA_ERR_PLUGIN_DEAD');
  t.match(error.message, /ran out of heap memory \(limit 32 MB\)/, 'the call says the plugin ran out of memory');
  t.equal((await restarting).state, 'restarting', 'handled as a crash');
  t.equal((await f.nextState()).state, 'running');
  t.equal(await f.harness.call('demo_run', {}), 'fine', 'the restarted plugin works; this process never noticed');
});

t.test('memory outside the heap: health() kills a process far above its heap limit, and it restarts', async (t) => {
  const f = processFixture(t, {
    limits: { process_heap_mb: 16 },
    // Buffers live outside the V8 heap, so --max-old-space-size does not bound them.
    source: toolPlugin(`globalThis.hoard = Buffer.alloc(140 * 1024 * 1024, 1); return 'holding';`),
  });
  await f.plugin.start(signal());
  t.equal((await f.plugin.health()).ok, true, 'healthy at first');
  t.equal(await f.harness.call('demo_run', {}), 'holding');
  const restarting = f.nextState();
  const health = await f.plugin.health();
  t.equal(health.ok, false);
  t.match(health.detail, /used \d+ MB of memory, more than 96 MB/, 'the health answer says why');
  t.match((await restarting).detail, /more than 96 MB/, 'killed and handled as a crash');
  t.equal((await f.nextState()).state, 'running');
});

t.test('stop() while a restart is pending cancels it: nothing restarts after stop', async (t) => {
  const f = processFixture(t, { source: CRASHY, limits: { restart_backoff_ms: 60_000 } });
  await f.plugin.start(signal());
  const restarting = f.nextState();
  await expectErrorAsync(t, () => f.harness.call('demo_run', { crash: true }), 'HA_ERR_PLUGIN_DEAD');
  t.match((await restarting).detail, /restarting in 60 s/);
  await f.plugin.stop();
  t.same(
    f.states.map((s) => s.state),
    ['restarting'],
    'no further state',
  );
  t.equal(f.plugin.pid, undefined, 'no process');
  t.equal(f.harness.tools.get('demo_run'), undefined, 'tools removed');
  const error = await expectErrorAsync(t, () => f.plugin.start(signal()), 'HA_ERR_PLUGIN_STATE');
  t.match(error.message, /already started/, 'a stopped instance is not started again (the host makes a new one)');
});
