/**
 * A real entity registry over a fresh home.db in a temp dir, with a clock the test moves and the
 * events it emitted recorded.
 */
import { join } from 'node:path';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import { EntityRegistry, type EntityRegistryOptions, type HomeSettings } from '../../../src/home/entity-registry.js';
import type { LogManager } from '../../../src/log/logger.js';
import type { Clock } from '../../../src/shared/clock.js';
import { ManagedDatabase } from '../../../src/store/database.js';
import { silentLogs, type Teardown, tempDir } from '../fixtures/support.js';

export const T0 = Date.parse('2025-03-01T12:00:00.000Z');

export interface ManualClock extends Clock {
  set(at: number): void;
  advance(ms: number): void;
}

export function manualClock(start = T0): ManualClock {
  let now = start;
  return {
    now: () => now,
    monotonic: () => now,
    set: (at) => {
      now = at;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

export function homeSettings(overrides: Partial<HomeSettings> = {}): HomeSettings {
  return {
    areas: [],
    history_raw_days: 7,
    history_days: 365,
    history_period_minutes: 60,
    history_max_rows: 1_000_000,
    maintenance_interval_ms: 3_600_000,
    ...overrides,
  };
}

export interface HomeSetup {
  registry: EntityRegistry;
  database: ManagedDatabase;
  events: EventBus;
  clock: ManualClock;
  file: string;
  settings: HomeSettings;
  /** Every event emitted, in order. */
  seen: Array<{ event: keyof EventMap; payload: unknown }>;
  stateChanges(): Array<EventMap['entity.state_changed']>;
  /** A second registry on the same file (a restart). */
  reopen(): EntityRegistry;
}

export interface HomeOptions {
  settings?: Partial<HomeSettings>;
  dir?: string;
  clock?: ManualClock;
  /** Where the registry logs (default: nowhere). */
  logs?: LogManager;
  writeBehind?: EntityRegistryOptions['writeBehind'];
  onFlush?: EntityRegistryOptions['onFlush'];
}

export function openHome(t: Teardown, options: HomeOptions = {}): HomeSetup {
  const dir = options.dir ?? tempDir(t, 'ha-home-');
  const file = join(dir, 'home.db');
  const logs = options.logs ?? silentLogs();
  const clock = options.clock ?? manualClock();
  const settings = homeSettings(options.settings);
  const open = () => {
    const database = ManagedDatabase.open(
      { name: 'home', file, synchronous: 'NORMAL' },
      { busyTimeoutMs: 2000, startupCheck: 'off', log: logs.child('store'), clock },
    );
    t.teardown(() => database.close());
    return database;
  };
  const database = open();
  const events = new EventBus(logs.child('events'));
  const seen: HomeSetup['seen'] = [];
  for (const event of ['entity.registered', 'entity.removed', 'entity.state_changed'] as const) {
    events.on('test', event, (payload) => void seen.push({ event, payload }));
  }
  const make = (db: ManagedDatabase) =>
    new EntityRegistry({
      database: () => db,
      events,
      log: logs.child('home'),
      clock,
      settings: () => settings,
      ...(options.writeBehind !== undefined && { writeBehind: options.writeBehind }),
      ...(options.onFlush !== undefined && { onFlush: options.onFlush }),
    });
  return {
    registry: make(database),
    database,
    events,
    clock,
    file,
    settings,
    seen,
    stateChanges: () => seen.filter((s) => s.event === 'entity.state_changed').map((s) => s.payload as EventMap['entity.state_changed']),
    reopen: () => make(open()),
  };
}
