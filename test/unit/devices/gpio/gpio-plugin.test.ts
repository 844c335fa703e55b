// The GPIO device plugin on the simulated back end with a manual clock, a real entity registry
// (SQLite in a temp dir), a real tool registry and a real control registry.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { GpioBackend } from '../../../../devices/gpio/gpio-backend.js';
import { ManualClock } from '../../../../devices/gpio/gpio-clock.js';
import { fillInputText, type GpioPinSetting, planGpioPins } from '../../../../devices/gpio/gpio-pin-config.js';
import {
  createGpioPlugin,
  GpioPlugin,
  type GpioPluginOptions,
  SAFE_STATE_SPEC_FILE,
  SIMULATED_STATE_DIR,
} from '../../../../devices/gpio/gpio-plugin.js';
import { SimulatedGpioBackend } from '../../../../devices/gpio/simulated-backend.js';
import type { EventMap } from '../../../../src/events/event-bus.js';
import type { ControlRegistry } from '../../../../src/plugin/control-registry.js';
import { ToolError, type ToolErrorInfo } from '../../../../src/shared/tool.js';
import {
  asContext,
  createTestPluginContext,
  type TestPluginContext,
  type TestPluginContextOptions,
} from '../../../helpers/plugin-context.js';
import { captureLogs, expectError, expectErrorAsync } from '../../fixtures/support.js';

const WATCHER = fileURLToPath(new URL('../../../../dist/devices/gpio/safe-state-watcher.js', import.meta.url));
const OWNER = 'plugin:gpio';

const LIGHT = { id: 'kitchen_light', bcm: 17, direction: 'out', area: 'kitchen', aliases: ['ceiling light'] } as const;
const PUMP = { id: 'pump', bcm: 22, direction: 'out', max_on_time_s: 60, device_class: 'outlet' } as const;
const GARAGE = { id: 'garage_door', bcm: 23, direction: 'out', pulse_ms: 500, name: 'Garage door' } as const;
const LOCK = { id: 'front_door', bcm: 24, direction: 'out', domain: 'lock', safe: 'keep' } as const;
const DOORBELL = {
  id: 'doorbell',
  bcm: 27,
  direction: 'in',
  domain: 'button',
  active_low: true,
  bias: 'pull_up',
  input_edges: 'rising',
  level: 3,
} as const;
const MOTION = {
  id: 'hall_motion',
  bcm: 5,
  direction: 'in',
  device_class: 'motion',
  input_edges: 'both',
  level: 0,
  input_text: '{name}: {edge} ({state})',
} as const;
const ALL = [LIGHT, PUMP, GARAGE, LOCK, DOORBELL, MOTION];

interface Running {
  tc: TestPluginContext;
  control: ControlRegistry;
  plugin: GpioPlugin;
  clock: ManualClock;
  backend: SimulatedGpioBackend;
  stop(): Promise<void>;
}

/**
 * A test plugin context for the gpio plugin. `atEnd` collects what must stop before the context's
 * home.db is closed at teardown (a stopping plugin still reports its outputs' last states).
 */
function context(t: Test, pins: readonly object[], settings: Record<string, unknown> = {}, extra: Partial<TestPluginContextOptions> = {}) {
  const tc = createTestPluginContext({
    name: 'gpio',
    dataDir: t.testdir(),
    settings: { backend: 'simulated', chip: '', poll_interval_ms: 10, pins, ...settings },
    ...extra,
  });
  const stops: Array<() => Promise<void>> = [];
  t.teardown(async () => {
    for (const stop of stops) await stop();
    await tc.close();
  });
  return { tc, control: tc.control, ctx: tc.context, atEnd: (stop: () => Promise<void>) => void stops.push(stop) };
}

/** A started plugin on a simulated header; stopped at teardown unless the test stops it. */
async function startGpio(t: Test, pins: readonly object[], options: GpioPluginOptions = {}): Promise<Running> {
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock });
  const { tc, control, ctx, atEnd } = context(t, pins);
  const plugin = new GpioPlugin(ctx, { clock, backend, watcher: false, ...options });
  await plugin.start(new AbortController().signal);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await plugin.stop();
  };
  atEnd(stop);
  return { tc, control, plugin, clock, backend, stop };
}

/** The ToolError a tool call fails with, as the model reads it. */
async function toolError(call: Promise<unknown>): Promise<ToolErrorInfo> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ToolError) return error.info;
    throw error;
  }
  throw new Error('the tool call succeeded');
}

