/**
 * The supervisor (issue 10): a health round every core.supervisor.heartbeat_interval_ms over the
 * kernel components (event loop, state database, memory, language models, devices, change
 * tracker) and every plugin; the systemd watchdog, fed only while the kernel is healthy; and what
 * to do about a plugin that fails.
 *
 * - A plugin change on trial (src/tracker) is rolled back at the first round that sees a failed
 *   kernel component, a failed plugin of the trial or a plugin of the trial that did not start, and
 *   committed after core.tracker.trial_health_intervals healthy scheduled rounds that started while
 *   it was already on trial (an on-demand `health` round may roll back but never shortens the
 *   window).
 * - Outside a trial a failing plugin whose folder has uncommitted changes is rolled back after
 *   core.supervisor.failures_before_rollback failed rounds in a row; any other failing plugin is
 *   restarted with a doubling backoff, unless its own crash-restart loop is already on it.
 * - Every rollback, also the ones done at startup, is announced in one plain sentence.
 *
 * Started last by the daemon (after plugins and automations) and stopped first, so it never acts
 * on a half-started or half-stopped daemon.
 */

import type { HealthAnswer } from '../api/health.js';
import type { Config } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import type { Logger } from '../log/logger.js';
import type { TimerClock, TimerHandle } from '../shared/clock.js';
import { describeError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ChangeSet, SupervisedTracker, TrialState } from '../tracker/change-types.js';
import {
  ComponentBook,
  type ComponentResult,
  describeComponent,
  devicesComponent,
  llmComponent,
  loopComponent,
  memoryComponent,
  pluginComponent,
  pluginComponentName,
  type SourceProbe,
  stateDbComponent,
  trackerComponent,
  worstStatus,
} from './components.js';
import type { DaemonStatus } from './daemon-status.js';
import type { LoopDelayCheck } from './health.js';
import { type Probe, probeUrl } from './llm-probe.js';
import { type MemoryUsage, readMemoryUsage } from './memory-usage.js';
import type { Notifier } from './notifier.js';

/** What PluginHost.health() answers per plugin. */
export interface PluginHealthRow {
  name: string;
  state: string;
  ok: boolean;
  detail: string;
  /** The detail in Chinese, when the plugin gave one (PluginHealth.detail_zh). */
  detail_zh?: string;
  /** When it last crashed or failed (epoch ms): a plugin up between two crashes still answers its ping. */
  crashed_at?: number;
}

export interface SupervisedPlugins {
  /** PluginHost.health(): pings every running plugin. */
  health(): Promise<PluginHealthRow[]>;
  /** Reloads one plugin. */
  restart(name: string, actor: string): Promise<void>;
  /** The plugin's top-level folder in the tracked tree, undefined for shipped plugins. */
  folderOf(name: string): string | undefined;
}

export interface SupervisorSettings {
  supervisor: Config['core']['supervisor'];
  tracker: Config['core']['tracker'];
}

export interface SupervisorOptions {
  notifier: Pick<Notifier, 'watchdog' | 'watchdogIntervalMs'>;
  loop: Pick<LoopDelayCheck, 'enable' | 'disable' | 'closeWindow'>;
  /** Throws when the state database cannot be written. */
  stateDb: () => void;
  /** The configured, enabled language model sources; empty when no model is configured. */
  llm: () => Array<{ name: string; base_url: string }>;
  /** Devices in error (an unavailable sensor, ...). */
  devices: () => Array<{ id: string; detail: string }>;
  plugins: SupervisedPlugins;
  /** Undefined when core.tracker.backend is off. */
  tracker: SupervisedTracker | undefined;
  /** What the tracker rolled back at startup (a restart during a trial); announced once by start(). */
  startupRollbacks: () => ChangeSet[];
  /** Sends on an output channel; the daemon resolves '' and unknown channels (and undefined) to its default one. */
  announce: (text: string, channel: string | undefined) => Promise<void>;
  status: Pick<DaemonStatus, 'setHealthy' | 'notice' | 'clearNotice'>;
  settings: () => SupervisorSettings;
  events: EventBus;
  log: Logger;
  clock: TimerClock;
  /** Resident memory and the cgroup limit; memory-usage.ts by default. */
  memory?: () => MemoryUsage;
  /** Reachability of a language model source; llm-probe.ts by default. */
  probe?: Probe;
}

