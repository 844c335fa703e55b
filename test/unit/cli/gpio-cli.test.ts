// `homeagentctl gpio …` (src/cli/gpio.ts): argument parsing, readable output, and the commands end
// to end: the gpio plugin on a simulated header registers its methods in a real ControlRegistry,
// served by the real cli plugin on a Unix socket.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ManualClock } from '../../../devices/gpio/gpio-clock.js';
import { GpioPlugin } from '../../../devices/gpio/gpio-plugin.js';
import { SimulatedGpioBackend } from '../../../devices/gpio/simulated-backend.js';
import { CliPlugin } from '../../../plugins/cli/index.js';
import type { GpioBackendStatus, GpioPinStatus } from '../../../src/api/gpio.js';
import type { CommandClient } from '../../../src/cli/command-client.js';
import { formatGpioPins, type GpioCommand, GpioUsageError, parseGpioCommand, runGpio } from '../../../src/cli/gpio.js';
import { RpcClient } from '../../../src/cli/rpc-client.js';
import { ControlRegistry } from '../../../src/plugin/control-registry.js';
import { asContext, createTestPluginContext } from '../../helpers/plugin-context.js';
import { tempDir } from '../fixtures/support.js';

t.test('parseGpioCommand reads each command and refuses what does not fit', async (t) => {
  t.same(parseGpioCommand(['pins'], {}), { command: 'pins' });
  t.same(parseGpioCommand(['read', 'doorbell'], {}), { command: 'read', pin: 'doorbell' });
  t.same(parseGpioCommand(['write', '17', '1'], {}), { command: 'write', pin: '17', value: 1 });
  t.same(parseGpioCommand(['write', 'switch.pump', '0'], {}), { command: 'write', pin: 'switch.pump', value: 0 });
  t.same(parseGpioCommand(['simulate', 'doorbell', '1'], {}), { command: 'simulate', pin: 'doorbell', level: 1 });
  t.same(parseGpioCommand(['simulate', 'doorbell'], { press: '250' }), { command: 'simulate', pin: 'doorbell', press_ms: 250 });

  const refused: Array<[string[], { press?: string }, RegExp]> = [
    [[], {}, /gpio needs a command: pins, read, write or simulate/],
    [['toggle', 'x'], {}, /unknown gpio command toggle/],
    [['pins', 'x'], {}, /gpio pins takes no arguments/],
    [['read'], {}, /gpio read needs exactly one PIN/],
    [['read', 'a', 'b'], {}, /exactly one PIN/],
    [['read', ' '], {}, /gpio read needs a PIN/],
    [['write', 'pump'], {}, /gpio write needs a PIN and a value 0 or 1/],
    [['write', 'pump', 'on'], {}, /the value must be 0 or 1, not "on"/],
    [['simulate', 'doorbell'], {}, /gpio simulate needs a PIN and a level 0 or 1, or a PIN and --press MS/],
    [['simulate', 'doorbell', '2'], {}, /gpio simulate: the value must be 0 or 1/],
    [['simulate', 'doorbell', '1'], { press: '100' }, /--press MS takes no level/],
    [['simulate', 'doorbell'], { press: '5' }, /--press must be a whole number of milliseconds from 10 to 60000/],
    [['simulate', 'doorbell'], { press: 'long' }, /--press must be/],
    [['read', 'doorbell'], { press: '100' }, /--press belongs to gpio simulate, not gpio read/],
  ];
  for (const [positionals, flags, message] of refused) {
    t.throws(() => parseGpioCommand(positionals, flags), { constructor: GpioUsageError, message }, positionals.join(' '));
  }
});

const LINE: GpioPinStatus = {
  id: 'kitchen_light',
  name: 'Kitchen light',
  bcm: 17,
  direction: 'out',
  domain: 'switch',
  entity_id: 'switch.kitchen_light',
  value: 1,
  state: 'on',
  active_low: false,
  pulse_ms: 0,
  max_on_time_s: 0,
  on_since: '2025-01-01T00:00:00.000Z',
  error: null,
};

