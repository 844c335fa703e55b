/**
 * The daemon as a value: `createDaemon(options)` composes HomeAgent from its areas in layer order
 * (src/daemon/compose-*.ts, docs/decisions/0007-daemon-composition.md), starts the services in
 * order, and `close()` stops them in reverse. Everything main.ts used to read from the process
 * (environment, working directory, log destination, clock) comes in through the options, and
 * nothing here touches signals, exit codes or process-wide handlers, so a test can build a whole
 * daemon inside its own process and close it again. main.ts keeps the command line, the signals
 * and the exit codes.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DestinationStream } from 'pino';
import { type LoadedConfig, loadConfig } from './config/loader.js';
import { type RuntimePaths, resolvePaths } from './config/paths.js';
import { composeAgent } from './daemon/compose-agent.js';
import { type CoreParts, composeCore } from './daemon/compose-core.js';
import { composeAutomationFileWatch, composeAutomations, composeEntities, composeLists } from './daemon/compose-home.js';
import { composeIntent } from './daemon/compose-intent.js';
import { composeKnowledge } from './daemon/compose-knowledge.js';
import { composeLlm } from './daemon/compose-llm.js';
import { composeMemory, type Submit } from './daemon/compose-memory.js';
import { composePlugins } from './daemon/compose-plugins.js';
import { composeNotifier, composeSupervisor, wireStatus } from './daemon/compose-supervisor.js';
import { composeTools } from './daemon/compose-tools.js';
import { composeTracker } from './daemon/compose-tracker.js';
import { LateBinding } from './daemon/late-binding.js';
import { SETTING_CHECKS } from './daemon/setting-checks.js';
import { type Logger, LogManager } from './log/logger.js';
import type { ControlRegistry } from './plugin/control-registry.js';
import { type Clock, systemClock, systemTimerClock, type TimerClock } from './shared/clock.js';
import { describeError, HomeAgentError, isHomeAgentError } from './shared/errors.js';
import { VERSION } from './shared/version.js';
import { registerKernelMethods } from './supervisor/kernel-methods.js';
import type { Notifier } from './supervisor/notifier.js';
import { PidLock } from './supervisor/pid-lock.js';
import { ServiceRunner, type StopResult } from './supervisor/service-runner.js';
import type { Supervisor } from './supervisor/supervisor.js';
import type { TrackedPluginHost } from './tracker/change-types.js';

export type { StopResult };

/** What the daemon reads from its surroundings; main.ts passes the process's own. */
export interface DaemonOptions {
  /** `--config FILE`: wins over $HOMEAGENT_CONFIG. */
  configFile?: string;
  /** HOMEAGENT_* settings, $HOMEAGENT_CONFIG, systemd's STATE_/RUNTIME_DIRECTORY, NOTIFY_SOCKET. */
  env: NodeJS.ProcessEnv;
  /** Relative paths of the configuration resolve against this directory. */
  cwd: string;
  /** The system-wide file read when no other is named; default /etc/homeagent/config.yaml. */
  systemConfigFile?: string;
  /** Where log lines go; stdout when omitted. */
  logDestination?: DestinationStream;
  clock?: Clock;
  /** The clock of the parts that set timers (automations, supervisor); default the system's. */
  timerClock?: TimerClock;
}

/** The configuration and the paths it resolves to: loaded before anything else exists. */
export interface DaemonConfig {
  loaded: LoadedConfig;
  paths: RuntimePaths;
}

export interface Daemon {
  readonly paths: RuntimePaths;
  /** The daemon's own logger (main.ts logs signals and crashes there). */
  readonly log: Logger;
  /** The control methods every transport (CLI socket, web API) calls. */
  readonly control: ControlRegistry;
  /**
   * Settles once start-up is over: resolves when every service runs and the daemon said it is
   * ready; rejects with the start-up error (the started services are stopped again and the lock
   * is released) or HA_ERR_ABORTED when close() came first.
   */
  readonly ready: Promise<void>;
  /** The CLI socket (plugin.cli.socket_path, else `<runtime>/homeagent.sock`). */
  socketPath(): string;
  /** core.daemon.stop_timeout_ms as it is now. */
  stopTimeoutMs(): number;
  /**
   * Gives up a start still running, stops the services in reverse within the stop timeout and
   * releases the lock. Idempotent: every call answers the same result. `reason` is what the
   * STOPPING status names (the signal, for main.ts).
   */
  close(reason?: string): Promise<StopResult>;
}