/** The round's view a decision needs. */
interface RoundFacts {
  /** Scheduled rounds count toward committing a trial; on-demand ones do not. */
  scheduled: boolean;
  startedAt: number;
  trialAtStart: TrialState | null;
  /** The event loop since the previous round (the watchdog may have reported a stall as over already). */
  loop: ComponentResult;
  /** Undefined when the plugin host could not be asked. */
  plugins: PluginHealthRow[] | undefined;
  settings: SupervisorSettings;
}

interface RestartBackoff {
  /** The wait before the next restart. */
  waitMs: number;
  /** Monotonic ms at which the next restart may happen. */
  dueAt: number;
}

const NOTICE_ROLLBACK = 'supervisor.rollback';

export class Supervisor implements Service {
  readonly name = 'supervisor';
  readonly #o: SupervisorOptions;
  readonly #memory: () => MemoryUsage;
  readonly #probe: Probe;
  readonly #book = new ComponentBook();
  /** The notice message set per component key, so an unchanged failure does not republish the status. */
  readonly #notices = new Map<string, string>();
  readonly #pendingFailures = new Map<string, number>();
  readonly #restarts = new Map<string, RestartBackoff>();
  readonly #announcing = new Set<Promise<void>>();
  #started = false;
  #startupAnnounced = false;
  #watchdogOn = false;
  #healthy = true;
  #roundTimer: TimerHandle | undefined;
  #watchdogTimer: TimerHandle | undefined;
  #round: Promise<HealthAnswer> | undefined;
  #last: { checkedAt: string; at: number } | undefined;
  #stallSinceTick = 0;
  #stallSinceRound = 0;
  #llm: { key: string; at: number; probes: SourceProbe[] } | undefined;
  #trialRounds: { key: string; healthy: number } | undefined;

  constructor(options: SupervisorOptions) {
    this.#o = options;
    this.#memory = options.memory ?? (() => readMemoryUsage());
    this.#probe = options.probe ?? probeUrl;
  }

  async start(): Promise<void> {
    this.#started = true;
    this.#o.loop.enable();
    if (!this.#startupAnnounced) {
      this.#startupAnnounced = true;
      const undone = this.#o.startupRollbacks();
      if (undone.length > 0) this.#announceRollback(undone, undone[0]?.reason ?? 'HomeAgent restarted while a change was on trial');
    }
    const interval = this.#o.notifier.watchdogIntervalMs();
    if (interval !== undefined) {
      this.#watchdogOn = true;
      this.#o.log.info({ interval_ms: interval }, 'feeding the systemd watchdog');
      this.#armWatchdog(interval);
    }
    // The first round runs now, not awaited: plugin pings and model probes may take seconds and
    // the daemon should report ready without waiting for them.
    void this.#scheduledRound();
  }

