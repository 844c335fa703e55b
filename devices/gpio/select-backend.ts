/**
 * Picks the GPIO back end: sysfs where the kernel has it and a Pi chip is listed, else the libgpiod
 * tools, else the simulator (the default on a machine without GPIO). The reason is returned so the
 * status line says why, e.g. "simulated: no sysfs GPIO (...); libgpiod tools not installed".
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { HomeAgentError } from '../../src/sdk/index.js';
import { DEFAULT_SYSFS_ROOT } from './chip-offset.js';
import type { GpioBackend, GpioBackendKind } from './gpio-backend.js';
import { type GpiodBackendOptions, GpiodGpioBackend } from './gpiod-backend.js';
import { type SimulatedBackendOptions, SimulatedGpioBackend } from './simulated-backend.js';
import { type SysfsBackendOptions, SysfsGpioBackend } from './sysfs-backend.js';

export interface GpioBackendChoice {
  backend?: 'auto' | GpioBackendKind;
  sysfs?: SysfsBackendOptions;
  gpiod?: GpiodBackendOptions;
  simulated?: SimulatedBackendOptions;
}

export interface SelectedBackend {
  backend: GpioBackend;
  reason: string;
  /** The reason in Chinese, for the health detail (a back end's own error text stays as it is). */
  reason_zh: string;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function trySysfs(options: SysfsBackendOptions): Promise<SysfsGpioBackend> {
  const root = options.root ?? DEFAULT_SYSFS_ROOT;
  try {
    await access(join(root, 'export'));
  } catch {
    throw new HomeAgentError('HA_ERR_GPIO_UNAVAILABLE', `no sysfs GPIO (${join(root, 'export')} is missing)`);
  }
  const backend = new SysfsGpioBackend(options);
  await backend.chip();
  return backend;
}

async function tryGpiod(options: GpiodBackendOptions): Promise<GpiodGpioBackend> {
  const backend = new GpiodGpioBackend(options);
  await backend.setup();
  return backend;
}

/** Builds the configured back end; `auto` falls through to the simulator, an explicit one throws. */
export async function selectGpioBackend(choice: GpioBackendChoice = {}): Promise<SelectedBackend> {
  const wanted = choice.backend ?? 'auto';
  if (wanted === 'simulated') {
    return { backend: new SimulatedGpioBackend(choice.simulated), reason: 'simulated: configured', reason_zh: 'simulated：按配置' };
  }
  if (wanted === 'sysfs') return { backend: await trySysfs(choice.sysfs ?? {}), reason: 'sysfs: configured', reason_zh: 'sysfs：按配置' };
  if (wanted === 'gpiod') return { backend: await tryGpiod(choice.gpiod ?? {}), reason: 'gpiod: configured', reason_zh: 'gpiod：按配置' };
  const why: string[] = [];
  try {
    return {
      backend: await trySysfs(choice.sysfs ?? {}),
      reason: 'sysfs: found a Raspberry Pi GPIO chip',
      reason_zh: 'sysfs：找到了树莓派 GPIO 芯片',
    };
  } catch (error) {
    why.push(message(error));
  }
  try {
    return {
      backend: await tryGpiod(choice.gpiod ?? {}),
      reason: 'gpiod: sysfs GPIO absent, libgpiod tools found',
      reason_zh: 'gpiod：没有 sysfs GPIO，找到了 libgpiod 工具',
    };
  } catch (error) {
    why.push(message(error));
  }
  return {
    backend: new SimulatedGpioBackend(choice.simulated),
    reason: `simulated: ${why.join('; ')}`,
    reason_zh: `simulated（模拟）：${why.join('；')}`,
  };
}
