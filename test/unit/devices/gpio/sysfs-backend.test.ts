/**
 * The sysfs back end's file path against the fake tree (any root other than /sys/class/gpio never
 * uses onoff). The onoff path: sysfs-onoff.test.ts; the real onoff: sysfs-namespace.test.ts.
 */
import { join } from 'node:path';
import t from 'tap';
import type { EdgeEvent } from '../../../../devices/gpio/gpio-backend.js';
import { ManualClock } from '../../../../devices/gpio/gpio-clock.js';
import { applySafeStateSteps } from '../../../../devices/gpio/safe-state.js';
import { SysfsGpioBackend } from '../../../../devices/gpio/sysfs-backend.js';
import type { SysfsEdgeSourceFactory } from '../../../../devices/gpio/sysfs-edge-source.js';
import { expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { FakeSysfs, PI3_CHIPS, PI4_CHIPS, PI5_CHIPS } from './fixtures/fake-sysfs.js';

type T = Parameters<typeof tempDir>[0];

function fake(t: T, chips = PI4_CHIPS): FakeSysfs {
  return new FakeSysfs(join(tempDir(t, 'ha-gpio-sysfs-'), 'gpio'), chips).start((fn) => t.teardown(fn));
}

function nextEdge(pin: { onEdge(l: (e: EdgeEvent) => void): () => void }): Promise<EdgeEvent> {
  return new Promise((resolve) => {
    const off = pin.onEdge((e) => {
      off();
      resolve(e);
    });
  });
}

t.test('Pi 4 (base 512): an active-low output is exported as 529 and configured glitch-free', async (t) => {
  const sys = fake(t);
  const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll' });
  const relay = await backend.open(17, { direction: 'out', active_low: true, initial: 0 });
  t.same(sys.log, ['export 529'], 'base + BCM, never plain 17');
  t.equal(sys.attr(529, 'active_low'), '1');
  t.equal(sys.attr(529, 'direction'), 'high', 'off on an active-low board: direction and level in one write');
  await relay.write(1);
  t.equal(sys.attr(529, 'value'), '1', 'logical value; the kernel inverts it because active_low is 1');
  t.equal(await relay.read(), 1);
  await relay.close();
  t.same(sys.log, ['export 529', 'unexport 529']);
  t.match(sys.atUnexport.get(529), { value: '1', active_low: '1' }, 'released while on: close does not switch');
  t.notOk(sys.isExported(529));
  await expectErrorAsync(t, () => relay.write(0), 'HA_ERR_GPIO_UNAVAILABLE');
});

t.test('Pi 3 (base 0) and Pi 5 (base 571) export the right numbers', async (t) => {
  for (const [chips, expected] of [
    [PI3_CHIPS, 17],
    [PI5_CHIPS, 588],
  ] as const) {
    const sys = fake(t, chips);
    const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll' });
    const led = await backend.open(17, { direction: 'out', initial: 1 });
    t.equal(sys.attr(expected, 'direction'), 'high');
    t.equal(sys.attr(expected, 'active_low'), '0');
    await led.close();
    t.same(sys.log, [`export ${expected}`, `unexport ${expected}`]);
  }
});

t.test('inputs: direction in, edge both for the debouncer, reads, and edges by polling the value file', async (t) => {
  const sys = fake(t);
  const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll', pollIntervalMs: 2 });
  const button = await backend.open(27, { direction: 'in', active_low: true, edge: 'both', bias: 'pull-up' });
  t.equal(sys.attr(539, 'direction'), 'in');
  t.equal(sys.attr(539, 'edge'), 'both');
  t.equal(sys.attr(539, 'active_low'), '1');
  t.match(button.warnings, [/cannot set bias pull-up.*config\.txt/], 'the pull-up it cannot set is reported');
  t.match(backend.describe(), /polling every 2 ms/);
  t.equal(await button.read(), 0);
  const rising = nextEdge(button);
  sys.setAttr(539, 'value', '1'); // the kernel shows the logical level (active_low applied)
  t.match(await rising, { bcm: 27, edge: 'rising', value: 1 });
  t.equal(await button.read(), 1);
  const falling = nextEdge(button);
  sys.setAttr(539, 'value', '0');
  t.match(await falling, { bcm: 27, edge: 'falling', value: 0 });
  await expectErrorAsync(t, () => button.write(1), 'HA_ERR_GPIO_DIRECTION');
  await backend.close();
  t.notOk(sys.isExported(539), 'close unexports');
});

t.test('a value file that cannot be read is reported once through onError', async (t) => {
  const sys = fake(t);
  const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll', pollIntervalMs: 2 });
  const pin = await backend.open(6, { direction: 'in', edge: 'both' });
  const failed = new Promise<string>((resolve) => pin.onError((e) => resolve(e.code)));
  sys.setAttr(518, 'value', 'garbage');
  t.equal(await failed, 'HA_ERR_GPIO_IO');
  await backend.close();
});

t.test('a pin left exported by a crashed run is taken over without a new export', async (t) => {
  const sys = fake(t);
  sys.exported(529, { direction: 'out', value: '1', active_low: '0' });
  const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll' });
  await backend.open(17, { direction: 'out', initial: 0 });
  t.same(sys.log, [], 'no export written (the kernel would answer EBUSY)');
  t.equal(sys.attr(529, 'direction'), 'low', 'reconfigured to the requested initial level');
});

t.test('export that never appears and a missing chip are HA_ERR_GPIO_UNAVAILABLE', async (t) => {
  const root = join(tempDir(t, 'ha-gpio-sysfs-'), 'gpio');
  const sys = new FakeSysfs(root, PI4_CHIPS); // no kernel running: export is never answered
  const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll', exportTimeoutMs: 30 });
  await expectErrorAsync(t, () => backend.open(17, { direction: 'out' }), 'HA_ERR_GPIO_UNAVAILABLE');
  const none = new SysfsGpioBackend({ root: join(tempDir(t), 'absent') });
  await expectErrorAsync(t, () => none.open(17, { direction: 'out' }), 'HA_ERR_GPIO_UNAVAILABLE');
});

t.test('safe-state steps write direction high/low, independent of active_low', async (t) => {
  const sys = fake(t);
  const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: 'poll' });
  const relay = await backend.open(17, { direction: 'out', active_low: true, initial: 1 });
  const pump = await backend.open(18, { direction: 'out', initial: 1 });
  const steps = [...backend.safeStateSteps(relay, 0), ...backend.safeStateSteps(pump, 0)];
  t.same(steps, [
    { kind: 'write', path: join(sys.root, 'gpio529', 'direction'), data: 'high' },
    { kind: 'write', path: join(sys.root, 'gpio530', 'direction'), data: 'low' },
  ]);
  sys.setAttr(529, 'direction', 'out'); // what the kernel reads back once the pin is an output
  sys.setAttr(530, 'direction', 'out');
  t.same(await applySafeStateSteps(steps), []);
  t.equal(sys.attr(529, 'direction'), 'high');
  t.equal(sys.attr(530, 'direction'), 'low');
});

t.test('an injected edge source gets the kernel number; its levels go through the debouncer', async (t) => {
  const sys = fake(t);
  const clock = new ManualClock();
  const requests: number[] = [];
  let push: ((v: 0 | 1) => void) | undefined;
  const factory: SysfsEdgeSourceFactory = async (request) => {
    requests.push(request.kernelNumber);
    return {
      kind: 'onoff',
      start: (onLevel) => {
        push = onLevel;
      },
      stop: async () => {},
    };
  };
  const backend = new SysfsGpioBackend({ root: sys.root, edgeSource: factory, clock });
  const pin = await backend.open(5, { direction: 'in', edge: 'both', debounce_ms: 20 });
  t.same(requests, [517]);
  t.match(backend.describe(), /edges via onoff/);
  const events: string[] = [];
  const t0 = clock.now();
  pin.onEdge((e) => events.push(`${e.edge}@${e.at - t0}`));
  push?.(1);
  push?.(0);
  push?.(1);
  clock.advance(50);
  t.same(events, ['rising@0'], 'bounces inside the window are dropped; the window ends level, so nothing more');
});