/** Lets promise chains started by a timer or a call run to their end. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

function entity(r: Running, id: string) {
  const found = r.tc.entities.list({ owner: OWNER }).find((e) => e.entity_id === id);
  if (found === undefined) throw new Error(`${id} is not registered`);
  return found;
}

t.test('planGpioPins fills defaults and works out entities, services and input texts', async (t) => {
  const [light, garage, lock, bell, motion] = planGpioPins([LIGHT, GARAGE, { ...LOCK, domain: 'lock' }, DOORBELL, MOTION]);
  t.match(light, {
    id: 'kitchen_light',
    entity_id: 'switch.kitchen_light',
    name: 'Kitchen light',
    area: 'kitchen',
    services: ['turn_on', 'turn_off', 'toggle'],
    critical: false,
    guard: { name: 'kitchen_light', bcm: 17, direction: 'out', safe: 0, active_low: false },
  });
  t.notOk('initial' in (light?.guard ?? {}), 'initial null: the safe value, nothing passed on');
  t.match(garage, { name: 'Garage door', services: ['turn_on', 'toggle'], pulse_ms: 500, guard: { pulse_ms: 500 } });
  t.match(lock, { entity_id: 'lock.front_door', services: ['lock', 'unlock'], on_state: 'locked', off_state: 'unlocked', critical: true });
  t.match(bell, {
    entity_id: 'button.doorbell',
    services: [],
    level: 3,
    input_rising: true,
    input_falling: false,
    text_rising: 'Doorbell became on (GPIO edge)',
    guard: { direction: 'in', edge: 'both', debounce_ms: 20, bias: 'pull-up', active_low: true },
  });
  t.match(motion, { entity_id: 'binary_sensor.hall_motion', level: 0, input_rising: true, input_falling: true });
  t.equal(motion?.text_falling, 'Hall motion: falling (off)');
  t.same(planGpioPins([{ id: 'valve', bcm: 6, direction: 'out', domain: 'valve' }])[0]?.services, ['open', 'close']);
  t.same(planGpioPins(undefined), [], 'no pins configured');
  t.equal(fillInputText('{name} {name} {other}', 'Bell', 'rising', 'on'), 'Bell Bell {other}', 'unknown placeholders stay');
  const [watchedFalling] = planGpioPins([{ id: 'b', bcm: 4, direction: 'in', edge: 'falling', input_edges: 'rising' }]);
  t.match(watchedFalling, { input_rising: false, warnings: [/input_edges includes rising, but edge is falling/] });
});

t.test('planGpioPins names the pin and field of each mistake', async (t) => {
  const bad: Array<[unknown, RegExp]> = [
    [{ pins: 'x' }, /must be a list/],
    [
      [
        { id: 'a', bcm: 4, direction: 'out' },
        { id: 'a', bcm: 5, direction: 'out' },
      ],
      /pins\[1\] \(a\)\.id: pin id "a" is already used by plugin\.gpio\.pins\[0\]/,
    ],
    [
      [
        { id: 'a', bcm: 4, direction: 'out' },
        { id: 'b', bcm: 4, direction: 'in' },
      ],
      /pins\[1\] \(b\)\.bcm: GPIO 4 is already configured as pin "a"/,
    ],
    [[{ id: 'Kitchen Light', bcm: 4, direction: 'out' }], /\.id: must be 1-64 lowercase/],
    [[{ id: 'a', bcm: 58, direction: 'out' }], /\(a\)\.bcm: must be a BCM number from 0 to 57/],
    [[{ id: 'a', bcm: 4, direction: 'up' }], /\(a\)\.direction: must be in or out/],
    [
      [{ id: 'a', bcm: 4, direction: 'out', domain: 'binary_sensor' }],
      /\(a\)\.domain: an output can be switch, light, fan, siren, valve, lock/,
    ],
    [[{ id: 'a', bcm: 4, direction: 'in', domain: 'switch' }], /\(a\)\.domain: an input can be binary_sensor, button, not "switch"/],
    [[{ id: 'a', bcm: 4, direction: 'in', pulse_ms: 200 }], /\(a\)\.pulse_ms: applies to outputs only/],
    [[{ id: 'a', bcm: 4, direction: 'in', safe: 1 }], /\(a\)\.safe: applies to outputs only/],
    [[{ id: 'a', bcm: 4, direction: 'out', level: 3 }], /\(a\)\.level: applies to inputs only/],
    [[{ id: 'a', bcm: 4, direction: 'out', bias: 'pull_up' }], /\(a\)\.bias: applies to inputs only/],
    [[{ id: 'a', bcm: 4, direction: 'out', edge: 'rising' }], /\(a\)\.edge: applies to inputs only/],
    [[{ id: 'a', bcm: 4, direction: 'out', domain: 'lock', pulse_ms: 300 }], /\(a\)\.pulse_ms: a lock stays locked or unlocked/],
    [[{ id: 'a', bcm: 4, direction: 'out', pulse_ms: 300, safe: 1 }], /\(a\)\.safe: a momentary relay rests at 0/],
    [[{ id: 'a', bcm: 4, direction: 'out', max_on_time_s: 10, safe: 1 }], /\(a\)\.max_on_time_s: switches the output off/],
    [
      [{ id: 'a', bcm: 4, direction: 'out', max_on_time_s: 10, initial: 1 }],
      /\(a\)\.initial: an output with max_on_time_s cannot start on/,
    ],
    [[{ id: 'a', bcm: 4, direction: 'out', max_on_time_s: 86_401 }], /\(a\)\.max_on_time_s: must be a whole number/],
    [[{ id: 'a', bcm: 4, direction: 'in', level: 5 }], /\(a\)\.level: must be 0/],
    [[{ id: 'a', bcm: 4, direction: 'in', bias: 'up' }], /\(a\)\.bias: must be as_is/],
    [['pin 4'], /pins\[0\] must be an object/],
  ];
  for (const [pins, message] of bad) {
    const raw = typeof pins === 'object' && pins !== null && 'pins' in pins ? pins.pins : pins;
    t.throws(() => planGpioPins(raw), { code: 'HA_ERR_GPIO_CONFIG', message }, String(message));
  }
  const error = expectError(t, () => planGpioPins([{ id: 'a', bcm: 4, direction: 'in', pulse_ms: 2 }]), 'HA_ERR_GPIO_CONFIG');
  t.match(error.details, { pin: 'a', field: 'pulse_ms' }, 'the details name the pin and field');
});

t.test('a bad configuration stops the start before any pin or entity is touched', async (t) => {
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock });
  const pins = [
    { id: 'relay', bcm: 17, direction: 'out', active_low: true },
    { id: 'relay', bcm: 18, direction: 'out' },
  ];
  const { tc, ctx } = context(t, pins);
  const plugin = new GpioPlugin(ctx, { clock, backend, watcher: false });
  const error = await expectErrorAsync(t, () => plugin.start(new AbortController().signal), 'HA_ERR_GPIO_CONFIG');
  t.match(error.message, /plugin\.gpio\.pins\[1\] \(relay\)\.id/);
  t.equal(backend.control.level(17), 0, 'the active-low relay was never opened (it would be driven high)');
  t.same(tc.entities.list(), [], 'no entity registered');
  t.equal(tc.tools.get('gpio_read'), undefined, 'no tool registered');
  t.same(tc.entities.history('switch.relay'), [], 'nothing stored');
});

t.test('each pin becomes an entity with its domain, state and attributes', async (t) => {
  const r = await startGpio(t, ALL);
  const ids = r.tc.entities.list({ owner: OWNER }).map((e) => `${e.entity_id}=${String(e.state)}`);
  t.same(ids, [
    'binary_sensor.hall_motion=off',
    'button.doorbell=off',
    'lock.front_door=unlocked',
    'switch.garage_door=off',
    'switch.kitchen_light=off',
    'switch.pump=off',
  ]);
  t.match(entity(r, 'switch.kitchen_light'), {
    name: 'Kitchen light',
    aliases: ['ceiling light'],
    area: 'kitchen',
    device: 'gpio17',
    attributes: { bcm: 17, pin: 'kitchen_light', active_low: false },
    services: ['turn_on', 'turn_off', 'toggle'],
    critical: false,
  });
  t.match(entity(r, 'switch.pump'), { device_class: 'outlet', attributes: { max_on_time_s: 60 } });
  t.match(entity(r, 'switch.garage_door'), { name: 'Garage door', services: ['turn_on', 'toggle'], attributes: { pulse_ms: 500 } });
  t.match(entity(r, 'lock.front_door'), { services: ['lock', 'unlock'], critical: true });
  t.match(entity(r, 'button.doorbell'), { services: [], attributes: { active_low: true } });
  t.match(entity(r, 'binary_sensor.hall_motion'), { device_class: 'motion' });
  t.equal(r.backend.control.level(27), 1, 'the doorbell pull-up holds the wire high: released');
  t.same(r.plugin.health(), {
    ok: true,
    detail: 'simulated: chosen by the caller; 6 pin(s)',
    detail_zh: 'simulated：由调用方指定；6 个引脚',
  });
});

t.test('states after start come from the pins: initial, active_low, an input held active', async (t) => {
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock });
  backend.control.drive(5, 1);
  const { tc, ctx, atEnd } = context(t, [{ ...LIGHT, initial: 1, active_low: true }, MOTION]);
  const plugin = new GpioPlugin(ctx, { clock, backend, watcher: false });
  await plugin.start(new AbortController().signal);
  atEnd(() => plugin.stop());
  const states = Object.fromEntries(tc.entities.list().map((e) => [e.entity_id, e.state]));
  t.same(states, { 'switch.kitchen_light': 'on', 'binary_sensor.hall_motion': 'on' });
  t.equal(backend.control.level(17), 0, 'logical 1 on an active-low relay is a low wire');
});

t.test('an edge updates the entity, then publishes gpio.edge, then hands the agent an input at its level', async (t) => {
  const seen: string[] = [];
  const r = await startGpio(t, [DOORBELL, MOTION]);
  r.tc.events.on('test', 'entity.state_changed', (e) => void seen.push(`state ${e.entity_id} ${String(e.new_state)}`));
  const edges: Array<EventMap['gpio.edge']> = [];
  r.tc.events.on('test', 'gpio.edge', (e) => {
    edges.push(e);
    seen.push(`edge ${e.pin} ${e.edge}`);
  });
  r.tc.events.on('test', 'gpio.edge', () => void seen.push(`inputs so far ${r.tc.injected.length}`));

  r.backend.control.drive(27, 0); // active low: pressed
  t.same(seen, ['state button.doorbell on', 'edge doorbell rising', 'inputs so far 0'], 'entity first, then the event, then the input');
  t.equal(r.tc.injected.length, 1);
  const [press] = r.tc.injected;
  t.equal(press?.level, 3, 'the doorbell interrupts at level 3');
  t.match(press?.input, {
    source: 'gpio',
    channel: 'gpio',
    type: 'text',
    payload: 'Doorbell became on (GPIO edge)',
    meta: { pin: 'doorbell', bcm: 27, entity_id: 'button.doorbell', edge: 'rising', value: 1, at: r.clock.now() },
  });
  t.same(edges[0], { pin: 'doorbell', bcm: 27, entity_id: 'button.doorbell', edge: 'rising', value: 1, at: r.clock.now() });

  r.backend.control.drive(27, 1); // released inside the 20 ms debounce: reported when it ends
  t.equal(entity(r, 'button.doorbell').state, 'on', 'still inside the debounce window');
  r.clock.advance(20);
  t.equal(entity(r, 'button.doorbell').state, 'off');
  t.equal(edges.at(-1)?.edge, 'falling');
  t.equal(r.tc.injected.length, 1, 'input_edges rising: a release is no input');

  r.backend.control.drive(5, 1);
  r.clock.advance(20);
  r.backend.control.drive(5, 0);
  t.same(
    r.tc.injected.slice(1).map((i) => [i.level, i.input.payload]),
    [
      [0, 'Hall motion: rising (on)'],
      [0, 'Hall motion: falling (off)'],
    ],
    'input_edges both at level 0: queued inputs with the filled-in text',
  );
});

t.test('by default an input pin is no input for the agent: its edges change the entity and trigger automations only', async (t) => {
  const [plain, tuned] = planGpioPins([
    { id: 'hall_button', bcm: 22, direction: 'in', domain: 'button' },
    { id: 'bell', bcm: 23, direction: 'in', level: 3, input_text: '{name} rang' },
  ]);
  t.match(plain, { input_rising: false, input_falling: false, warnings: [] });
  t.match(tuned, { input_rising: false, input_falling: false });
  t.match(tuned?.warnings, [/level and input_text are set, but input_edges is none \(the default\).*set input_edges: rising/]);
  const r = await startGpio(t, [{ id: 'hall_button', bcm: 22, direction: 'in', domain: 'button' }]);
  const edges: string[] = [];
  r.tc.events.on('test', 'gpio.edge', (e) => void edges.push(e.edge));
  r.backend.control.drive(22, 1);
  r.clock.advance(20);
  r.backend.control.drive(22, 0);
  r.clock.advance(20);
  t.same(edges, ['rising', 'falling'], 'both edges published for automations');
  t.equal(entity(r, 'button.hall_button').state, 'off');
  t.equal(r.tc.injected.length, 0, 'no model turn for a press');
});

t.test('input_edges none publishes edges but hands the agent nothing', async (t) => {
  const quiet = { id: 'window', bcm: 6, direction: 'in', input_edges: 'none', device_class: 'window' };
  const r = await startGpio(t, [quiet]);
  let edges = 0;
  r.tc.events.on('test', 'gpio.edge', () => void edges++);
  r.backend.control.drive(6, 1);
  t.equal(edges, 1);
  t.equal(entity(r, 'binary_sensor.window').state, 'on');
  t.equal(r.tc.injected.length, 0);
});

t.test('a failed receipt or a refused input is logged; the edge path goes on', async (t) => {
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock });
  const captured = captureLogs();
  let refuse = false;
  const { tc, ctx, atEnd } = context(
    t,
    [DOORBELL],
    {},
    {
      receipt: (input) => {
        if (refuse) throw new Error('the input queue is full');
        return { input_id: 'in-1', status: 'failed', text: `could not handle ${String(input.payload)}`, finished_at: clock.now() };
      },
    },
  );
  const plugin = new GpioPlugin(asContext({ ...ctx, log: captured.logs.child('plugin.gpio') }), { clock, backend, watcher: false });
  await plugin.start(new AbortController().signal);
  atEnd(() => plugin.stop());
  backend.control.drive(27, 0);
  await settle();
  t.match(captured.records().at(-1), { level: 'warn', msg: 'a GPIO input to the agent failed', input_id: 'in-1' });
  refuse = true;
  backend.control.drive(27, 1);
  clock.advance(20); // the release, reported when the debounce window ends, opens a new window
  clock.advance(20);
  backend.control.drive(27, 0);
  await settle();
  t.match(captured.records().at(-1), { level: 'error', msg: 'a GPIO edge could not be handed to the agent' });
  t.equal(tc.entities.find('button.doorbell')?.state, 'on', 'the entity still follows the pin');
});

t.test('gpio_read, gpio_write and gpio_pulse: pins by id, entity id or BCM number', async (t) => {
  const r = await startGpio(t, ALL);
  t.equal(r.tc.tools.get('gpio_read')?.tier, 'read');
  t.equal(r.tc.tools.get('gpio_write')?.tier, 'act');
  t.equal(r.tc.tools.get('gpio_pulse')?.tier, 'act');
  t.match(r.tc.tools.get('gpio_write')?.description, /kitchen_light \(GPIO17, output\)/, 'the model sees the pins');

  t.same(await r.tc.call('gpio_write', { pin: 'kitchen_light', value: 1 }), {
    pin: 'kitchen_light',
    value: 1,
    state: 'on',
    entity_id: 'switch.kitchen_light',
  });
  t.equal(r.backend.control.level(17), 1);
  t.equal(entity(r, 'switch.kitchen_light').state, 'on', 'the registry saw the write');
  t.match(r.tc.audits.at(-1), { action: 'gpio.write', details: { pin: 'kitchen_light', value: 1, actor: 'agent', task_id: 'task-1' } });
  for (const reference of ['kitchen_light', 'switch.kitchen_light', 17, '17', 'GPIO17']) {
    t.match(await r.tc.call('gpio_read', { pin: reference }), { pin: 'kitchen_light', value: 1, state: 'on' }, String(reference));
  }
  await r.tc.call('gpio_write', { pin: 17, value: 0 });
  t.equal(entity(r, 'switch.kitchen_light').state, 'off');

  r.backend.control.drive(5, 1);
  t.match(await r.tc.call('gpio_read', { pin: 'hall_motion' }), { direction: 'in', value: 1, state: 'on' });
  t.match(await toolError(r.tc.call('gpio_write', { pin: 'hall_motion', value: 1 })), {
    reason: 'rejected',
    field: 'pin',
    detail: /hall_motion \(GPIO5\) is an input \(direction in\)/,
  });
  t.match(await toolError(r.tc.call('gpio_read', { pin: 'attic_fan' })), {
    reason: 'not_found',
    field: 'pin',
    detail: /no GPIO pin "attic_fan"; the pins are: kitchen_light \(GPIO17, output\), pump/,
  });
  t.match(await toolError(r.tc.call('gpio_read', { pin: 9 })), { reason: 'not_found' });
  t.match(await toolError(r.tc.call('gpio_write', { pin: 'front_door', value: 0 })), {
    reason: 'confirmation_required',
    detail: /lock\.front_door/,
  });
  t.match(await toolError(r.tc.call('gpio_pulse', { pin: 'kitchen_light' })), { reason: 'required', field: 'ms' });
  await t.rejects(r.tc.call('gpio_pulse', { pin: 'kitchen_light', ms: 60_001 }), /invalid arguments/);
  t.equal(r.backend.control.level(24), 0, 'the lock was not touched');
});

t.test('a pin id that looks like a BCM number means that pin; the number as a number is the BCM line', async (t) => {
  const r = await startGpio(t, [MOTION, { id: '5', bcm: 6, direction: 'out' }]);
  t.match(await r.tc.call('gpio_read', { pin: '5' }), { pin: '5', bcm: 6 });
  t.match(await r.tc.call('gpio_read', { pin: 5 }), { pin: 'hall_motion', bcm: 5 });
  t.match(await r.tc.call('gpio_read', { pin: 'GPIO5' }), { pin: 'hall_motion' });
});

t.test('pulses: on for their length on the clock, the entity follows, a write of 1 to a momentary relay pulses', async (t) => {
  const r = await startGpio(t, ALL);
  const states: string[] = [];
  r.tc.events.on('test', 'entity.state_changed', (e) => {
    if (e.entity_id === 'switch.garage_door') states.push(String(e.new_state));
  });
  const pulse = r.tc.call('gpio_pulse', { pin: 'garage_door' });
  await settle();
  t.equal(r.backend.control.level(23), 1, 'on while the pulse lasts');
  t.equal(entity(r, 'switch.garage_door').state, 'on');
  r.clock.advance(499);
  t.equal(r.backend.control.level(23), 1);
  r.clock.advance(1);
  t.same(await pulse, { pin: 'garage_door', pulsed_ms: 500, state: 'off', entity_id: 'switch.garage_door' });
  t.equal(r.backend.control.level(23), 0);
  t.same(states, ['on', 'off']);

  const write = r.tc.call('gpio_write', { pin: 'garage_door', value: 1 });
  await settle();
  r.clock.advance(500);
  t.match(await write, { pulsed_ms: 500, state: 'off' }, 'a momentary relay is never held on');

  const custom = r.tc.call('gpio_pulse', { pin: 'kitchen_light', ms: 2000 });
  await settle();
  t.equal(entity(r, 'switch.kitchen_light').state, 'on');
  r.clock.advance(2000);
  t.match(await custom, { pulsed_ms: 2000, state: 'off' });
});

t.test('entity calls switch the pins: services per domain, brightness 0, toggle, pulse pins, the caller context', async (t) => {
  const r = await startGpio(t, [{ ...LIGHT, domain: 'light' }, GARAGE, LOCK]);
  const contexts: unknown[] = [];
  r.tc.events.on('test', 'entity.state_changed', (e) => void contexts.push(e.context));
  const ctx = { actor: 'automation:evening', run_id: 'run-1' };
  t.match(await r.tc.entities.call('light.kitchen_light', 'turn_on', {}, ctx), { state: 'on' });
  t.equal(r.backend.control.level(17), 1);
  t.same(contexts.at(-1), ctx, 'the change carries the caller');
  t.match(await r.tc.entities.call('light.kitchen_light', 'toggle', {}, ctx), { state: 'off' });
  await r.tc.entities.call('light.kitchen_light', 'turn_on', { brightness: 200 }, ctx);
  t.match(await r.tc.entities.call('light.kitchen_light', 'turn_on', { brightness: 0 }, ctx), { state: 'off' }, 'brightness 0 is off');

  t.match(await r.tc.entities.call('lock.front_door', 'lock', {}, ctx), { state: 'locked' });
  t.equal(r.backend.control.level(24), 1, 'locked is logical 1');
  t.match(await r.tc.entities.call('lock.front_door', 'unlock', {}, ctx), { state: 'unlocked' });

  const press = r.tc.entities.call('switch.garage_door', 'turn_on', {}, ctx);
  await settle();
  t.equal(r.backend.control.level(23), 1);
  r.clock.advance(500);
  t.match(await press, { state: 'off' }, 'the call answers when the pulse is over');
  await expectErrorAsync(t, () => r.tc.entities.call('switch.garage_door', 'turn_off', {}, ctx), 'HA_ERR_ENTITY_SERVICE');
  t.equal(r.tc.audits.length, 0, 'entity calls are audited by whoever made them, not twice');
});

t.test('max_on_time switches the output off on the clock and the entity follows; a failed switch-off is a health problem', async (t) => {
  const r = await startGpio(t, [PUMP]);
  await r.tc.call('gpio_write', { pin: 'pump', value: 1 });
  const status = (await r.control.call('gpio.pins', {}, { actor: 'cli' })) as { pins: Array<{ on_since: string | null }> };
  t.equal(status.pins[0]?.on_since, new Date(r.clock.now()).toISOString());
  r.clock.advance(59_999);
  t.equal(entity(r, 'switch.pump').state, 'on');
  r.clock.advance(1);
  await settle();
  t.equal(r.backend.control.level(22), 0);
  t.equal(entity(r, 'switch.pump').state, 'off');

  await r.tc.call('gpio_write', { pin: 'pump', value: 1 });
  r.backend.control.failNext(22, 'write');
  r.clock.advance(60_000);
  await settle();
  t.equal(r.backend.control.level(22), 1, 'the switch-off failed');
  t.match(r.plugin.health(), { ok: false, detail: /pump: GPIO 22: simulated write failure/ });
  r.clock.advance(5_000);
  await settle();
  t.equal(r.backend.control.level(22), 0, 'retried');
  t.equal(entity(r, 'switch.pump').state, 'off');
  t.match(r.plugin.health(), { ok: true });
});

t.test('control methods: gpio.pins, gpio.read, gpio.write (audited with the caller) and gpio.simulate', async (t) => {
  const r = await startGpio(t, ALL);
  const cli = { actor: 'cli' };
  const pins = (await r.control.call('gpio.pins', {}, cli)) as {
    backend: { kind: string; reason: string; crash_protection: string };
    pins: Array<Record<string, unknown>>;
  };
  t.match(pins.backend, { kind: 'simulated', reason: 'simulated: chosen by the caller', crash_protection: 'crash watcher off' });
  t.same(
    pins.pins.map((p) => [p.id, p.bcm, p.direction, p.entity_id, p.value, p.state]),
    [
      ['kitchen_light', 17, 'out', 'switch.kitchen_light', 0, 'off'],
      ['pump', 22, 'out', 'switch.pump', 0, 'off'],
      ['garage_door', 23, 'out', 'switch.garage_door', 0, 'off'],
      ['front_door', 24, 'out', 'lock.front_door', 0, 'unlocked'],
      ['doorbell', 27, 'in', 'button.doorbell', 0, 'off'],
      ['hall_motion', 5, 'in', 'binary_sensor.hall_motion', 0, 'off'],
    ],
  );

  t.match(await r.control.call('gpio.write', { pin: 'front_door', value: 1 }, cli), { id: 'front_door', value: 1, state: 'locked' });
  t.match(r.tc.audits.at(-1), { action: 'gpio.write', details: { pin: 'front_door', bcm: 24, value: 1, actor: 'cli' } });
  t.match(await r.control.call('gpio.read', { pin: '24' }, cli), { id: 'front_door', value: 1 });
  await expectErrorAsync(t, () => r.control.call('gpio.write', { pin: 'doorbell', value: 1 }, cli), 'HA_ERR_GPIO_DIRECTION');
  await expectErrorAsync(t, () => r.control.call('gpio.read', { pin: 'nope' }, cli), 'HA_ERR_GPIO_CONFIG');
  await expectErrorAsync(t, () => r.control.call('gpio.write', { pin: 'pump', value: 2 }, cli), 'HA_ERR_RPC_INVALID_PARAMS');

  t.match(await r.control.call('gpio.simulate', { pin: 'doorbell', level: 1 }, cli), { level: 1, status: { value: 1, state: 'on' } });
  t.equal(r.backend.control.level(27), 0, 'logical 1 on an active-low button is a low wire');
  t.equal(r.tc.injected.length, 1, 'the simulated press reached the agent');
  t.match(r.tc.audits.at(-1), { action: 'gpio.simulate', details: { pin: 'doorbell', level: 1, actor: 'cli' } });
  await r.control.call('gpio.simulate', { pin: 'doorbell', level: 0 }, cli);
  r.clock.advance(50);

  t.match(await r.control.call('gpio.simulate', { pin: 'doorbell', press_ms: 200 }, cli), { press_ms: 200 });
  r.clock.advance(50);
  t.equal(entity(r, 'button.doorbell').state, 'on', 'held');
  r.clock.advance(200);
  t.equal(entity(r, 'button.doorbell').state, 'off', 'released after the bounce settled');
  t.equal(r.tc.injected.length, 2, 'one input per press despite the contact bounce');

  await expectErrorAsync(t, () => r.control.call('gpio.simulate', { pin: 'pump', level: 1 }, cli), 'HA_ERR_GPIO_DIRECTION');
  await expectErrorAsync(t, () => r.control.call('gpio.simulate', { pin: 'doorbell' }, cli), 'HA_ERR_RPC_INVALID_PARAMS');
  await expectErrorAsync(
    t,
    () => r.control.call('gpio.simulate', { pin: 'doorbell', level: 1, press_ms: 100 }, cli),
    'HA_ERR_RPC_INVALID_PARAMS',
  );
  await expectErrorAsync(t, () => r.control.call('gpio.simulate', { pin: 'doorbell', press_ms: 5 }, cli), 'HA_ERR_RPC_INVALID_PARAMS');
});

t.test('gpio.simulate refuses a real back end', async (t) => {
  const clock = new ManualClock();
  const sim = new SimulatedGpioBackend({ clock });
  // The same pins, but not the simulator as far as the plugin can tell.
  const real: GpioBackend = {
    kind: 'sysfs',
    describe: () => 'sysfs GPIO (test)',
    open: (bcm, options) => sim.open(bcm, options),
    safeStateSteps: (pin, value) => sim.safeStateSteps(pin, value),
    close: () => sim.close(),
  };
  const r = await startGpio(t, [DOORBELL], { clock, backend: real });
  const error = await expectErrorAsync(
    t,
    () => r.control.call('gpio.simulate', { pin: 'doorbell', level: 1 }, { actor: 'cli' }),
    'HA_ERR_GPIO_UNAVAILABLE',
  );
  t.match(error.message, /simulated back end only; this one is sysfs/);
  t.equal(sim.control.level(27), 1, 'the wire was not driven');
});

t.test('stop puts outputs in their safe state, removes entities, tools and methods, and keeps the last state', async (t) => {
  const r = await startGpio(t, [{ ...LIGHT, safe: 1 }, PUMP, LOCK, DOORBELL]);
  await r.tc.call('gpio_write', { pin: 'pump', value: 1 });
  await r.tc.call('gpio_write', { pin: 'kitchen_light', value: 0 });
  await r.control.call('gpio.write', { pin: 'front_door', value: 1 }, { actor: 'cli' });
  await r.stop();
  t.same(
    [17, 22, 24].map((bcm) => r.backend.control.level(bcm)),
    [1, 0, 1],
    'safe 1, safe 0, keep',
  );
  t.same(r.tc.entities.list({ owner: OWNER }), [], 'entities removed');
  t.same(
    ['switch.kitchen_light', 'switch.pump', 'lock.front_door'].map((id) => r.tc.entities.history(id).at(-1)?.state),
    ['on', 'off', 'locked'],
    'each entity keeps the level its output was left at',
  );
  t.equal(r.tc.tools.get('gpio_write'), undefined);
  t.notOk(
    r.control.methods().some((m) => m.name.startsWith('gpio.')),
    'control methods removed',
  );
  t.same(r.plugin.health(), { ok: false, detail: 'GPIO is not running', detail_zh: 'GPIO 没有运行' });
  await r.backend.open(17, { direction: 'out' }).then((pin) => pin.close());
  t.pass('the pins were released');
});

t.test('an entity id taken by another owner fails the start and releases the pins in their safe state', async (t) => {
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock });
  const { tc, ctx } = context(t, [{ ...LIGHT, initial: 1 }, PUMP]);
  tc.entities.register('plugin:other', { domain: 'switch', object_id: 'pump', name: 'Other pump' });
  const plugin = new GpioPlugin(ctx, { clock, backend, watcher: false });
  await expectErrorAsync(t, () => plugin.start(new AbortController().signal), 'HA_ERR_ENTITY_DEFINITION');
  t.equal(backend.control.level(17), 0, 'the light that started on is back at its safe value');
  t.same(
    tc.entities.list().map((e) => e.entity_id),
    ['switch.pump'],
    "only the other owner's entity is left",
  );
  t.equal(tc.tools.get('gpio_read'), undefined);
  const pin = await backend.open(17, { direction: 'out' });
  await pin.close();
});

t.test(
  'the back end from the settings, with crash protection through the watcher',
  { skip: existsSync(WATCHER) ? false : 'dist/ is not built (npm run build)' },
  async (t) => {
    const { tc, control, ctx, atEnd } = context(t, [LIGHT, DOORBELL]);
    const plugin = createGpioPlugin({ watcher: { script: WATCHER } })(ctx);
    await plugin.start(new AbortController().signal);
    atEnd(async () => plugin.stop());
    const data = tc.context.paths.data;
    const pins = (await control.call('gpio.pins', {}, { actor: 'cli' })) as {
      backend: { reason: string; describe: string; watcher_pid: number | null; crash_protection: string };
    };
    t.equal(pins.backend.reason, 'simulated: configured');
    t.match(pins.backend.describe, `levels in ${join(data, SIMULATED_STATE_DIR)}`);
    t.match(pins.backend.crash_protection, /^crash watcher armed \(pid \d+\)$/);
    t.ok(existsSync(join(data, SAFE_STATE_SPEC_FILE)), 'the spec for ExecStopPost= is in the data folder');
    t.equal(readFileSync(join(data, SIMULATED_STATE_DIR, 'gpio17'), 'utf8'), '0');
    await control.call('gpio.write', { pin: 'kitchen_light', value: 1 }, { actor: 'cli' });
    t.equal(readFileSync(join(data, SIMULATED_STATE_DIR, 'gpio17'), 'utf8'), '1', 'the simulated wire is visible from outside');

    process.kill(pins.backend.watcher_pid as number, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while ((await plugin.health?.())?.ok !== false && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    t.match(await plugin.health?.(), { ok: false, detail: /crash watcher exited \(SIGKILL\)/ });

    await plugin.stop();
    t.equal(readFileSync(join(data, SIMULATED_STATE_DIR, 'gpio17'), 'utf8'), '0', 'safe state at stop');
    t.notOk(existsSync(join(data, SAFE_STATE_SPEC_FILE)), 'spec removed at a clean stop');
  },
);

t.test(
  'an explicit back end that is missing fails the start with the reason',
  { skip: existsSync('/sys/class/gpio/export') ? 'this machine has sysfs GPIO' : false },
  async (t) => {
    const { tc, ctx } = context(t, [LIGHT], { backend: 'sysfs' });
    const plugin = new GpioPlugin(ctx, { watcher: false });
    const error = await expectErrorAsync(t, () => plugin.start(new AbortController().signal), 'HA_ERR_GPIO_UNAVAILABLE');
    t.match(error.message, /no sysfs GPIO/);
    t.same(tc.entities.list(), []);
  },
);

t.test('pins of a configuration type-check as GpioPinSetting', async (t) => {
  const pin: GpioPinSetting = { id: 'x', bcm: 4, direction: 'in', bias: 'pull_down', level: 2 };
  t.equal(planGpioPins([pin])[0]?.guard.bias, 'pull-down');
});
