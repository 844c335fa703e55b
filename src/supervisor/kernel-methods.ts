/**
 * The kernel's control methods: status, health, config.*, backup, version and logs.recent.
 * Transports (the CLI socket, the web API) call them through the control registry.
 */
import { isAbsolute, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { HealthAnswer } from '../api/health.js';
import type { StatusReport } from '../api/status.js';
import type { SettingsRegistry } from '../config/settings-registry.js';
import type { SchedulerStats } from '../io/input-scheduler.js';
import type { InputEvent, Receipt } from '../io/types.js';
import type { SourceStatus } from '../llm/provider-manager.js';
import type { LogManager } from '../log/logger.js';
import type { RecentLinesFilter, RecentLog } from '../log/recent-lines.js';
import type { ControlRegistry } from '../plugin/control-registry.js';
import type { PluginHost } from '../plugin/plugin-host.js';
import type { Caller } from '../sdk/control.js';
import type { Clock } from '../shared/clock.js';
import { HomeAgentError } from '../shared/errors.js';
import type { InputSender } from '../shared/trust.js';
import { VERSION } from '../shared/version.js';
import { stamp } from '../store/database.js';
import type { Store } from '../store/store.js';
import type { DaemonStatus } from './daemon-status.js';
import { memoryReport } from './memory-report.js';
import type { ServiceRunner } from './service-runner.js';

export type { StatusReport };

export interface KernelMethodDeps {
  control: ControlRegistry;
  settings: SettingsRegistry;
  store: Store;
  runner: ServiceRunner;
  plugins: PluginHost;
  status: DaemonStatus;
  /** The supervisor's last health round, or a new one when that is older than one interval. */
  health: () => Promise<HealthAnswer>;
  logs: LogManager;
  clock: Clock;
  paths: { dataDir: string; runtimeDir: string; backupDir: () => string };
  llm: { sources(): SourceStatus[] };
  scheduler: { submit(input: InputEvent, options: { origin: 'builtin' | 'external' }): Promise<Receipt>; stats(): SchedulerStats };
  newId: () => string;
}

const Key = Type.String({ minLength: 1, maxLength: 256 });

/** Lines `logs.recent` answers when the caller does not say. */
export const DEFAULT_RECENT_LOG_LINES = 200;
/** The most lines one `logs.recent` call answers. */
export const MAX_RECENT_LOG_LINES = 2000;

export function registerKernelMethods(deps: KernelMethodDeps): void {
  const { control, settings, store, clock } = deps;
  registerLogMethods(control, deps.logs);

  control.register({
    name: 'version',
    description: 'HomeAgent, Node.js and SQLite versions.',
    params: Type.Object({}),
    handler: () => ({ version: VERSION, node: process.versions.node, sqlite: store.sqliteVersion() }),
  });

  control.register({
    name: 'status',
    description: 'What the daemon is doing: version, uptime, services, plugins, databases, notices.',
    params: Type.Object({}),
    handler: (): StatusReport => ({
      name: settings.config().core.name,
      version: VERSION,
      pid: process.pid,
      state: deps.status.state,
      status: deps.status.text(),
      started_at: new Date(deps.status.startedAt).toISOString(),
      uptime_s: Math.round((clock.now() - deps.status.startedAt) / 1000),
      data_dir: deps.paths.dataDir,
      runtime_dir: deps.paths.runtimeDir,
      services: deps.runner.status(),
      plugins: deps.plugins.list(),
      databases: store.status(),
      notices: deps.status.notices(),
      restart_pending: settings.restartPending(),
      memory: { rss_bytes: process.memoryUsage().rss, heap_used_bytes: process.memoryUsage().heapUsed },
      llm_sources: deps.llm.sources(),
      inputs: deps.scheduler.stats(),
    }),
  });

  control.register({
    name: 'daemon.memory',
    description:
      "Where the daemon's memory goes: RSS (own and file-backed pages), V8 heap by space, external and array buffers, threads, and each child process's RSS.",
    params: Type.Object({}, { additionalProperties: false }),
    // Child command lines may hold what the owner typed (a cmd_run argument).
    owner_only: true,
    handler: () => memoryReport(),
  });

  control.register({
    name: 'health',
    description:
      'Each component (event loop, state database, memory, language models, devices, change tracker, every plugin) as ok, degraded or failed, and the plugin change on trial.',
    params: Type.Object({}),
    handler: (): Promise<HealthAnswer> => deps.health(),
  });

  control.register({
    name: 'config.get',
    description: 'One setting: its value (secrets masked), source, type, bounds and description.',
    params: Type.Object({ key: Key }),
    handler: ({ key }) => settings.get(key),
  });

  control.register({
    name: 'config.list',
    description: 'Every setting whose key starts with prefix.',
    params: Type.Object({ prefix: Type.Optional(Type.String({ maxLength: 256 })) }),
    handler: ({ prefix }) => settings.list(prefix ?? ''),
  });

  control.register({
    name: 'config.set',
    description: 'Changes a setting at run time; text values are converted to the setting type.',
    params: Type.Object({ key: Key, value: Type.Unknown() }),
    handler: ({ key, value }, caller) => {
      if (value === undefined) throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', 'config.set: params.value is required');
      return settings.set(key, value, caller.actor);
    },
  });

  control.register({
    name: 'config.reset',
    description: 'Removes the run-time change of a setting; the file, environment or default value applies again.',
    params: Type.Object({ key: Key }),
    handler: ({ key }, caller) => settings.reset(key, caller.actor),
  });

  control.register({
    name: 'config.history',
    description: 'Recent setting changes, newest first (secret values are never recorded).',
    params: Type.Object({
      key: Type.Optional(Key),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    }),
    handler: ({ key, limit }) => settings.history(key, limit ?? 50),
  });

  if (settings.config().core.supervisor.debug_methods) {
    control.register({
      name: 'debug.block_event_loop',
      description: 'Blocks the event loop for ms milliseconds (tests that the watchdog stops being fed).',
      params: Type.Object({ ms: Type.Integer({ minimum: 1, maximum: 600000 }) }),
      handler: ({ ms }, caller) => {
        deps.logs.audit({ actor: caller.actor, action: 'debug.block_event_loop', ms });
        // Deferred so the caller gets its answer before the loop stops.
        setImmediate(() => {
          const until = performance.now() + ms;
          while (performance.now() < until) {
            // busy wait on purpose
          }
        });
        return { blocking_ms: ms };
      },
    });
  }

  control.register({
    name: 'agent.chat',
    description: 'Sends text to the agent as the caller (cli) and waits for its one receipt.',
    params: Type.Object({
      text: Type.String({ minLength: 1, maxLength: 100000 }),
      channel: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' })),
    }),
    handler: ({ text, channel }, caller) =>
      deps.scheduler.submit(
        {
          id: deps.newId(),
          source: caller.actor,
          channel: channel ?? caller.actor,
          sender: callerSender(caller),
          type: 'text',
          payload: text,
          meta: {},
          received_at: clock.now(),
          level: 0,
        },
        { origin: 'builtin' },
      ),
  });

  control.register({
    name: 'backup',
    description: "Online backup of a database (default: state; a plugin's own as <plugin>.<name>) through the SQLite backup API.",
    params: Type.Object({
      path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      // A kernel database (state) or a built-in plugin's (seq.sequences); the known list decides.
      database: Type.Optional(Type.String({ pattern: '^[a-z0-9_-][a-z0-9_.-]{0,99}$' })),
    }),
    handler: async ({ path, database }, caller) => {
      const name = database ?? 'state';
      const known = store.status().map((d) => d.name);
      if (!known.includes(name)) {
        throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `backup: no database named ${name}; known: ${known.join(', ')}`);
      }
      if (path !== undefined && !isAbsolute(path)) {
        throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `backup: path must be absolute, got ${path}`);
      }
      const dest = path ?? join(deps.paths.backupDir(), `${name}-${stamp(clock)}.db`);
      const started = performance.now();
      const result = await store.database(name).backup(dest);
      deps.logs.audit({ actor: caller.actor, action: 'store.backup', database: name, file: result.file, bytes: result.bytes });
      return { database: name, ...result, duration_ms: Math.round(performance.now() - started) };
    },
  });
}

