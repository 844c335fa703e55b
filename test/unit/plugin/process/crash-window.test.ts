import t from 'tap';
import { CrashWindow } from '../../../../src/plugin/process/crash-window.js';

const limits = { restart_backoff_ms: 1000, restart_max_crashes: 4, restart_window_ms: 300_000 };

t.test('backoff doubles per crash in the window; the fourth gives up', async (t) => {
  const window = new CrashWindow();
  t.same(window.record(0, limits), { crashes: 1, give_up: false, delay_ms: 1000 });
  t.same(window.record(10_000, limits), { crashes: 2, give_up: false, delay_ms: 2000 });
  t.same(window.record(20_000, limits), { crashes: 3, give_up: false, delay_ms: 4000 });
  t.same(window.record(30_000, limits), { crashes: 4, give_up: true });
});

t.test('crashes older than the window are forgotten', async (t) => {
  const window = new CrashWindow();
  window.record(0, limits);
  window.record(1000, limits);
  window.record(2000, limits);
  t.same(window.record(301_500, limits), { crashes: 2, give_up: false, delay_ms: 2000 }, 'only 2000 and now count');
});

t.test('the delay is capped', async (t) => {
  const window = new CrashWindow();
  let last = window.record(0, { ...limits, restart_max_crashes: 100 });
  for (let i = 1; i < 40; i++) last = window.record(i, { ...limits, restart_max_crashes: 100 });
  t.same(last, { crashes: 40, give_up: false, delay_ms: 600_000 });
});
