/**
 * What the supervisor tests share: fakes at each seam of the Supervisor (plugin host, change
 * tracker, notifier, loop window, daemon status, announcements) that record what was asked of
 * them, on a real EventBus, driven by a ManualTimerClock. Settings are the real defaults of
 * core.supervisor and core.tracker with per-test overrides.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { defaultConfig } from '../../../src/config/loader.js';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import type { SupervisorSettings } from '../../../src/supervisor/supervisor.js';
import { type PluginHealthRow, Supervisor, type SupervisorOptions } from '../../../src/supervisor/supervisor.js';
import type { ChangeSet, SupervisedTracker, TrialState } from '../../../src/tracker/change-types.js';
import { ManualTimerClock, settle } from '../../helpers/manual-timer-clock.js';
import { type CapturedLogs, captureLogs } from '../fixtures/support.js';

export const MIB = 1024 * 1024;

export class FakeNotifier {
  pings = 0;
  constructor(public interval: number | undefined) {}
  watchdog(): void {
    this.pings++;
  }
  watchdogIntervalMs(): number | undefined {
    return this.interval;
  }
}

/** closeWindow() answers the stall set with stallOnce() once, then 0. */
export class FakeLoop {
  enabled = false;
  #next = 0;
  stallOnce(ms: number): void {
    this.#next = ms;
  }
  enable(): void {
    this.enabled = true;
  }
  disable(): void {
    this.enabled = false;
  }
  closeWindow(): number {
    const stall = this.#next;
    this.#next = 0;
    return stall;
  }
}

/** Plugins by name with the health row each answers; folder = the tracked folder (installed plugins). */
export class FakePlugins {
  readonly rows = new Map<string, PluginHealthRow>();
  readonly folders = new Map<string, string>();
  readonly restarts: Array<{ name: string; actor: string; at: number }> = [];
  healthCalls = 0;
  /** When set, health() waits for it (a slow ping). */
  gate: Promise<void> | undefined;
  constructor(readonly clock: ManualTimerClock) {}

  add(name: string, options: { folder?: string; ok?: boolean; state?: string; detail?: string } = {}): void {
    this.rows.set(name, { name, state: options.state ?? 'running', ok: options.ok ?? true, detail: options.detail ?? 'fine' });
    if (options.folder !== undefined) this.folders.set(name, options.folder);
  }

  set(name: string, patch: Partial<PluginHealthRow>): void {
    const row = this.rows.get(name);
    if (!row) throw new Error(`no fake plugin ${name}`);
    this.rows.set(name, { ...row, ...patch });
  }

  async health(): Promise<PluginHealthRow[]> {
    this.healthCalls++;
    if (this.gate) await this.gate;
    return [...this.rows.values()].map((r) => ({ ...r }));
  }

  async restart(name: string, actor: string): Promise<void> {
    this.restarts.push({ name, actor, at: this.clock.now() });
  }

  folderOf(name: string): string | undefined {
    return this.folders.get(name);
  }
}

export function changeSet(id: number, patch: Partial<ChangeSet> = {}): ChangeSet {
  return {
    id,
    actor: 'agent',
    tool: 'files_write',
    channel: null,
    started_at: '2026-01-05T08:00:00.000Z',
    finished_at: '2026-01-05T08:00:00.000Z',
    status: 'trial',
    plugins: ['weather'],
    files: [],
    decided_at: null,
    decided_by: null,
    reason: null,
    reverts: null,
    ...patch,
  };
}

/** A tracker holding one trial (or none), the folders with pending changes, and what it was asked. */
export class FakeTracker implements SupervisedTracker {
  current: TrialState | null = null;
  pending: string[] = [];
  /** What the next rollbackPending answers. */
  undo: ChangeSet[] = [];
  readonly commits: string[] = [];
  readonly rollbacks: Array<{ by: string; reason: string; at: number }> = [];
  rollbackError: Error | undefined;
  constructor(readonly clock: ManualTimerClock) {}

  /** Puts change sets on trial now (as the tracker does when a change is recorded). */
  startTrial(ids: number[], plugins: string[], activationErrors: TrialState['activation_errors'] = []): void {
    this.current = {
      change_set_ids: ids,
      started_at: new Date(this.clock.now()).toISOString(),
      plugins,
      activation_errors: activationErrors,
    };
    this.pending = [...plugins];
    this.undo = ids.map((id) => changeSet(id, { plugins }));
  }

  trial(): TrialState | null {
    return this.current;
  }

  async pendingPlugins(): Promise<string[]> {
    return [...this.pending];
  }

  async commitTrial(by: string): Promise<void> {
    this.commits.push(by);
    this.current = null;
    this.pending = [];
  }

  async rollbackPending(by: string, reason: string): Promise<ChangeSet[]> {
    if (this.rollbackError) throw this.rollbackError;
    this.rollbacks.push({ by, reason, at: this.clock.now() });
    this.current = null;
    this.pending = [];
    const undone = this.undo;
    this.undo = [];
    return undone;
  }
}

