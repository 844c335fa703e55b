import t from 'tap';
import { LoopDelayCheck } from '../../../src/supervisor/health.js';

t.test('LoopDelayCheck passes when nothing is measured and reports its limit', async (t) => {
  const loop = new LoopDelayCheck(() => 2000);
  const result = loop.run();
  t.equal(result.ok, true);
  t.equal(result.name, 'event_loop');
  t.match(result.detail, 'limit 2000 ms');
  t.equal(loop.closeWindow(), 0);
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
