import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ManualClock } from '../../../../devices/gpio/gpio-clock.js';
import { type GuardedPinConfig, PinGuard, type PinGuardEvent } from '../../../../devices/gpio/pin-guard.js';
import { SimulatedGpioBackend } from '../../../../devices/gpio/simulated-backend.js';
import { expectErrorAsync, tempDir } from '../../fixtures/support.js';

const signal = () => new AbortController().signal;
const WATCHER = fileURLToPath(new URL('../../../../dist/devices/gpio/safe-state-watcher.js', import.meta.url));

function setup(pins: GuardedPinConfig[], extra: { watcher?: { reportFile: string } } = {}) {
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock });
  const events: PinGuardEvent[] = [];
  const wires: string[] = [];
  backend.control.onWire((c) => wires.push(`${c.bcm}=${c.level}`));
  const guard = new PinGuard({ backend, pins, clock, onEvent: (e) => events.push(e), watcher: extra.watcher ?? false });
  return { clock, backend, control: backend.control, guard, events, wires };
}

const PUMP: GuardedPinConfig = { name: 'garden pump', bcm: 12, direction: 'out', safe: 0, max_on_time_s: 300 };
const RELAY: GuardedPinConfig = { name: 'kitchen light', bcm: 17, direction: 'out', active_low: true, safe: 0, initial: 1 };
const BUTTON: GuardedPinConfig = {
  name: 'front door button',
  bcm: 27,
  direction: 'in',
  active_low: true,
  bias: 'pull-up',
  edge: 'rising',
  debounce_ms: 50,
};

t.test('start: outputs open at their safe value first, the initial value comes after', async (t) => {
  const { guard, wires, events, control } = setup([RELAY, { name: 'heater', bcm: 5, direction: 'out', safe: 'keep', initial: 1 }]);
  const order: string[] = [];
  control.onWire((c) => order.push(`wire ${c.bcm}=${c.level}`));
  await guard.start(signal());
  t.same(wires, ['17=1', '5=1', '17=0'], 'relay off (high, active low), heater at its initial, then the relay on');
  t.match(events[0], { type: 'safe_state', reason: 'start', pins: ['kitchen light'] }, 'keep pins are not in the safe list');
  t.same(
    guard.list().map((p) => [p.name, p.value]),
    [
      ['kitchen light', 1],
      ['heater', 1],
    ],
  );
  t.equal(await guard.read('kitchen light'), 1);
  await guard.stop();
});

t.test('stop: outputs to safe (keep pins untouched), everything released', async (t) => {
  const { guard, backend, control, events } = setup([
    RELAY,
    { name: 'heater', bcm: 5, direction: 'out', safe: 'keep', initial: 1 },
    BUTTON,
  ]);
  await guard.start(signal());
  await guard.stop();
  t.equal(control.level(17), 1, 'relay off: active-low wire high');
  t.equal(control.level(5), 1, 'the keep pin stays where it was');
  t.match(events.at(-1), { type: 'safe_state', reason: 'stop', pins: ['kitchen light'], errors: [] });
  t.ok(await backend.open(17, { direction: 'out' }), 'the pins were released');
  await expectErrorAsync(t, () => guard.write('kitchen light', 1), 'HA_ERR_GPIO_UNAVAILABLE');
});

t.test('max_on_time: the pump is switched off at its limit without anyone calling', async (t) => {
  const { guard, clock, control, events } = setup([PUMP]);
  await guard.start(signal());
  const t0 = clock.now();
  await guard.write('garden pump', 1);
  clock.advance(120_000);
  await guard.write('garden pump', 1); // a second "on" does not extend the limit
  clock.advance(179_999);
  t.equal(control.level(12), 1, 'still on just before the limit');
  clock.advance(1);
  await Promise.resolve();
  await Promise.resolve();
  t.equal(control.level(12), 0, 'off at exactly 300 s');
  t.match(events.at(-1), { type: 'max_on_time', name: 'garden pump', bcm: 12, on_ms: 300_000, at: t0 + 300_000 });
  t.equal(guard.list()[0]?.value, 0);
  await guard.stop();
});