export class FakeStatus {
  readonly healthy: boolean[] = [];
  readonly notices = new Map<string, { level: 'error' | 'warning'; message: string }>();
  setHealthy(healthy: boolean): void {
    this.healthy.push(healthy);
  }
  notice(level: 'error' | 'warning', key: string, message: string): void {
    this.notices.set(key, { level, message });
  }
  clearNotice(key: string): void {
    this.notices.delete(key);
  }
}

export interface Kit {
  clock: ManualTimerClock;
  logs: CapturedLogs;
  events: EventBus;
  changes: Array<EventMap['health.changed']>;
  notifier: FakeNotifier;
  loop: FakeLoop;
  plugins: FakePlugins;
  tracker: FakeTracker;
  status: FakeStatus;
  announced: Array<{ text: string; channel: string | undefined }>;
  /** Mutable inputs of the kernel checks. */
  inputs: {
    dbError: Error | undefined;
    devices: Array<{ id: string; detail: string }>;
    llm: Array<{ name: string; base_url: string }>;
    rss: number;
    cgroup: number | null;
  };
  settings: SupervisorSettings;
  startupRollbacks: ChangeSet[];
  supervisor: Supervisor;
  /** The heartbeat interval of `settings`. */
  interval: number;
}

export interface KitOptions {
  watchdogMs?: number;
  tracker?: boolean;
  supervisor?: Partial<SupervisorSettings['supervisor']>;
  tracker_settings?: Partial<SupervisorSettings['tracker']>;
  startupRollbacks?: ChangeSet[];
  /** Probe language model sources over real HTTP (llm-probe.ts) instead of answering reachable. */
  realProbe?: boolean;
  options?: Partial<SupervisorOptions>;
}

/** Builds a Supervisor over fakes; stopped at teardown. Not started. */
export function supervisorKit(t: Test, opts: KitOptions = {}): Kit {
  const clock = new ManualTimerClock();
  const logs = captureLogs('debug');
  const events = new EventBus(logs.logs.child('events'));
  const changes: Array<EventMap['health.changed']> = [];
  events.on('test', 'health.changed', (c) => void changes.push(c));
  const config = defaultConfig().core;
  const settings: SupervisorSettings = {
    supervisor: {
      ...config.supervisor,
      heartbeat_interval_ms: 1000,
      restart_backoff_ms: 1000,
      restart_backoff_max_ms: 8000,
      ...opts.supervisor,
    },
    tracker: { ...config.tracker, ...opts.tracker_settings },
  };
  const inputs: Kit['inputs'] = { dbError: undefined, devices: [], llm: [], rss: 100 * MIB, cgroup: null };
  const notifier = new FakeNotifier(opts.watchdogMs);
  const loop = new FakeLoop();
  const plugins = new FakePlugins(clock);
  const tracker = new FakeTracker(clock);
  const status = new FakeStatus();
  const announced: Kit['announced'] = [];
  const startupRollbacks = opts.startupRollbacks ?? [];
  const supervisor = new Supervisor({
    notifier,
    loop,
    stateDb: () => {
      if (inputs.dbError) throw inputs.dbError;
    },
    llm: () => inputs.llm,
    devices: () => inputs.devices,
    plugins,
    tracker: opts.tracker === false ? undefined : tracker,
    startupRollbacks: () => startupRollbacks,
    announce: async (text, channel) => {
      announced.push({ text, channel });
    },
    status,
    settings: () => settings,
    events,
    log: logs.logs.child('supervisor'),
    clock,
    memory: () => ({ rss_bytes: inputs.rss, cgroup_limit_bytes: inputs.cgroup }),
    ...(opts.realProbe ? {} : { probe: async () => ({ reachable: true, detail: 'HTTP 200', detail_zh: 'HTTP 200' }) }),
    ...opts.options,
  });
  t.teardown(() => supervisor.stop());
  return {
    clock,
    logs,
    events,
    changes,
    notifier,
    loop,
    plugins,
    tracker,
    status,
    announced,
    inputs,
    settings,
    startupRollbacks,
    supervisor,
    interval: settings.supervisor.heartbeat_interval_ms,
  };
}

/** Starts the supervisor and lets its first round finish. */
export async function startKit(kit: Kit): Promise<void> {
  await kit.supervisor.start();
  await settle();
}

/** Moves to the next scheduled round and lets it finish. */
export async function nextRound(kit: Kit): Promise<void> {
  await kit.clock.advance(kit.interval);
}

export function component(kit: Kit, name: string) {
  return kit.supervisor.health().then((h) => h.components.find((c) => c.name === name));
}

/** Listens on a free local port until teardown; answers the port. */
export async function listen(t: Test, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

/** A port that nothing listens on: bound, then closed again. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