/**
 * Loads the configuration (defaults < file < environment) and resolves the paths. Throws the
 * HomeAgentError naming every problem (details.problems) when it is invalid: exit 78 for main.ts.
 */
export function loadDaemonConfig(options: Pick<DaemonOptions, 'configFile' | 'env' | 'cwd' | 'systemConfigFile'>): DaemonConfig {
  const loaded = loadConfig({
    env: options.env,
    checks: SETTING_CHECKS,
    ...(options.configFile !== undefined && { file: options.configFile }),
    ...(options.systemConfigFile !== undefined && { systemFile: options.systemConfigFile }),
  });
  return { loaded, paths: resolvePaths(loaded, options.env, options.cwd) };
}

/** The folder holding the built plugins/ and devices/ next to src/ (dist/ once built). */
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Composes the daemon and starts it (see {@link Daemon.ready}). Throws before anything runs when
 * the configuration is invalid (unless `config` is given, already loaded) or another daemon holds
 * the data directory (HA_ERR_DAEMON_ALREADY_RUNNING).
 */
export function createDaemon(options: DaemonOptions & { config?: DaemonConfig }): Daemon {
  const { loaded, paths } = options.config ?? loadDaemonConfig(options);
  const core = loaded.config.core;
  const logs = new LogManager({
    level: core.log.level,
    levels: core.log.levels,
    recent: { lines: core.log.recent_lines, lineBytes: core.log.recent_line_bytes },
    ...(options.logDestination !== undefined && { destination: options.logDestination }),
  });
  const log = logs.child('daemon');
  for (const warning of loaded.warnings) log.warn(warning);
  log.info({ version: VERSION, config_file: loaded.file ?? null, data_dir: paths.dataDir }, 'HomeAgent starting');

  mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(paths.runtimeDir, { recursive: true, mode: 0o750 });
  mkdirSync(join(paths.dataDir, 'inbox'), { recursive: true, mode: 0o750 });
  const lock = new PidLock(paths.pidFile);
  try {
    lock.acquire();
  } catch (error) {
    log.fatal({ err: error }, 'cannot start');
    throw error;
  }
  try {
    return compose(
      composeCore({
        loaded,
        paths,
        logs,
        clock: options.clock ?? systemClock,
        timerClock: options.timerClock ?? systemTimerClock,
        newId: randomUUID,
      }),
      { env: options.env, cwd: options.cwd },
      lock,
    );
  } catch (error) {
    // A part that cannot even be composed leaves no lock behind for the next attempt.
    lock.release();
    throw error;
  }
}

/** The areas in layer order; each builds its services and registers its own control methods. */
function compose(core: CoreParts, surroundings: { env: NodeJS.ProcessEnv; cwd: string }, lock: PidLock): Daemon {
  const { env, cwd } = surroundings;
  const { logs, settings, paths, status, store, control } = core;
  const log = logs.child('daemon');
  const notifier = composeNotifier(core, env);
  // The two cycles of the composition, closed once the later part exists (late-binding.ts).
  const trackerPlugins = new LateBinding<TrackedPluginHost>('the plugin host');
  const submit = new LateBinding<Submit>('the input scheduler');

  const tracker = composeTracker(core, trackerPlugins);
  const toolbox = composeTools(core, tracker);
  const llm = composeLlm(core, toolbox);
  const memory = composeMemory(core, toolbox, llm, submit);
  const { media, knowledge, mediaUpkeep } = composeKnowledge(core, toolbox, memory);
  const entities = composeEntities(core, toolbox);
  const { skills, scheduler } = composeAgent(core, { toolbox, llm, memory, media, entities });
  submit.bind((input, submitOptions) => scheduler.submit(input, submitOptions));
  const { io } = toolbox;
  const automations = composeAutomations(core, { entities, io, scheduler, tools: toolbox.tools });
  const automationFileWatch = composeAutomationFileWatch(core);
  const lists = composeLists(core, toolbox);
  const intent = composeIntent(core, { toolbox, llm, entities, lists: lists.lists, automations, memory });
  const plugins = composePlugins(core, {
    packageDir: PACKAGE_DIR,
    loaded: core.loaded,
    toolbox,
    llm,
    memory,
    knowledge,
    media,
    entities,
    scheduler,
    skills,
    tracker,
    trackerPlugins,
  });
  const supervisor = composeSupervisor(core, { notifier, io, entities, plugins, tracker });
  wireStatus(core, { notifier, agentLog: toolbox.agentLog });

  const runner = new ServiceRunner({ events: core.events, log, stopTimeoutMs: () => settings.config().core.daemon.stop_timeout_ms });
  // Automations start once the device drivers (plugins) have registered their entities and stop
  // before them, so no run is left switching a device that is going to its safe state. The list
  // upkeep and the intents' sentences wait for the plugins' entities too. The tracker settles a
  // trial a crash interrupted before any plugin loads; the supervisor starts last (it checks what
  // the others started) and so stops first.
  for (const service of [
    store,
    settings,
    tracker,
    llm.lua,
    memory,
    knowledge,
    mediaUpkeep,
    entities,
    scheduler,
    plugins,
    lists.upkeep,
    intent,
    automations,
    automationFileWatch,
    supervisor,
  ])
    runner.add(service);
  registerKernelMethods({
    control,
    settings,
    store,
    runner,
    plugins,
    status,
    health: () => supervisor.health(),
    logs,
    clock: core.clock,
    paths: { ...paths, backupDir: () => resolvePaths({ ...core.loaded, config: settings.config() }, env, cwd).backupDir },
    llm: llm.providers,
    scheduler,
    newId: core.newId,
  });

  return lifecycle(core, { runner, notifier, supervisor, lock });
}