  async stop(): Promise<void> {
    this.#started = false;
    this.#watchdogOn = false;
    this.#roundTimer?.cancel();
    this.#watchdogTimer?.cancel();
    this.#roundTimer = undefined;
    this.#watchdogTimer = undefined;
    this.#o.loop.disable();
    await this.#round?.catch(() => undefined);
    await Promise.allSettled([...this.#announcing]);
  }

  /**
   * Start-up is over (READY is being sent). Stalls until now were start-up work — modules loading,
   * migrations, the first grammar compile — which on a slow Pi (or under emulation) can hold the
   * loop for seconds; they say nothing about a hung loop, and systemd's watchdog only runs from
   * READY on. Forget them, so the first tick after READY does not withhold WATCHDOG=1 for them.
   */
  ready(): void {
    this.#o.loop.closeWindow();
    this.#o.loop.closeWindow();
    this.#stallSinceTick = 0;
    this.#stallSinceRound = 0;
  }

  /** One health round now (or the one already running). Decisions are only taken while started. */
  check(): Promise<HealthAnswer> {
    return this.#startRound(false);
  }

  /** The `health` method's answer: the last round's while it is younger than one interval, else a new round. */
  async health(): Promise<HealthAnswer> {
    if (this.#round) return this.#round;
    const interval = this.#o.settings().supervisor.heartbeat_interval_ms;
    if (this.#last && this.#o.clock.monotonic() - this.#last.at < interval) return this.#answer(this.#last.checkedAt);
    return this.check();
  }

  // ---- rounds ----

  #startRound(scheduled: boolean): Promise<HealthAnswer> {
    if (this.#round) return this.#round;
    const round = this.#runRound(scheduled).finally(() => {
      this.#round = undefined;
    });
    this.#round = round;
    return round;
  }

  async #scheduledRound(): Promise<void> {
    this.#roundTimer = undefined;
    const began = this.#o.clock.monotonic();
    try {
      // An on-demand round in progress stands in for this one (without counting toward a commit).
      await (this.#round ?? this.#startRound(true));
    } catch (error) {
      this.#o.log.error({ err: error }, 'health round failed');
    }
    if (!this.#started) return;
    // Re-read so a changed interval applies from the next round; counted from this round's start.
    const interval = this.#o.settings().supervisor.heartbeat_interval_ms;
    const wait = Math.max(0, interval - (this.#o.clock.monotonic() - began));
    this.#roundTimer = this.#o.clock.setTimer(() => void this.#scheduledRound(), wait);
  }

  async #runRound(scheduled: boolean): Promise<HealthAnswer> {
    const { clock, tracker } = this.#o;
    const settings = this.#o.settings();
    const startedAt = clock.now();
    const trialAtStart = guarded(() => tracker?.trial() ?? null, null);
    this.#takeLoopWindow();
    const loop = loopComponent(this.#stallSinceRound, settings.supervisor.max_loop_delay_ms);
    this.#stallSinceRound = 0;
    const [llm, plugins] = await Promise.all([this.#checkLlm(settings), this.#pluginHealth()]);
    const at = new Date(clock.now()).toISOString();
    // With a watchdog the event loop is judged at every watchdog tick, which is fresher than this
    // round; without one the round is the only judge.
    if (!this.#watchdogOn || this.#book.get('event_loop') === undefined) this.#apply(loop, at);
    this.#apply(stateDbComponent(this.#o.stateDb), at);
    this.#apply(this.#checkMemory(settings), at);
    this.#apply(llm, at);
    this.#apply(this.#checkDevices(), at);
    this.#apply(
      trackerComponent(
        tracker !== undefined,
        guarded(() => tracker?.trial() ?? null, null),
      ),
      at,
    );
    if (plugins) {
      for (const row of plugins) this.#apply(pluginComponent(row), at);
      const present = new Set(plugins.map((p) => pluginComponentName(p.name)));
      for (const gone of this.#book.forgetPluginsExcept(present)) this.#clearNotice(`supervisor.${gone}`);
    }
    this.#updateHealthy();
    if (this.#started) {
      try {
        await this.#decide({ scheduled, startedAt, trialAtStart, loop, plugins, settings });
      } catch (error) {
        this.#o.log.error({ err: error }, 'supervisor decision failed');
      }
    }
    this.#last = { checkedAt: at, at: clock.monotonic() };
    return this.#answer(at);
  }

  /** The book as it stands: the watchdog may have updated the event loop since the last round. */
  #answer(checkedAt: string): HealthAnswer {
    const components = this.#book.list();
    return {
      status: worstStatus(components.map((c) => c.status)),
      healthy: !components.some((c) => c.kind === 'kernel' && c.status === 'failed'),
      checked_at: checkedAt,
      components,
      trial: guarded(() => this.#o.tracker?.trial() ?? null, null),
    };
  }

  async #checkLlm(settings: SupervisorSettings): Promise<ComponentResult> {
    let sources: Array<{ name: string; base_url: string }>;
    try {
      sources = this.#o.llm();
    } catch (error) {
      const why = describeError(error);
      return {
        name: 'llm',
        kind: 'kernel',
        status: 'degraded',
        detail: `could not list the sources: ${why}`,
        detail_zh: `无法列出来源：${why}`,
      };
    }
    const key = JSON.stringify(sources.map((s) => [s.name, s.base_url]));
    const now = this.#o.clock.monotonic();
    const cached = this.#llm;
    if (cached && cached.key === key && now - cached.at < settings.supervisor.llm_check_interval_ms) return llmComponent(cached.probes);
    const timeout = settings.supervisor.llm_check_timeout_ms;
    const probes = await Promise.all(
      sources.map(async (s): Promise<SourceProbe> => {
        const result = await this.#probe(s.base_url, timeout).catch((error: unknown) => ({
          reachable: false,
          detail: describeError(error),
          detail_zh: describeError(error),
        }));
        return { name: s.name, base_url: s.base_url, reachable: result.reachable, detail: result.detail, detail_zh: result.detail_zh };
      }),
    );
    this.#llm = { key, at: now, probes };
    return llmComponent(probes);
  }

  async #pluginHealth(): Promise<PluginHealthRow[] | undefined> {
    try {
      return await this.#o.plugins.health();
    } catch (error) {
      this.#o.log.error({ err: error }, 'could not ask the plugin host for plugin health');
      return undefined;
    }
  }

  #checkMemory(settings: SupervisorSettings): ComponentResult {
    try {
      return memoryComponent(this.#memory(), settings.supervisor.memory_limit_mb);
    } catch (error) {
      const why = describeError(error);
      return {
        name: 'memory',
        kind: 'kernel',
        status: 'degraded',
        detail: `could not read memory use: ${why}`,
        detail_zh: `无法读取内存用量：${why}`,
      };
    }
  }

  #checkDevices(): ComponentResult {
    try {
      return devicesComponent(this.#o.devices());
    } catch (error) {
      const why = describeError(error);
      return {
        name: 'devices',
        kind: 'kernel',
        status: 'degraded',
        detail: `could not list devices: ${why}`,
        detail_zh: `无法列出设备：${why}`,
      };
    }
  }

  // ---- the watchdog ----

  #armWatchdog(interval: number): void {
    this.#watchdogTimer = this.#o.clock.setTimer(() => {
      this.#watchdogTick();
      if (this.#watchdogOn) this.#armWatchdog(interval);
    }, interval);
  }

  /**
   * WATCHDOG=1 only when the event loop ran on time since the last tick and no kernel component
   * of the last round failed. Plugin failures never hold the ping back: a daemon restart would not
   * fix a plugin, and the supervisor handles those itself (restart with backoff, or rollback).
   */
  #watchdogTick(): void {
    this.#takeLoopWindow();
    const loop = loopComponent(this.#stallSinceTick, this.#o.settings().supervisor.max_loop_delay_ms);
    this.#stallSinceTick = 0;
    this.#apply(loop, new Date(this.#o.clock.now()).toISOString());
    this.#updateHealthy();
    const otherKernelFailed = this.#book.failedKernel().some((c) => c.name !== 'event_loop');
    if (loop.status === 'ok' && !otherKernelFailed) this.#o.notifier.watchdog();
  }

  /** Closes the loop window once and hands its stall to both the watchdog and the next round. */
  #takeLoopWindow(): void {
    const stall = this.#o.loop.closeWindow();
    this.#stallSinceTick = Math.max(this.#stallSinceTick, stall);
    this.#stallSinceRound = Math.max(this.#stallSinceRound, stall);
  }

