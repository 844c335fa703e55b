import t from 'tap';
import { type HealthCheck, type HealthReport, LoopDelayCheck, runChecks, Watchdog } from '../../../src/supervisor/health.js';
import type { Notifier } from '../../../src/supervisor/notifier.js';
import { captureLogs, silentLogs } from '../fixtures/support.js';

function check(name: string, result: () => boolean | Promise<boolean>): HealthCheck {
  return {
    name,
    async run() {
      return { name, ok: await result(), detail: `${name} detail` };
    },
  };
}

class FakeNotifier {
  pings = 0;
  interval: number | undefined;
  constructor(interval?: number) {
    this.interval = interval;
  }
  watchdog(): void {
    this.pings++;
  }
  watchdogIntervalMs(): number | undefined {
    return this.interval;
  }
}

t.test('runChecks collects every result; a throwing check is a failure', async (t) => {
  const report = await runChecks([
    check('db', () => true),
    {
      name: 'throws',
      run() {
        throw new Error('disk gone');
      },
    },
    {
      name: 'rejects',
      run: () => Promise.reject(new Error('async failure')),
    },
    check('slow', async () => true),
  ]);
  t.equal(report.healthy, false);
  t.same(report.checks, [
    { name: 'db', ok: true, detail: 'db detail' },
    { name: 'throws', ok: false, detail: 'disk gone' },
    { name: 'rejects', ok: false, detail: 'async failure' },
    { name: 'slow', ok: true, detail: 'slow detail' },
  ]);
  t.same(await runChecks([check('a', () => true)]), { healthy: true, checks: [{ name: 'a', ok: true, detail: 'a detail' }] });
  t.same(await runChecks([]), { healthy: true, checks: [] });
});

t.test('LoopDelayCheck passes when nothing is measured and reports its limit', async (t) => {
  const loop = new LoopDelayCheck(() => 2000);
  const result = loop.run();
  t.equal(result.ok, true);
  t.equal(result.name, 'event_loop');
  t.match(result.detail, 'limit 2000 ms');
  t.equal(loop.closeWindow(), 0);
});

t.test('Watchdog.tick pings only while healthy and reports flips', async (t) => {
  let dbOk = true;
  const notifier = new FakeNotifier();
  const flips: HealthReport[] = [];
  const captured = captureLogs();
  const watchdog = new Watchdog({
    notifier: notifier as unknown as Notifier,
    checks: () => [check('db', () => dbOk)],
    loop: new LoopDelayCheck(() => 60000),
    log: captured.logs.child('supervisor'),
    onHealthChange: (r) => void flips.push(r),
  });
  await watchdog.tick();
  t.equal(notifier.pings, 1, 'healthy: pinged');
  t.same(flips, [], 'starts healthy: no flip');

  dbOk = false;
  await watchdog.tick();
  t.equal(notifier.pings, 1, 'a failing check: no ping');
  t.equal(flips.length, 1, 'the flip to unhealthy is reported');
  t.equal(flips[0]?.healthy, false);
  t.same(
    flips[0]?.checks.filter((c) => !c.ok).map((c) => c.name),
    ['db'],
  );
  t.ok(
    captured.records().some((r) => r.level === 'error'),
    'the failure is logged',
  );

  await watchdog.tick();
  t.equal(notifier.pings, 1, 'still failing: still no ping');
  t.equal(flips.length, 1, 'no repeated report while nothing changes');

  dbOk = true;
  await watchdog.tick();
  t.equal(notifier.pings, 2, 'healthy again: pinged');
  t.equal(flips.length, 2);
  t.equal(flips[1]?.healthy, true);
});

t.test('overlapping ticks are skipped', async (t) => {
  const notifier = new FakeNotifier();
  let release: () => void = () => {};
  let runs = 0;
  const watchdog = new Watchdog({
    notifier: notifier as unknown as Notifier,
    checks: () => [
      check('slow', () => {
        runs++;
        return new Promise<boolean>((resolve) => {
          release = () => resolve(true);
        });
      }),
    ],
    loop: new LoopDelayCheck(() => 60000),
    log: silentLogs().child('supervisor'),
    onHealthChange: () => {},
  });
  const first = watchdog.tick();
  await watchdog.tick();
  t.equal(runs, 1, 'the second tick did not run the checks');
  release();
  await first;
  t.equal(notifier.pings, 1);
});

t.test('start without a systemd watchdog sets no timer; stop is symmetric', async (t) => {
  const notifier = new FakeNotifier(undefined);
  const watchdog = new Watchdog({
    notifier: notifier as unknown as Notifier,
    checks: () => [],
    loop: new LoopDelayCheck(() => 60000),
    log: silentLogs().child('supervisor'),
    onHealthChange: () => {},
  });
  await watchdog.start();
  await watchdog.stop();
  t.equal(notifier.pings, 0);
});

t.test('start with a watchdog interval pings from a timer until stop', async (t) => {
  const notifier = new FakeNotifier(5);
  const watchdog = new Watchdog({
    notifier: notifier as unknown as Notifier,
    checks: () => [check('ok', () => true)],
    loop: new LoopDelayCheck(() => 60000),
    log: silentLogs().child('supervisor'),
    onHealthChange: () => {},
  });
  let pinged: () => void = () => {};
  const firstPing = new Promise<void>((resolve) => {
    pinged = resolve;
  });
  const original = notifier.watchdog.bind(notifier);
  notifier.watchdog = () => {
    original();
    pinged();
  };
  await watchdog.start();
  t.teardown(() => watchdog.stop());
  await firstPing;
  await watchdog.stop();
  t.ok(notifier.pings >= 1, 'the timer pinged');
  // A timer left running would keep this test process alive until tap's timeout.
});

t.test('LoopDelayCheck counts a stall once, in the window it ended in', async (t) => {
  const loop = new LoopDelayCheck(() => 100);
  loop.enable();
  t.teardown(() => loop.disable());
  const until = performance.now() + 300;
  while (performance.now() < until) {
    // block the event loop on purpose
  }
  const stall = loop.closeWindow();
  t.ok(stall >= 150, `the 300 ms block is measured (got ${Math.round(stall)} ms)`);
  const report = loop.run();
  t.equal(report.ok, false, 'the check fails while the last window holds the stall');
  t.match(report.detail, /limit 100 ms/);
  await new Promise((resolve) => setTimeout(resolve, 2 * LoopDelayCheck.SAMPLE_MS));
  t.ok(loop.closeWindow() < 100, 'the next window does not count the same stall again');
  t.equal(loop.run().ok, true, 'and the check passes again');
});
