import { join } from 'node:path';
import t from 'tap';
import {
  findMainSysfsChip,
  kernelGpioNumber,
  listSysfsChips,
  MAIN_CHIP_LABELS,
  pickMainChip,
} from '../../../../devices/gpio/chip-offset.js';
import { expectError, expectErrorAsync, tempDir } from '../../fixtures/support.js';
import { type FakeChip, PI3_CHIPS, PI4_CHIPS, PI5_CHIPS, writeChips } from './fixtures/fake-sysfs.js';

function tree(t: Parameters<typeof tempDir>[0], chips: FakeChip[]): string {
  const root = join(tempDir(t, 'ha-gpio-chips-'), 'gpio');
  writeChips(root, chips);
  return root;
}

t.test('Pi 3: pinctrl-bcm2835 at base 0, BCM 17 is 17', async (t) => {
  const chip = await findMainSysfsChip(tree(t, PI3_CHIPS));
  t.match(chip, { name: 'gpiochip0', base: 0, label: 'pinctrl-bcm2835', ngpio: 54 });
  t.equal(kernelGpioNumber(chip, 17), 17);
});

t.test('Pi 4 on kernel ≥ 6.6: pinctrl-bcm2711 at base 512, BCM 17 is 529', async (t) => {
  const chip = await findMainSysfsChip(tree(t, PI4_CHIPS));
  t.match(chip, { name: 'gpiochip512', base: 512, label: 'pinctrl-bcm2711' });
  t.equal(kernelGpioNumber(chip, 17), 529);
  t.equal(kernelGpioNumber(chip, 0), 512);
});

t.test('Pi 5: pinctrl-rp1 at base 571 among the brcmstb chips, BCM 17 is 588', async (t) => {
  const chip = await findMainSysfsChip(tree(t, PI5_CHIPS));
  t.match(chip, { name: 'gpiochip571', base: 571, label: 'pinctrl-rp1', ngpio: 54 });
  t.equal(kernelGpioNumber(chip, 17), 588);
});

t.test('the base is read from the tree, not assumed from the label', async (t) => {
  const chip = await findMainSysfsChip(tree(t, [{ name: 'gpiochip600', base: 600, label: 'pinctrl-bcm2711', ngpio: 58 }]));
  t.equal(kernelGpioNumber(chip, 4), 604);
});

t.test('no Raspberry Pi chip: HA_ERR_GPIO_UNAVAILABLE naming what was there', async (t) => {
  const onlyExpander = tree(t, [{ name: 'gpiochip504', base: 504, label: 'raspberrypi-exp-gpio', ngpio: 8 }]);
  const error = await expectErrorAsync(t, () => findMainSysfsChip(onlyExpander), 'HA_ERR_GPIO_UNAVAILABLE');
  t.match(error.message, /gpiochip504 \[raspberrypi-exp-gpio\] base 504 ngpio 8/);
  const missing = join(tempDir(t), 'no-such-dir');
  const empty = await expectErrorAsync(t, () => findMainSysfsChip(missing), 'HA_ERR_GPIO_UNAVAILABLE');
  t.match(empty.message, /no gpiochip entries/);
});

t.test('fallback without a known label: a SoC-sized chip first, then one that fits the header', async (t) => {
  const unknown = [
    { name: 'gpiochip496', base: 496, label: 'some-expander', ngpio: 16 },
    { name: 'gpiochip400', base: 400, label: 'future-soc', ngpio: 40 },
    { name: 'gpiochip700', base: 700, label: 'future-soc-big', ngpio: 64 },
  ];
  t.equal(pickMainChip(unknown)?.name, 'gpiochip700', 'ngpio ≥ 54 wins over a smaller one at a lower base');
  t.equal(pickMainChip(unknown.slice(0, 2))?.name, 'gpiochip400', 'then 28..64 lines');
  t.equal(pickMainChip(unknown.slice(0, 1)), undefined, 'a 16-line expander never carries the header');
  t.equal(pickMainChip(PI5_CHIPS, [])?.name, 'gpiochip571', 'Pi 5 without labels: the 54-line chip, not the 32-line brcmstb');
  t.same(MAIN_CHIP_LABELS, ['pinctrl-rp1', 'pinctrl-bcm2711', 'pinctrl-bcm2835']);
});

t.test('entries with unreadable or non-numeric attributes are skipped', async (t) => {
  const root = tree(t, [...PI4_CHIPS, { name: 'gpiochip9', base: Number.NaN, label: 'broken', ngpio: 54 }]);
  const chips = await listSysfsChips(root);
  t.same(
    chips.map((c) => c.name),
    ['gpiochip512', 'gpiochip570'],
  );
});

t.test('a BCM number outside the chip is a configuration error', async (t) => {
  const chip = await findMainSysfsChip(tree(t, PI4_CHIPS));
  expectError(t, () => kernelGpioNumber(chip, 58), 'HA_ERR_GPIO_CONFIG');
  expectError(t, () => kernelGpioNumber(chip, -1), 'HA_ERR_GPIO_CONFIG');
  expectError(t, () => kernelGpioNumber(chip, 1.5), 'HA_ERR_GPIO_CONFIG');
});
