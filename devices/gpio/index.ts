/** GPIO device driver: back ends, selection and the safety layer (see each module's comment). */
export {
  DEFAULT_SYSFS_ROOT,
  findMainSysfsChip,
  type GpioChipInfo,
  kernelGpioNumber,
  listSysfsChips,
  MAIN_CHIP_LABELS,
  pickMainChip,
} from './chip-offset.js';
export { EdgeFilter } from './edge-filter.js';
export * from './gpio-backend.js';
export { type GpioClock, ManualClock, systemGpioClock, type TimerHandle } from './gpio-clock.js';
export { type GpiodBackendOptions, GpiodGpioBackend } from './gpiod-backend.js';
export {
  defaultWatcherScript,
  type GuardedPinConfig,
  MAX_ON_TIME_S,
  MAX_PULSE_MS,
  PinGuard,
  type PinGuardEvent,
  type PinGuardOptions,
  type SafeValue,
  validateGuardedPins,
  type WatcherOptions,
} from './pin-guard.js';
export type { SafeStateReport, SafeStateSpec, SafeStateStep } from './safe-state.js';
export { type GpioBackendChoice, type SelectedBackend, selectGpioBackend } from './select-backend.js';
export {
  type PressOptions,
  type SimulatedBackendOptions,
  SimulatedGpioBackend,
  SimulatedGpioControl,
  type SimulatedOperation,
  type WireChange,
} from './simulated-backend.js';
export { type SysfsBackendOptions, SysfsGpioBackend } from './sysfs-backend.js';
export { DEFAULT_POLL_INTERVAL_MS, loadOnoff } from './sysfs-edge-source.js';
