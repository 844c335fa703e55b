/**
 * What the change tracker tests share: a ChangeTracker on the real UserspaceTracker and a real
 * SQLite state database in a test folder, a plugin host stand-in that records what the tracker
 * asked of it, and the events, audit records and logs it produced. `restart()` builds a second
 * tracker on the same folders and database file, as the next start after a stop or a crash.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { defaultConfig } from '../../../src/config/loader.js';
import type { Config } from '../../../src/config/schema.js';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import type { AuditRecord } from '../../../src/log/logger.js';
import { ManagedDatabase } from '../../../src/store/database.js';
import { ChangeTracker } from '../../../src/tracker/change-tracker.js';
import type { RefreshResult, TrackedPluginHost } from '../../../src/tracker/change-types.js';
import { UserspaceTracker } from '../../../src/tracker/userspace-tracker.js';
import { ManualTimerClock } from '../../helpers/manual-timer-clock.js';
import { type CapturedLogs, captureLogs } from '../fixtures/support.js';

export type HostCall = { call: 'refresh'; dirs: string[]; actor: string } | { call: 'stopTracked'; actor: string };

/** Records refresh/stopTracked calls; `failing` makes refresh report a load error for a folder. */
export class FakePluginHost implements TrackedPluginHost {
  readonly calls: HostCall[] = [];
  readonly failing = new Map<string, string>();
  /** Folders stopTracked answers (the overlay case). */
  running: string[] = [];

  async refresh(dirs: readonly string[], actor: string): Promise<RefreshResult> {
    this.calls.push({ call: 'refresh', dirs: [...dirs], actor });
    const errors = dirs.filter((d) => this.failing.has(d)).map((d) => ({ plugin: d, error: this.failing.get(d) as string }));
    return { plugins: [...dirs], errors };
  }

  async stopTracked(actor: string): Promise<string[]> {
    this.calls.push({ call: 'stopTracked', actor });
    return [...this.running];
  }
}

export interface TrackerSetup {
  dir: string;
  /** The plugins tree. */
  root: string;
  stateDir: string;
  tracker: ChangeTracker;
  host: FakePluginHost;
  clock: ManualTimerClock;
  database: ManagedDatabase;
  logs: CapturedLogs;
  settings: Config['core']['tracker'];
  states: Array<EventMap['change.state']>;
  audits: AuditRecord[];
  /** Reads a file of the tree as text, undefined when absent. */
  read(path: string): string | undefined;
  /** A new tracker on the same folders and database, started; this one is abandoned (as in a crash) unless stopped first. */
  restart(options?: { start?: boolean }): Promise<TrackerSetup>;
}

export interface TrackerSetupOptions {
  /** Files of the tree (testdir layout); they are the first good state. */
  tree?: NonNullable<Parameters<Test['testdir']>[0]>;
  settings?: Partial<Config['core']['tracker']>;
  start?: boolean;
  /** Makes the back end look like the overlay one (kind only) to test the stop/refresh order around commit and rollback. */
  overlayKind?: boolean;
}

export async function startTracker(t: Test, options: TrackerSetupOptions = {}): Promise<TrackerSetup> {
  const dir = t.testdir({ plugins: options.tree ?? {}, tracker: {}, sibling: 'outside the tree' });
  const settings = { ...defaultConfig().core.tracker, ...options.settings };
  return build(t, dir, settings, new ManualTimerClock(), options);
}

async function build(
  t: Test,
  dir: string,
  settings: Config['core']['tracker'],
  clock: ManualTimerClock,
  options: TrackerSetupOptions,
): Promise<TrackerSetup> {
  const root = join(dir, 'plugins');
  const stateDir = join(dir, 'tracker');
  const logs = captureLogs('debug');
  const log = logs.logs.child('tracker');
  const database = ManagedDatabase.open(
    { name: 'state', file: join(dir, 'state.db'), synchronous: 'FULL' },
    { busyTimeoutMs: 2000, startupCheck: 'off', log, clock },
  );
  t.teardown(() => database.close());
  const events = new EventBus(log);
  const states: Array<EventMap['change.state']> = [];
  events.on('test', 'change.state', (payload) => void states.push(payload));
  const audits: AuditRecord[] = [];
  const host = new FakePluginHost();
  const backend = new UserspaceTracker({ root, stateDir, log });
  if (options.overlayKind) Object.defineProperty(backend, 'kind', { value: 'overlay' });
  const tracker = new ChangeTracker({
    backend,
    stateDir,
    database: () => database,
    plugins: host,
    settings: () => setup.settings,
    events,
    log,
    audit: (record) => void audits.push(record),
    clock,
  });
  const setup: TrackerSetup = {
    dir,
    root,
    stateDir,
    tracker,
    host,
    clock,
    database,
    logs,
    settings,
    states,
    audits,
    read(path) {
      try {
        return readFileSync(join(root, path), 'utf8');
      } catch {
        return undefined;
      }
    },
    restart: async (again = {}) => {
      database.close();
      return build(t, dir, setup.settings, clock, { ...options, ...again });
    },
  };
  if (options.start !== false) {
    await tracker.start(new AbortController().signal);
    t.teardown(() => tracker.stop());
  }
  return setup;
}

/** The change.state events as `<id> <status> by <by>` lines. */
export function stateLines(setup: TrackerSetup): string[] {
  return setup.states.map((s) => `${s.id} ${s.status} by ${s.by}`);
}
