import { join } from 'node:path';
import t from 'tap';
import { selectGpioBackend } from '../../../../devices/gpio/select-backend.js';
import { expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { FakeGpiod, PI5_GPIODETECT } from './fixtures/fake-gpiod.js';
import { FakeSysfs, PI4_CHIPS } from './fixtures/fake-sysfs.js';

t.test('auto: sysfs where a Pi chip is listed, else the libgpiod tools, else the simulator with the reasons', async (t) => {
  const dir = tempDir(t, 'ha-gpio-select-');
  const sys = new FakeSysfs(join(dir, 'gpio'), PI4_CHIPS);
  const noTools = { path: join(dir, 'no-bin'), env: process.env };

  const withSysfs = await selectGpioBackend({ sysfs: { root: sys.root }, gpiod: noTools });
  t.equal(withSysfs.backend.kind, 'sysfs');

  const tools = new FakeGpiod(join(dir, 'tools'), 2, PI5_GPIODETECT);
  const withTools = await selectGpioBackend({ sysfs: { root: join(dir, 'absent') }, gpiod: { path: tools.path, env: tools.env } });
  t.equal(withTools.backend.kind, 'gpiod');
  t.match(withTools.reason, /sysfs GPIO absent/);

  const nothing = await selectGpioBackend({ sysfs: { root: join(dir, 'absent') }, gpiod: noTools });
  t.equal(nothing.backend.kind, 'simulated');
  t.match(nothing.reason, /^simulated: no sysfs GPIO \(.*export is missing\); the libgpiod tools are not installed/);
});

t.test('an explicitly configured back end that is not there is an error, not a silent simulator', async (t) => {
  const dir = tempDir(t, 'ha-gpio-select-');
  await expectErrorAsync(t, () => selectGpioBackend({ backend: 'sysfs', sysfs: { root: join(dir, 'absent') } }), 'HA_ERR_GPIO_UNAVAILABLE');
  await expectErrorAsync(
    t,
    () => selectGpioBackend({ backend: 'gpiod', gpiod: { path: join(dir, 'no-bin'), env: process.env } }),
    'HA_ERR_GPIO_UNAVAILABLE',
  );
  t.equal((await selectGpioBackend({ backend: 'simulated' })).backend.kind, 'simulated');
});
