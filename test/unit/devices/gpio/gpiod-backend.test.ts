import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { EdgeEvent, GpioPin } from '../../../../devices/gpio/gpio-backend.js';
import { GpiodGpioBackend } from '../../../../devices/gpio/gpiod-backend.js';
import { parseGetOutput, parseGpiodetect } from '../../../../devices/gpio/gpiod-tools.js';
import { applySafeStateSteps } from '../../../../devices/gpio/safe-state.js';
import { alive, ended } from '../../../helpers/processes.js';
import { expectError, expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { FakeGpiod, PI5_GPIODETECT } from './fixtures/fake-gpiod.js';

type T = Parameters<typeof tempDir>[0];

function setup(t: T, version: 1 | 2, options: { holdConfirmMs?: number } = {}) {
  const root = tempDir(t, 'ha-gpiod-');
  const tools = new FakeGpiod(root, version, PI5_GPIODETECT);
  const runDir = join(root, 'run');
  mkdirSync(runDir);
  const backend = new GpiodGpioBackend({ path: tools.path, env: tools.env, runDir, holdConfirmMs: options.holdConfirmMs ?? 30 });
  t.teardown(() => backend.close());
  return { tools, backend, runDir };
}

function nextEdge(pin: GpioPin): Promise<EdgeEvent> {
  return new Promise((resolve) => {
    const off = pin.onEdge((e) => {
      off();
      resolve(e);
    });
  });
}

for (const version of [1, 2] as const) {
  t.test(`v${version}: chip chosen by label, outputs held by gpioset with the right syntax`, async (t) => {
    const { tools, backend, runDir } = setup(t, version);
    const relay = await backend.open(17, { direction: 'out', active_low: true, initial: 0 });
    t.match(backend.describe(), new RegExp(`gpiod gpioget \\(libgpiod\\) v${version}\\.\\S+ on gpiochip4 \\[pinctrl-rp1\\]`));
    const hold = version === 1 ? 'gpioset --mode=signal -l gpiochip4 17=0' : 'gpioset -l -c gpiochip4 17=0';
    t.same(tools.calls('gpioset'), [hold]);
    t.equal(tools.line(17), '1', 'off on an active-low board: the wire is high');
    const pidFile = join(runDir, 'gpiod-gpiochip4-17.pid');
    const firstHolder = Number(readFileSync(pidFile, 'utf8'));
    t.ok(alive(firstHolder), 'the holder keeps running');

    await relay.write(1);
    t.equal(tools.line(17), '0');
    t.notOk(alive(firstHolder), 'the old holder was stopped before the new one started');
    const secondHolder = Number(readFileSync(pidFile, 'utf8'));
    t.ok(alive(secondHolder));
    t.equal(await relay.read(), 1, 'an output reads the value it holds');
    t.same(
      tools.calls('gpioget').filter((c) => !c.includes('--version')),
      [],
      'without asking gpioget (EBUSY on a held line)',
    );

    await relay.close();
    await ended(secondHolder);
    t.notOk(existsSync(pidFile), 'the pid file goes with the holder');
  });

  t.test(`v${version}: input reads through gpioget with bias, both output formats`, async (t) => {
    const { tools, backend } = setup(t, version);
    const sensor = await backend.open(27, { direction: 'in', bias: 'pull-up' });
    tools.setLine(27, 1);
    t.equal(await sensor.read(), 1);
    tools.setLine(27, 0);
    t.equal(await sensor.read(), 0);
    const expected = version === 1 ? 'gpioget -B pull-up gpiochip4 27' : 'gpioget -b pull-up -c gpiochip4 27';
    t.same(
      tools.calls('gpioget').filter((c) => !c.includes('--version')),
      [expected, expected],
    );
    await expectErrorAsync(t, () => sensor.write(1), 'HA_ERR_GPIO_DIRECTION');
  });

  t.test(`v${version}: edges from a long-running gpiomon, logical with active_low, debounced`, async (t) => {
    const { tools, backend } = setup(t, version);
    tools.setLine(22, 1); // idle high (pull-up), button to ground
    const button = await backend.open(22, { direction: 'in', active_low: true, edge: 'both' });
    t.equal(await button.read(), 0, 'initial level from gpioget, logical');
    const monitor = version === 1 ? 'gpiomon -b -F %e %o gpiochip4 22' : 'gpiomon -e both -F %e %o -c gpiochip4 22';
    // open() returns once gpiomon is spawned; its own first act is logging the call.
    while (tools.calls('gpiomon').length === 0) await new Promise((r) => setTimeout(r, 5));
    t.same(tools.calls('gpiomon'), [monitor]);
    const press = nextEdge(button);
    tools.edge(22, 'falling'); // wire goes low: pressed
    t.match(await press, { bcm: 22, edge: 'rising', value: 1 });
    t.equal(await button.read(), 1, 'reads follow the monitor, not gpioget');
    const release = nextEdge(button);
    tools.edge(22, 'rising');
    t.match(await release, { edge: 'falling', value: 0 });
    t.equal(tools.calls('gpioget').filter((c) => !c.includes('--version')).length, 1, 'gpioget only once, before the monitor');
  });

  t.test(`v${version}: a refused line is HA_ERR_GPIO_IO with gpioset's message`, async (t) => {
    const { tools, backend } = setup(t, version, { holdConfirmMs: 10_000 });
    tools.refuse(5);
    const error = await expectErrorAsync(t, () => backend.open(5, { direction: 'out' }), 'HA_ERR_GPIO_IO');
    t.match(error.message, /Device or resource busy/);
    t.match(backend.describe(), /0 pin\(s\) open/, 'the failed pin is not left open');
  });

  t.test(`v${version}: crash steps stop the orphaned holder and hold the safe value; the next open takes over`, async (t) => {
    const { tools, backend, runDir } = setup(t, version);
    const pump = await backend.open(12, { direction: 'out', initial: 1 });
    const holderLost = new Promise<string>((resolve) => pump.onError((e) => resolve(e.code)));
    const pidFile = join(runDir, 'gpiod-gpiochip4-12.pid');
    const orphan = Number(readFileSync(pidFile, 'utf8'));
    const steps = backend.safeStateSteps(pump, 0);
    t.match(steps, [
      { kind: 'kill', pid_file: pidFile, expect: 'gpioset' },
      { kind: 'spawn', args: version === 1 ? ['--mode=signal', 'gpiochip4', '12=0'] : ['-c', 'gpiochip4', '12=0'], pid_file: pidFile },
    ]);
    // The watcher inherits HomeAgent's environment; here that must include the fake tools' state dir.
    const saved = { ...process.env };
    Object.assign(process.env, tools.env);
    try {
      t.same(await applySafeStateSteps(steps), []);
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    }
    t.notOk(alive(orphan), 'the holder at the old value is gone');
    const safeHolder = Number(readFileSync(pidFile, 'utf8'));
    t.not(safeHolder, orphan);
    t.teardown(() => {
      if (alive(safeHolder)) process.kill(safeHolder, 'SIGKILL');
    });
    while (tools.line(12) !== '0') await new Promise((r) => setTimeout(r, 5));
    t.equal(tools.line(12), '0', 'the safe value is held by the watcher-started gpioset');
    t.equal(await holderLost, 'HA_ERR_GPIO_IO', 'the running backend noticed its holder was taken away');

    // A restart: same tools, same run directory. Closing the old pin must not remove the pid file,
    // which now names the watcher's holder.
    await backend.close();
    t.equal(Number(readFileSync(pidFile, 'utf8')), safeHolder);
    const restarted = new GpiodGpioBackend({ path: tools.path, env: tools.env, runDir, holdConfirmMs: 30 });
    t.teardown(() => restarted.close());
    await restarted.open(12, { direction: 'out', initial: 0 });
    await ended(safeHolder);
    t.pass('the next start stopped the safe holder before taking the line');
  });
}

t.test('a gpiomon that dies is reported through onError', async (t) => {
  const { tools, backend } = setup(t, 2);
  const pin = await backend.open(6, { direction: 'in', edge: 'both' });
  const failed = new Promise<string>((resolve) => pin.onError((e) => resolve(e.message)));
  // The fake gpiomon ends as `tail -f <events file>` under the monitor's pid.
  process.kill(await findPid('tail', join(tools.dir, 'events6')), 'SIGKILL');
  t.match(await failed, /gpiomon exited/);
});

/** The pid of the `program` process with `arg` among its arguments (waits until it exists). */
async function findPid(program: string, arg: string): Promise<number> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        if (args[0] === program && args.includes(arg)) return Number(entry);
      } catch {
        // raced with its exit
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no ${program} process with ${arg}`);
}

t.test('missing tools, an unsupported version and a board without a Pi chip are HA_ERR_GPIO_UNAVAILABLE', async (t) => {
  const root = tempDir(t, 'ha-gpiod-');
  const none = new GpiodGpioBackend({ path: join(root, 'empty-bin'), env: process.env });
  const missing = await expectErrorAsync(t, () => none.open(17, { direction: 'out' }), 'HA_ERR_GPIO_UNAVAILABLE');
  t.match(missing.message, /apt install gpiod/);

  const tools = new FakeGpiod(root, 1, 'gpiochip0 [some-expander] (8 lines)\n');
  const noChip = new GpiodGpioBackend({ path: tools.path, env: tools.env });
  const chip = await expectErrorAsync(t, () => noChip.open(17, { direction: 'out' }), 'HA_ERR_GPIO_UNAVAILABLE');
  t.match(chip.message, /gpiochip0 \[some-expander\] \(8 lines\)/);

  const wrongChip = new GpiodGpioBackend({ path: tools.path, env: tools.env, chip: 'gpiochip9' });
  await expectErrorAsync(t, () => wrongChip.open(17, { direction: 'out' }), 'HA_ERR_GPIO_UNAVAILABLE');

  const v3 = new GpiodGpioBackend({ path: tools.path, env: { ...tools.env, FAKE_GPIOD_VERSION: '3' } });
  const version = await expectErrorAsync(t, () => v3.open(17, { direction: 'out' }), 'HA_ERR_GPIO_UNAVAILABLE');
  t.match(version.message, /unsupported libgpiod tools version.*v3\.0\.0/);
});

t.test('output parsers', async (t) => {
  t.same(parseGpiodetect(PI5_GPIODETECT).at(-1), { name: 'gpiochip4', label: 'pinctrl-rp1', ngpio: 54, base: -1 });
  t.equal(parseGetOutput('1\n'), 1);
  t.equal(parseGetOutput('"17"=inactive\n'), 0);
  t.equal(parseGetOutput('GPIO17=active'), 1);
  expectError(t, () => parseGetOutput('maybe'), 'HA_ERR_GPIO_IO');
});