/** A control caller as the sender of what it says to the agent: the owner only when its transport proved it. */
export function callerSender(caller: Caller): InputSender {
  return caller.owner === true
    ? { trust: 'owner', id: caller.actor, proof: caller.proof ?? `${caller.actor}, an owner connection` }
    : { trust: 'untrusted', id: caller.actor, proof: caller.proof ?? `${caller.actor}, not an owner connection` };
}

/** `logs.recent`: the newest log lines kept in memory (core.log.recent_lines), filtered. */
export function registerLogMethods(control: Pick<ControlRegistry, 'register'>, logs: Pick<LogManager, 'recent'>): void {
  control.register({
    name: 'logs.recent',
    description: `The newest log lines kept in memory, newest last, as parsed JSON records: at level or above, of a subsystem (prefix), containing q, or only audit records; limit 1–${MAX_RECENT_LOG_LINES}, default ${DEFAULT_RECENT_LOG_LINES}. dropped counts the older lines no longer kept (the journal has them).`,
    params: Type.Object({
      level: Type.Optional(
        Type.Union([
          Type.Literal('trace'),
          Type.Literal('debug'),
          Type.Literal('info'),
          Type.Literal('warn'),
          Type.Literal('error'),
          Type.Literal('fatal'),
        ]),
      ),
      subsystem: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      q: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
      audit: Type.Optional(Type.Boolean()),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_RECENT_LOG_LINES })),
    }),
    handler: ({ level, subsystem, q, audit, limit }): RecentLog => {
      const filter: RecentLinesFilter = { limit: limit ?? DEFAULT_RECENT_LOG_LINES };
      if (level !== undefined) filter.level = level;
      if (subsystem !== undefined) filter.subsystem = subsystem;
      if (q !== undefined) filter.q = q;
      if (audit !== undefined) filter.audit = audit;
      return logs.recent(filter);
    },
  });
}