  // ---- statuses ----

  #apply(result: ComponentResult, at: string): void {
    const change = this.#book.record(result, at);
    const key = `supervisor.${result.name}`;
    if (result.status === 'failed') {
      const message = `${result.name} failed: ${result.detail}`;
      if (this.#notices.get(key) !== message) {
        this.#notices.set(key, message);
        this.#o.status.notice('error', key, message);
      }
    } else this.#clearNotice(key);
    // A component first seen ok is not news; one first seen degraded or failed is.
    if (change && (change.previous !== null || change.status !== 'ok')) {
      this.#o.events.emit('health.changed', change);
      const level = change.status === 'ok' ? 'info' : 'warn';
      this.#o.log[level](change, `${result.name} is ${change.status}`);
    }
  }

  #clearNotice(key: string): void {
    if (this.#notices.delete(key)) this.#o.status.clearNotice(key);
  }

  #updateHealthy(): void {
    const failing = this.#book.failedKernel();
    const healthy = failing.length === 0;
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    this.#o.status.setHealthy(healthy);
    if (healthy) this.#o.log.info('health checks pass again; feeding the watchdog');
    else {
      this.#o.log.error(
        { failing: failing.map((c) => ({ name: c.name, detail: c.detail })) },
        'health check failed; not feeding the systemd watchdog',
      );
    }
  }

  // ---- decisions ----

  async #decide(facts: RoundFacts): Promise<void> {
    const { tracker } = this.#o;
    for (const row of facts.plugins ?? []) {
      if (!row.ok) continue;
      // One round ok ends the plugin's backoff and its count of failures.
      this.#restarts.delete(row.name);
      this.#pendingFailures.delete(row.name);
    }
    const trial = tracker ? guarded(() => tracker.trial(), null) : null;
    if (tracker && trial) {
      const failure = this.#trialFailure(trial, facts);
      if (failure !== undefined) {
        await this.#rollback(tracker, failure);
        return;
      }
      if (await this.#countTrialRound(tracker, trial, facts)) return;
    } else this.#trialRounds = undefined;
    const failed = (facts.plugins ?? []).filter((p) => !p.ok);
    if (failed.length > 0) await this.#handleFailedPlugins(failed, facts.settings);
  }

  /** Why the change on trial must go, or undefined when this round saw nothing against it. */
  #trialFailure(trial: TrialState, facts: RoundFacts): string | undefined {
    const reasons: string[] = [];
    for (const e of trial.activation_errors) reasons.push(`plugin ${e.plugin} failed to start: ${e.error}`);
    const kernel = new Map(this.#book.failedKernel().map((c) => [c.name, c.detail]));
    // A stall the watchdog already saw end still happened during the trial.
    if (facts.loop.status === 'failed' && !kernel.has('event_loop')) kernel.set('event_loop', facts.loop.detail);
    for (const [name, detail] of kernel) reasons.push(`${describeComponent(name)} failed its check: ${detail}`);
    const onTrial = new Set(trial.plugins);
    const trialStart = Date.parse(trial.started_at);
    for (const p of facts.plugins ?? []) {
      const folder = this.#o.plugins.folderOf(p.name);
      if (folder === undefined || !onTrial.has(folder) || isSettling(p)) continue;
      if (!p.ok) reasons.push(`plugin ${p.name} failed its health check: ${p.detail}`);
      else if (p.crashed_at !== undefined && p.crashed_at >= trialStart)
        reasons.push(`plugin ${p.name} crashed at ${new Date(p.crashed_at).toISOString()} (running again since)`);
    }
    return reasons.length > 0 ? reasons.join(' and ') : undefined;
  }

  /** Counts a healthy round for the trial; commits when enough were seen. Answers whether it committed. */
  async #countTrialRound(tracker: SupervisedTracker, trial: TrialState, facts: RoundFacts): Promise<boolean> {
    const key = trialKey(trial);
    if (this.#trialRounds?.key !== key) this.#trialRounds = { key, healthy: 0 };
    // Only rounds that began with this very trial in place count: a round that started before a
    // change joined the trial may have pinged the plugins before it.
    const onTrial = new Set(trial.plugins);
    const settling = (facts.plugins ?? []).some((p) => isSettling(p) && onTrial.has(this.#o.plugins.folderOf(p.name) ?? ''));
    const counts =
      !settling &&
      facts.scheduled &&
      facts.plugins !== undefined &&
      facts.trialAtStart !== null &&
      trialKey(facts.trialAtStart) === key &&
      facts.startedAt >= Date.parse(trial.started_at);
    if (!counts) return false;
    this.#trialRounds.healthy++;
    const needed = facts.settings.tracker.trial_health_intervals;
    this.#o.log.debug({ change_sets: trial.change_set_ids, healthy_rounds: this.#trialRounds.healthy, needed }, 'trial round healthy');
    if (this.#trialRounds.healthy < needed) return false;
    this.#trialRounds = undefined;
    try {
      await tracker.commitTrial('supervisor');
      this.#o.log.info(
        { change_sets: trial.change_set_ids, plugins: trial.plugins },
        `the plugin change stayed healthy for ${needed} rounds; committed`,
      );
    } catch (error) {
      this.#o.log.error({ err: error, change_sets: trial.change_set_ids }, 'could not commit the plugin change on trial');
    }
    return true;
  }

  async #handleFailedPlugins(failed: PluginHealthRow[], settings: SupervisorSettings): Promise<void> {
    const { tracker, plugins, log } = this.#o;
    const pending = new Set(tracker ? await tracker.pendingPlugins().catch(() => [] as string[]) : []);
    const rollbackReasons: string[] = [];
    const restarts: Array<Promise<void>> = [];
    for (const p of failed) {
      const folder = plugins.folderOf(p.name);
      if (tracker && folder !== undefined && pending.has(folder)) {
        const count = (this.#pendingFailures.get(p.name) ?? 0) + 1;
        this.#pendingFailures.set(p.name, count);
        if (count >= settings.supervisor.failures_before_rollback) {
          rollbackReasons.push(`plugin ${p.name} failed ${count} health checks in a row: ${p.detail}`);
        }
        continue;
      }
      this.#pendingFailures.delete(p.name);
      // A process plugin that crashed is being restarted by its own loop (src/plugin/process);
      // a reload on top would fight it.
      if (p.state === 'restarting') continue;
      if (this.#restartDue(p.name, settings)) {
        log.warn({ plugin: p.name, detail: p.detail, next_wait_ms: this.#restarts.get(p.name)?.waitMs }, 'restarting a failing plugin');
        restarts.push(
          plugins
            .restart(p.name, 'supervisor')
            .catch((error: unknown) => log.warn({ err: error, plugin: p.name }, 'plugin restart failed')),
        );
      }
    }
    if (tracker && rollbackReasons.length > 0) await this.#rollback(tracker, rollbackReasons.join(' and '));
    await Promise.all(restarts);
  }

  /** First restart restart_backoff_ms after the failure is seen, then twice as long after each restart that did not help. */
  #restartDue(plugin: string, settings: SupervisorSettings): boolean {
    const now = this.#o.clock.monotonic();
    const { restart_backoff_ms: first, restart_backoff_max_ms: max } = settings.supervisor;
    const backoff = this.#restarts.get(plugin);
    if (!backoff) {
      const waitMs = Math.min(first, max);
      this.#restarts.set(plugin, { waitMs, dueAt: now + waitMs });
      this.#o.log.warn({ plugin, wait_ms: waitMs }, 'plugin failed its health check; restarting it after a wait');
      return false;
    }
    if (now < backoff.dueAt) return false;
    backoff.waitMs = Math.min(backoff.waitMs * 2, max);
    backoff.dueAt = now + backoff.waitMs;
    return true;
  }

  async #rollback(tracker: SupervisedTracker, reason: string): Promise<void> {
    this.#trialRounds = undefined;
    this.#pendingFailures.clear();
    this.#o.log.warn({ reason }, 'rolling back the uncommitted plugin changes');
    let undone: ChangeSet[];
    try {
      undone = await tracker.rollbackPending('supervisor', reason);
    } catch (error) {
      this.#o.log.error({ err: error, reason }, 'could not roll back the plugin changes');
      this.#o.status.notice('error', NOTICE_ROLLBACK, `Could not undo plugin changes (${reason}): ${describeError(error)}`);
      return;
    }
    if (undone.length > 0) this.#announceRollback(undone, reason);
  }

  // ---- announcements ----

  /** Log, daemon notice and one message per channel; sending is not awaited and never throws. */
  #announceRollback(undone: readonly ChangeSet[], reason: string): void {
    const text = rollbackSentence(undone, reason);
    this.#o.log.warn({ change_sets: undone.map((c) => c.id), reason }, text);
    this.#o.status.notice('warning', NOTICE_ROLLBACK, text);
    const configured = this.#o.settings().supervisor.announce_channel;
    const channels = new Set<string | undefined>(undone.map((c) => (configured !== '' ? configured : (c.channel ?? undefined))));
    for (const channel of channels) {
      const sending = this.#o
        .announce(text, channel)
        .catch((error: unknown) => this.#o.log.error({ err: error, channel }, 'could not announce the rollback'))
        .finally(() => this.#announcing.delete(sending));
      this.#announcing.add(sending);
    }
  }
}

/**
 * "I undid plugin change 12 (files_write by agent: plugins/weather) because plugin weather failed
 * its health check: ...; the plugins are back to their last good state."
 */
export function rollbackSentence(undone: readonly ChangeSet[], reason: string): string {
  const described = undone.map((c) => {
    const where = c.plugins.length > 0 ? `: ${c.plugins.map((p) => `plugins/${p}`).join(', ')}` : '';
    return `${c.id} (${c.tool} by ${c.actor}${where})`;
  });
  const list = described.length === 1 ? `change ${described[0]}` : `changes ${described.slice(0, -1).join(', ')} and ${described.at(-1)}`;
  return `I undid plugin ${list} because ${reason}; the plugins are back to their last good state.`;
}

/**
 * A plugin being started or stopped (the change is still being activated, or a reload is swapping
 * it) has not had its chance yet: its round neither fails nor counts for the trial. A start that
 * fails shows up as an activation error once the activation returns.
 */
function isSettling(p: PluginHealthRow): boolean {
  return p.state === 'starting' || p.state === 'stopping';
}

function trialKey(trial: TrialState): string {
  return `${trial.started_at}#${trial.change_set_ids.join(',')}`;
}

/** The tracker's trial() reads memory; should it ever throw, the round goes on without it. */
function guarded<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