t.test('formatGpioPins aligns the pins under the back end and its reason', async (t) => {
  const backend: GpioBackendStatus = {
    kind: 'simulated',
    reason: 'simulated: no sysfs GPIO (/sys/class/gpio/export is missing); libgpiod tools not installed',
    describe: 'simulated GPIO (no hardware), 2 pin(s) open',
    watcher_pid: null,
    crash_protection: 'crash watcher off',
  };
  const doorbell: GpioPinStatus = {
    ...LINE,
    id: 'doorbell',
    bcm: 27,
    direction: 'in',
    domain: 'button',
    entity_id: 'button.doorbell',
    value: 0,
    state: 'off',
    active_low: true,
    on_since: null,
    error: 'edge monitor died',
  };
  const garage: GpioPinStatus = {
    ...LINE,
    id: 'garage',
    bcm: 5,
    entity_id: 'switch.garage',
    value: null,
    state: null,
    pulse_ms: 500,
    on_since: null,
  };
  t.equal(
    formatGpioPins({ backend, pins: [LINE, doorbell, garage] }),
    [
      'back end: simulated: no sysfs GPIO (/sys/class/gpio/export is missing); libgpiod tools not installed',
      '  simulated GPIO (no hardware), 2 pin(s) open',
      '  crash watcher off',
      'PIN            BCM     DIR  ENTITY                LEVEL',
      'kitchen_light  GPIO17  out  switch.kitchen_light  1 (on)   on since 2025-01-01T00:00:00.000Z',
      'doorbell       GPIO27  in   button.doorbell       0 (off)  active low, ERROR edge monitor died',
      'garage         GPIO5   out  switch.garage         unknown  pulse 500 ms',
    ].join('\n'),
  );
  t.match(formatGpioPins({ backend, pins: [] }), /no pins configured \(plugin\.gpio\.pins/);
  t.equal(
    formatGpioPins({ backend, pins: [LINE, doorbell, garage] }, 'zh')
      .split('\n')
      .slice(3)
      .join('\n'),
    [
      '引脚           BCM     方向  实体                  电平',
      'kitchen_light  GPIO17  输出  switch.kitchen_light  1 (on)   自 2025-01-01T00:00:00.000Z 起开启',
      'doorbell       GPIO27  输入  button.doorbell       0 (off)  低电平有效，错误 edge monitor died',
      'garage         GPIO5   输出  switch.garage         未知     脉冲 500 毫秒',
    ].join('\n'),
    'in Chinese, the columns still line up',
  );
  t.match(formatGpioPins({ backend, pins: [] }, 'zh'), /^后端：simulated: .*\n没有配置引脚（plugin\.gpio\.pins/s);
});

interface Served {
  clock: ManualClock;
  backend: SimulatedGpioBackend;
  connect: () => Promise<CommandClient>;
}

/** The gpio methods of a running gpio plugin, served by the cli plugin. */
async function serve(t: Test, options: { gpio?: boolean } = {}): Promise<Served> {
  const dataDir = tempDir(t, 'ha-gpio-cli-');
  const control = new ControlRegistry();
  const clock = new ManualClock();
  const backend = new SimulatedGpioBackend({ clock });
  const stops: Array<() => Promise<void>> = [];
  // Teardowns run in the order added: stop the plugins before their contexts' databases close.
  t.teardown(async () => {
    for (const stop of stops.reverse()) await stop();
  });
  if (options.gpio !== false) {
    const gpio = createTestPluginContext({
      name: 'gpio',
      dataDir,
      settings: {
        backend: 'simulated',
        chip: '',
        poll_interval_ms: 10,
        pins: [
          { id: 'garage', bcm: 23, direction: 'out', pulse_ms: 300 },
          {
            id: 'doorbell',
            bcm: 27,
            direction: 'in',
            domain: 'button',
            active_low: true,
            bias: 'pull_up',
            input_edges: 'rising',
            level: 3,
          },
        ],
      },
    });
    stops.push(async () => gpio.close());
    const plugin = new GpioPlugin(asContext({ ...gpio.context, control }), { clock, backend, watcher: false });
    await plugin.start(new AbortController().signal);
    stops.push(() => plugin.stop());
  }
  const cli = createTestPluginContext({
    name: 'cli',
    dataDir: join(dataDir, 'cli'),
    settings: { socket_path: '', socket_mode: '660', max_frame_bytes: 1048576, max_connections: 4, idle_timeout_ms: 60_000 },
  });
  stops.push(async () => cli.close());
  const server = new CliPlugin(asContext({ ...cli.context, control }));
  await server.start();
  stops.push(() => server.stop());
  const socket = join(dataDir, 'cli', 'run', 'homeagent.sock');
  return { clock, backend, connect: () => RpcClient.connect(socket, 5000) };
}

async function run(s: Served, command: GpioCommand, json = false) {
  let out = '';
  const code = await runGpio(command, {
    connect: s.connect,
    json,
    timeoutMs: 10_000,
    stdout: { write: (text: string) => (out += text) },
  });
  return { code, out };
}

t.test('gpio pins, read, write and simulate over the socket', async (t) => {
  const s = await serve(t);
  const pins = await run(s, { command: 'pins' });
  t.equal(pins.code, 0);
  t.match(pins.out, /^back end: simulated: chosen by the caller\n/);
  t.match(pins.out, /\ngarage +GPIO23 +out +switch\.garage +0 \(off\) +pulse 300 ms\n/);
  t.match(JSON.parse((await run(s, { command: 'pins' }, true)).out), {
    backend: { kind: 'simulated' },
    pins: [{ id: 'garage' }, { id: 'doorbell' }],
  });

  t.equal((await run(s, { command: 'read', pin: '27' })).out, 'doorbell (GPIO27) = 0 (off)\n');
  t.equal((await run(s, { command: 'simulate', pin: 'doorbell', level: 1 })).out, 'doorbell (GPIO27) driven to 1; now 1 (on)\n');
  t.equal(s.backend.control.level(27), 0, 'active low: pressed is a low wire');
  s.clock.advance(20);
  t.equal(
    (await run(s, { command: 'simulate', pin: 'doorbell', press_ms: 100 })).out,
    'doorbell (GPIO27) pressed for 100 ms (with contact bounce)\n',
  );

  const write = run(s, { command: 'write', pin: 'garage', value: 1 });
  // The pulse runs on the manual clock: move it once the daemon has switched the relay on.
  s.backend.control.onWire((change) => {
    if (change.bcm === 23 && change.level === 1) setImmediate(() => s.clock.advance(300));
  });
  t.equal((await write).out, 'garage (GPIO23) pulsed for 300 ms, now 0 (off)\n');

  await t.rejects(run(s, { command: 'write', pin: 'doorbell', value: 1 }), {
    code: 'HA_ERR_GPIO_DIRECTION',
    message: /doorbell is an input/,
  });
  await t.rejects(run(s, { command: 'read', pin: 'porch' }), {
    code: 'HA_ERR_GPIO_CONFIG',
    message: /the pins are: garage \(GPIO23, output\)/,
  });
});

t.test('without the gpio plugin the CLI says how to enable it', async (t) => {
  const s = await serve(t, { gpio: false });
  await t.rejects(run(s, { command: 'pins' }), { code: 'HA_ERR_RPC_UNKNOWN_METHOD', message: /plugin\.gpio\.enabled: true/ });
});