t.test('max_on_time: switching off in time cancels the limit; a new switch-on starts a new one', async (t) => {
  const { guard, clock, events } = setup([PUMP]);
  await guard.start(signal());
  await guard.write('garden pump', 1);
  clock.advance(200_000);
  await guard.write('garden pump', 0);
  clock.advance(200_000);
  t.notOk(
    events.some((e) => e.type === 'max_on_time'),
    'no limit event after a timely switch-off',
  );
  await guard.write('garden pump', 1);
  clock.advance(299_000);
  t.notOk(events.some((e) => e.type === 'max_on_time'));
  clock.advance(1_000);
  await new Promise((r) => setImmediate(r));
  t.equal(events.filter((e) => e.type === 'max_on_time').length, 1);
  await guard.stop();
});

t.test('max_on_time: a failing switch-off is reported and retried until it works', async (t) => {
  const { guard, clock, control, events } = setup([PUMP]);
  await guard.start(signal());
  await guard.write('garden pump', 1);
  control.failNext(12, 'write');
  clock.advance(300_000);
  await new Promise((r) => setImmediate(r));
  t.match(events.at(-1), { type: 'pin_error', name: 'garden pump', error: { code: 'HA_ERR_GPIO_IO' } });
  t.equal(control.level(12), 1, 'still on after the failed write');
  clock.advance(5_000);
  await new Promise((r) => setImmediate(r));
  t.equal(control.level(12), 0, 'off after the retry');
  t.match(events.at(-1), { type: 'max_on_time', on_ms: 305_000 });
  await guard.stop();
});

t.test('pulse: on for pulse_ms then back to rest; a write during the pulse wins', async (t) => {
  const { guard, clock, control } = setup([{ name: 'garage door', bcm: 23, direction: 'out', safe: 0, pulse_ms: 500 }, RELAY]);
  await guard.start(signal());
  let done = false;
  const pulse = guard.pulse('garage door').then(() => {
    done = true;
  });
  await new Promise((r) => setImmediate(r));
  t.equal(control.level(23), 1, 'on during the pulse');
  clock.advance(499);
  await new Promise((r) => setImmediate(r));
  t.notOk(done);
  clock.advance(1);
  await pulse;
  t.equal(control.level(23), 0, 'back to rest after 500 ms');

  const second = guard.pulse('garage door', 2_000);
  await new Promise((r) => setImmediate(r));
  await guard.write('garage door', 1);
  await second;
  t.pass('the superseded pulse() resolved');
  clock.advance(5_000);
  t.equal(control.level(23), 1, 'the later write was not undone by the cancelled pulse');
  await expectErrorAsync(t, () => guard.pulse('kitchen light'), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => guard.pulse('garage door', 120_000), 'HA_ERR_GPIO_CONFIG');
  await guard.stop();
});

t.test('inputs: debounced edges by name, also as events; wrong use is an error', async (t) => {
  const { guard, clock, control, events } = setup([BUTTON, RELAY]);
  await guard.start(signal());
  const presses: string[] = [];
  guard.onEdge('front door button', (e) => presses.push(`${e.edge}@${e.at}`));
  const t0 = clock.now();
  control.press(27, { bounces: 4, bounceMs: 2, holdMs: 300 });
  clock.advance(1_000);
  t.same(presses, [`rising@${t0}`], 'one press, bounces and the release (edge rising) filtered');
  t.match(
    events.filter((e) => e.type === 'edge'),
    [{ type: 'edge', name: 'front door button', event: { edge: 'rising', value: 1 } }],
  );
  t.equal(await guard.read('front door button'), 0);
  await expectErrorAsync(t, () => guard.write('front door button', 1), 'HA_ERR_GPIO_DIRECTION');
  await expectErrorAsync(t, () => Promise.resolve().then(() => guard.onEdge('kitchen light', () => {})), 'HA_ERR_GPIO_DIRECTION');
  await expectErrorAsync(t, () => guard.read('nobody'), 'HA_ERR_GPIO_CONFIG');
  await guard.stop();
});

