/**
 * Finds the Raspberry Pi's main GPIO chip and its sysfs base number.
 *
 * Since kernel 6.6 the sysfs GPIO numbers of the SoC chip no longer start at 0: BCM 17 is 529 on a
 * Pi 4 (base 512) and 588 on a Pi 5 (base 571), and exporting plain 17 fails with EINVAL. The base
 * is whatever the kernel put in /sys/class/gpio/gpiochipN/base, so it is read, never assumed.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HomeAgentError } from '../../src/sdk/index.js';

export const DEFAULT_SYSFS_ROOT = '/sys/class/gpio';

/**
 * Labels of the chip that drives the 40-pin header, best first: Pi 5 (RP1), Pi 4 (BCM2711),
 * Pi Zero–3 (BCM2835/6/7 all register as bcm2835).
 */
export const MAIN_CHIP_LABELS: readonly string[] = ['pinctrl-rp1', 'pinctrl-bcm2711', 'pinctrl-bcm2835'];

export interface GpioChipInfo {
  /** Directory name, e.g. `gpiochip512` (sysfs) or `gpiochip0` (character device). */
  name: string;
  /** First sysfs GPIO number of the chip (sysfs only; -1 where unknown). */
  base: number;
  label: string;
  ngpio: number;
}

async function readTrimmed(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** Every gpiochip* under a sysfs GPIO root with a readable base, label and ngpio. */
export async function listSysfsChips(root = DEFAULT_SYSFS_ROOT): Promise<GpioChipInfo[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const chips: GpioChipInfo[] = [];
  for (const name of names.filter((n) => /^gpiochip\d+$/.test(n)).sort()) {
    const [base, label, ngpio] = await Promise.all(['base', 'label', 'ngpio'].map((f) => readTrimmed(join(root, name, f))));
    const baseN = Number(base);
    const ngpioN = Number(ngpio);
    if (base === undefined || label === undefined || !Number.isInteger(baseN) || !Number.isInteger(ngpioN)) continue;
    chips.push({ name, base: baseN, label, ngpio: ngpioN });
  }
  return chips;
}

/**
 * The header chip: by label first (`preferLabels`, default {@link MAIN_CHIP_LABELS}); failing that
 * a chip the size of a Pi SoC bank (ngpio ≥ 54), then one that could still carry the header's 28
 * lines (28..64); ties go to the lowest base. Expanders (8 lines) and other small chips never win.
 */
export function pickMainChip(chips: readonly GpioChipInfo[], preferLabels: readonly string[] = MAIN_CHIP_LABELS): GpioChipInfo | undefined {
  for (const label of preferLabels) {
    const match = chips.find((c) => c.label === label);
    if (match) return match;
  }
  const byBase = [...chips].sort((a, b) => a.base - b.base || a.name.localeCompare(b.name));
  return byBase.find((c) => c.ngpio >= 54) ?? byBase.find((c) => c.ngpio >= 28 && c.ngpio <= 64);
}

export interface SysfsChip extends GpioChipInfo {
  root: string;
}

/** The header chip under `root`, or HA_ERR_GPIO_UNAVAILABLE naming what was found instead. */
export async function findMainSysfsChip(root = DEFAULT_SYSFS_ROOT, preferLabels?: readonly string[]): Promise<SysfsChip> {
  const chips = await listSysfsChips(root);
  const chip = pickMainChip(chips, preferLabels);
  if (chip === undefined) {
    const seen = chips.map((c) => `${c.name} [${c.label}] base ${c.base} ngpio ${c.ngpio}`).join('; ') || 'no gpiochip entries';
    throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `no Raspberry Pi GPIO chip under ${root} (${seen})`, {
      details: { root, chips: chips.length },
    });
  }
  return { ...chip, root };
}

/** The sysfs number of BCM `bcm` on `chip`: base + bcm. */
export function kernelGpioNumber(chip: GpioChipInfo, bcm: number): number {
  if (!Number.isInteger(bcm) || bcm < 0 || bcm >= chip.ngpio) {
    throw new HomeAgentError('HA_ERR_GPIO_CONFIG', `GPIO ${String(bcm)} is outside ${chip.name} [${chip.label}] (${chip.ngpio} lines)`, {
      details: { bcm, chip: chip.name },
    });
  }
  return chip.base + bcm;
}
