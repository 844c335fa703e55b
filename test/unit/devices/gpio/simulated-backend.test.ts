import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { EdgeFilter } from '../../../../devices/gpio/edge-filter.js';
import type { EdgeEvent, GpioValue } from '../../../../devices/gpio/gpio-backend.js';
import { ManualClock } from '../../../../devices/gpio/gpio-clock.js';
import { applySafeStateSteps } from '../../../../devices/gpio/safe-state.js';
import { SimulatedGpioBackend } from '../../../../devices/gpio/simulated-backend.js';
import { expectErrorAsync, tempDir } from '../../fixtures/support.js';

function setup(stateDir?: string) {
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock, ...(stateDir === undefined ? {} : { stateDir }) });
  return { clock, backend, control: backend.control };
}

const summary = (events: EdgeEvent[]) => events.map((e) => `${e.edge}@${e.at}`);

t.test('a bouncing press without debounce gives every bounce; with debounce exactly one press and one release', async (t) => {
  for (const debounce of [0, 20]) {
    const { clock, backend, control } = setup();
    const pin = await backend.open(4, { direction: 'in', edge: 'both', debounce_ms: debounce });
    const events: EdgeEvent[] = [];
    pin.onEdge((e) => events.push(e));
    const t0 = clock.now();
    control.press(4, { bounces: 3, bounceMs: 1, holdMs: 100 });
    clock.advance(200);
    const rising = events.filter((e) => e.edge === 'rising').length;
    const falling = events.filter((e) => e.edge === 'falling').length;
    if (debounce === 0) {
      // press: 1,0,1,0,1,0,1 (4 rising, 3 falling); release mirrors it (4 falling, 3 rising)
      t.equal(rising, 7, 'no debounce: 7 rising');
      t.equal(falling, 7, 'no debounce: 7 falling');
    } else {
      t.same(summary(events), [`rising@${t0}`, `falling@${t0 + 100}`], 'debounced: reported at the first contact, no added latency');
    }
    t.equal(await pin.read(), 0, 'released at the end');
    await backend.close();
  }
});

t.test('a release inside the debounce window is reported when the window ends', async (t) => {
  const { clock, backend, control } = setup();
  const pin = await backend.open(5, { direction: 'in', edge: 'both', debounce_ms: 50 });
  const events: EdgeEvent[] = [];
  pin.onEdge((e) => events.push(e));
  const t0 = clock.now();
  control.drive(5, 1);
  clock.advance(10);
  control.drive(5, 0); // a short tap, shorter than the debounce
  clock.advance(100);
  t.same(summary(events), [`rising@${t0}`, `falling@${t0 + 50}`]);
});

t.test('edge selection: rising only, falling only', async (t) => {
  const { clock, backend, control } = setup();
  const up = await backend.open(6, { direction: 'in', edge: 'rising' });
  const down = await backend.open(7, { direction: 'in', edge: 'falling' });
  const seen: string[] = [];
  up.onEdge((e) => seen.push(`6:${e.edge}:${e.value}`));
  down.onEdge((e) => seen.push(`7:${e.edge}:${e.value}`));
  for (const level of [1, 0, 1, 0] as GpioValue[]) {
    control.drive(6, level);
    control.drive(7, level);
    clock.advance(1);
  }
  t.same(seen, ['6:rising:1', '7:falling:0', '6:rising:1', '7:falling:0']);
});

t.test('active_low: a button to ground is logical 1 when pressed; edges are logical', async (t) => {
  const { clock, backend, control } = setup();
  const pin = await backend.open(17, { direction: 'in', active_low: true, bias: 'pull-up', edge: 'both', debounce_ms: 5 });
  t.equal(control.level(17), 1, 'the pull-up holds the wire high');
  t.equal(await pin.read(), 0, 'not pressed');
  const events: EdgeEvent[] = [];
  pin.onEdge((e) => events.push(e));
  control.press(17, { bounces: 2, bounceMs: 1, holdMs: 30 });
  clock.advance(5);
  t.equal(control.level(17), 0, 'the wire is low while pressed');
  t.equal(await pin.read(), 1, 'pressed reads 1');
  clock.advance(100);
  t.same(
    events.map((e) => `${e.edge}:${e.value}`),
    ['rising:1', 'falling:0'],
  );
});

