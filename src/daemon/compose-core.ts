/**
 * The daemon's base (layers 0-1): the event bus, the databases, the runtime settings registry,
 * the control registry every area registers its methods in, and the daemon's status line. Nothing
 * here runs until the service runner starts the store and the settings.
 */
import { BUILTIN_DEFINITIONS } from '../config/definitions.js';
import type { LoadedConfig } from '../config/loader.js';
import type { RuntimePaths } from '../config/paths.js';
import { SettingsRegistry } from '../config/settings-registry.js';
import { EventBus } from '../events/event-bus.js';
import type { LogManager } from '../log/logger.js';
import { ControlRegistry } from '../plugin/control-registry.js';
import type { Clock, TimerClock } from '../shared/clock.js';
import { Store } from '../store/store.js';
import { DaemonStatus } from '../supervisor/daemon-status.js';
import { SETTING_CHECKS } from './setting-checks.js';

export interface CoreParts {
  loaded: LoadedConfig;
  paths: RuntimePaths;
  logs: LogManager;
  clock: Clock;
  /** The clock of the parts that set timers (automations, supervisor). */
  timerClock: TimerClock;
  newId: () => string;
  events: EventBus;
  store: Store;
  settings: SettingsRegistry;
  control: ControlRegistry;
  status: DaemonStatus;
}

export function composeCore(options: {
  loaded: LoadedConfig;
  paths: RuntimePaths;
  logs: LogManager;
  clock: Clock;
  timerClock: TimerClock;
  newId: () => string;
}): CoreParts {
  const { loaded, paths, logs, clock } = options;
  const core = loaded.config.core;
  const events = new EventBus(logs.child('events'));
  const store = new Store({
    databases: [
      { name: 'state', file: paths.stateDb, synchronous: 'FULL' },
      { name: 'memory', file: paths.memoryDb, synchronous: 'FULL' },
      // Derived from the files under <data>/knowledge and rebuildable from them.
      { name: 'knowledge', file: paths.knowledgeDb, synchronous: 'NORMAL' },
      // Written behind by the entity registry: a killed process or a power cut may lose the last
      // state reports (the devices report again at start); a clean stop loses nothing.
      { name: 'home', file: paths.homeDb, synchronous: 'NORMAL' },
    ],
    busyTimeoutMs: core.store.busy_timeout_ms,
    startupCheck: core.store.startup_check,
    log: logs.child('store'),
    clock,
  });
  const settings = new SettingsRegistry({
    database: () => store.database('state'),
    definitions: BUILTIN_DEFINITIONS,
    loaded,
    events,
    logs,
    clock,
    checks: SETTING_CHECKS,
  });
  const control = new ControlRegistry();
  const status = new DaemonStatus({ events, clock });
  return { ...options, events, store, settings, control, status };
}