t.test('configuration mistakes are refused before any pin is touched', async (t) => {
  const cases: Array<[string, GuardedPinConfig[]]> = [
    ['duplicate name', [RELAY, { ...PUMP, name: RELAY.name }]],
    ['duplicate pin', [RELAY, { ...PUMP, bcm: RELAY.bcm }]],
    ['limit on a safe-on output', [{ ...PUMP, safe: 1 }]],
    ['limit on an output that starts on', [{ ...PUMP, initial: 1 }]],
    ['safe on an input', [{ ...BUTTON, safe: 0 } as GuardedPinConfig]],
    ['pulse too long', [{ ...PUMP, pulse_ms: 600_000 }]],
    ['negative limit', [{ ...PUMP, max_on_time_s: -1 }]],
    ['nameless', [{ ...PUMP, name: ' ' }]],
  ];
  for (const [what, pins] of cases) {
    const { guard, wires } = setup(pins);
    const error = await expectErrorAsync(t, () => guard.start(signal()), 'HA_ERR_GPIO_CONFIG');
    t.ok(error, what);
    t.same(wires, [], `${what}: no wire changed`);
  }
});

t.test('a failed start leaves the outputs at safe and released', async (t) => {
  const { guard, backend, control } = setup([RELAY, BUTTON]);
  control.failNext(27, 'open');
  await expectErrorAsync(t, () => guard.start(signal()), 'HA_ERR_GPIO_IO');
  t.equal(control.level(17), 1, 'relay off again');
  t.ok(await backend.open(17, { direction: 'out' }), 'released');
});

t.test("a report left by the previous run's watcher is announced once and removed", async (t) => {
  const dir = tempDir(t, 'ha-guard-');
  const reportFile = join(dir, 'gpio-safe-state.json');
  const report = { outcome: 'applied', parent_pid: 4242, at: '2025-01-01T00:00:00.000Z', steps: 2, errors: [] };
  writeFileSync(reportFile, JSON.stringify(report));
  const { guard, events } = setup([RELAY], { watcher: { reportFile } });
  await guard.start(signal());
  t.match(events[0], { type: 'previous_crash', report });
  t.match(
    events.find((e) => e.type === 'no_crash_protection'),
    { pins: ['kitchen light'], reason: /simulated GPIO.*no way to restore outputs/ },
    'a back end that cannot restore outputs after a crash says so',
  );
  t.notOk(existsSync(reportFile));
  await guard.stop();
});

t.test(
  'a safe write that fails at stop is left to the watcher, which applies it',
  { skip: existsSync(WATCHER) ? false : 'dist/ is not built' },
  async (t) => {
    const dir = tempDir(t, 'ha-guard-');
    const clock = new ManualClock();
    const backend = new SimulatedGpioBackend({ clock, stateDir: join(dir, 'pins') });
    const reportFile = join(dir, 'report.json');
    const events: PinGuardEvent[] = [];
    const guard = new PinGuard({
      backend,
      pins: [RELAY, PUMP],
      clock,
      onEvent: (e) => events.push(e),
      watcher: { script: WATCHER, reportFile },
    });
    await guard.start(signal());
    await guard.write('garden pump', 1);
    backend.control.failNext(12, 'write');
    await guard.stop();
    t.match(events.at(-1), {
      type: 'safe_state',
      reason: 'stop',
      pins: ['kitchen light'],
      errors: [/garden pump: .*simulated write failure/],
    });
    while (!existsSync(reportFile) || !readFileSync(reportFile, 'utf8').endsWith('\n')) await new Promise((r) => setTimeout(r, 10));
    t.match(JSON.parse(readFileSync(reportFile, 'utf8')), { outcome: 'applied', errors: [] });
    t.equal(readFileSync(join(dir, 'pins', 'gpio12'), 'utf8'), '0', 'the pump is off, written by the watcher');
  },
);

t.test(
  'a clean stop disarms the watcher: it exits without writing',
  { skip: existsSync(WATCHER) ? false : 'dist/ is not built' },
  async (t) => {
    const dir = tempDir(t, 'ha-guard-');
    const backend = new SimulatedGpioBackend({ stateDir: join(dir, 'pins') });
    const reportFile = join(dir, 'report.json');
    const guard = new PinGuard({ backend, pins: [PUMP], watcher: { script: WATCHER, reportFile } });
    await guard.start(signal());
    const pid = guard.watcherPid;
    t.ok(pid !== undefined && existsSync(`/proc/${pid}`), 'the watcher runs while the pins are held');
    await guard.stop();
    t.match(JSON.parse(readFileSync(reportFile, 'utf8')), { outcome: 'disarmed' }, 'stop() waited for the watcher to finish');
    t.equal(guard.watcherPid, undefined);
  },
);