/**
 * Start-up and shut-down around the composed parts: `ready` runs the services in order and
 * announces readiness (status line, supervisor, sd_notify, the "HomeAgent ready" log line);
 * `close()` gives up a start still running and stops them in reverse.
 */
function lifecycle(core: CoreParts, parts: { runner: ServiceRunner; notifier: Notifier; supervisor: Supervisor; lock: PidLock }): Daemon {
  const { logs, settings, paths, status, store, control } = core;
  const { runner, notifier, supervisor, lock } = parts;
  const log = logs.child('daemon');
  const socketPath = () => settings.config().plugin.cli.socket_path || join(paths.runtimeDir, 'homeagent.sock');
  const startup = new AbortController();
  const ready = (async () => {
    notifier.status('Starting');
    try {
      await runner.startAll(startup.signal);
    } catch (error) {
      if (!startup.signal.aborted) {
        // The plugin host found a plugin section of the file that does not fit the plugin's manifest.
        if (isHomeAgentError(error, 'HA_ERR_CONFIG_INVALID')) log.fatal({ err: error }, 'refusing to start: the configuration is invalid');
        else log.fatal({ err: error }, 'start-up failed');
        notifier.status(`Failed: ${describeError(error)}`);
        lock.release();
      }
      throw error;
    }
    if (startup.signal.aborted) throw new HomeAgentError('HA_ERR_ABORTED', 'the daemon was closed while it was starting');
    logs.setLevels(settings.config().core.log.level, settings.config().core.log.levels);
    for (const db of store.status()) {
      if (db.recovered_from_corruption) {
        status.notice(
          'error',
          `store.${db.name}`,
          `${db.name} database was corrupt and was replaced by an empty one; the damaged file is kept at ${db.recovered_from_corruption.movedTo}`,
        );
      }
    }
    const socket = socketPath();
    status.running(`CLI at ${socket}`);
    supervisor.ready();
    notifier.ready(status.text());
    log.info({ socket, notify: notifier.backend }, `HomeAgent ready; CLI socket: ${socket}`);
  })();
  // Whoever holds the handle decides what a failed start means; it is never an unhandled rejection.
  ready.catch(() => undefined);

  let closing: Promise<StopResult> | undefined;
  const stopTimeoutMs = () => settings.config().core.daemon.stop_timeout_ms;
  return {
    paths,
    log,
    control,
    ready,
    socketPath,
    stopTimeoutMs,
    close(reason = 'close') {
      closing ??= (async () => {
        startup.abort();
        await ready.catch(() => undefined);
        status.stopping();
        notifier.stopping(`Stopping (${reason})`);
        const result = await runner.stopAll(stopTimeoutMs());
        lock.release();
        if (!result.clean) log.error({ timed_out: result.timedOut, failed: result.failed }, 'stopped with problems');
        else log.info('stopped cleanly');
        return result;
      })();
      return closing;
    },
  };
}