t.test('outputs: active_low on the wire, reads return the value written, initial at open', async (t) => {
  const { backend, control } = setup();
  const relay = await backend.open(22, { direction: 'out', active_low: true, initial: 0 });
  t.equal(control.level(22), 1, 'off on an active-low relay board is a high wire');
  await relay.write(1);
  t.equal(control.level(22), 0);
  t.equal(await relay.read(), 1);
  const led = await backend.open(23, { direction: 'out', initial: 1 });
  t.equal(control.level(23), 1);
  t.equal(await led.read(), 1);
  const wires: string[] = [];
  control.onWire((c) => wires.push(`${c.bcm}=${c.level}`));
  await led.write(0);
  await led.write(0);
  t.same(wires, ['23=0'], 'only changes are reported');
});

t.test('errors: direction, busy, closed, bad values and injected I/O failures', async (t) => {
  const { backend, control } = setup();
  const input = await backend.open(2, { direction: 'in', edge: 'none' });
  const output = await backend.open(3, { direction: 'out' });
  await expectErrorAsync(t, () => input.write(1), 'HA_ERR_GPIO_DIRECTION');
  await expectErrorAsync(t, () => output.onEdge(() => {}), 'HA_ERR_GPIO_DIRECTION');
  await expectErrorAsync(t, () => input.onEdge(() => {}), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => backend.open(2, { direction: 'in' }), 'HA_ERR_GPIO_UNAVAILABLE');
  await expectErrorAsync(t, () => output.write(2 as GpioValue), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => Promise.resolve().then(() => control.drive(3, 1)), 'HA_ERR_GPIO_DIRECTION');
  control.failNext(3, 'write');
  await expectErrorAsync(t, () => output.write(1), 'HA_ERR_GPIO_IO');
  await output.write(1);
  t.equal(control.level(3), 1, 'the failure was one-shot');
  control.failNext(2, 'read', 2);
  await expectErrorAsync(t, () => input.read(), 'HA_ERR_GPIO_IO');
  await expectErrorAsync(t, () => input.read(), 'HA_ERR_GPIO_IO');
  t.equal(await input.read(), 0);
  await output.close();
  await expectErrorAsync(t, () => output.write(0), 'HA_ERR_GPIO_UNAVAILABLE');
  const again = await backend.open(3, { direction: 'out' });
  t.ok(again, 'a closed pin can be opened again');
});

t.test('invalid pin options are HA_ERR_GPIO_CONFIG before anything changes', async (t) => {
  const { backend } = setup();
  await expectErrorAsync(t, () => backend.open(28, { direction: 'out' }), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => backend.open(-1, { direction: 'in' }), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => backend.open(4, { direction: 'out', edge: 'both' }), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => backend.open(4, { direction: 'in', debounce_ms: -5 }), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => backend.open(4, { direction: 'in', debounce_ms: 20_000 }), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => backend.open(4, { direction: 'sideways' as 'in' }), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => backend.open(4, { direction: 'out', initial: 3 as GpioValue }), 'HA_ERR_GPIO_CONFIG');
  t.ok(await backend.open(4, { direction: 'in' }), 'the pin was not left busy by the failed attempts');
});

t.test('stateDir: output wire levels are files, and the safe-state steps write the safe wire level', async (t) => {
  const dir = tempDir(t, 'ha-gpio-sim-');
  const { backend } = setup(dir);
  const relay = await backend.open(22, { direction: 'out', active_low: true, initial: 1 });
  t.equal(readFileSync(join(dir, 'gpio22'), 'utf8'), '0', 'on, active low: wire low');
  const steps = backend.safeStateSteps(relay, 0);
  t.same(steps, [{ kind: 'write', path: join(dir, 'gpio22'), data: '1' }]);
  t.same(await applySafeStateSteps(steps), []);
  t.equal(readFileSync(join(dir, 'gpio22'), 'utf8'), '1', 'safe (off) on an active-low board: wire high');
  const noState = setup();
  const pin = await noState.backend.open(22, { direction: 'out' });
  t.same(noState.backend.safeStateSteps(pin, 0), [], 'without a state dir nothing outlives the process');
});

t.test('EdgeFilter on its own: repeats are ignored, close cancels the pending window', async (t) => {
  const clock = new ManualClock();
  const events: EdgeEvent[] = [];
  const filter = new EdgeFilter({ bcm: 1, edge: 'both', debounceMs: 10, clock, initial: 0, emit: (e) => events.push(e) });
  filter.sample(0);
  t.equal(events.length, 0, 'no change, no edge');
  filter.sample(1);
  filter.sample(0);
  t.equal(filter.level, 1);
  t.equal(filter.raw, 0);
  filter.close();
  clock.advance(50);
  t.equal(events.length, 1, 'the closed filter reports nothing more');
  t.equal(clock.pending(), 0);
});
