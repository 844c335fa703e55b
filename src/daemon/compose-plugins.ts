/**
 * The plugin host, composed last of the areas because each plugin's context reaches into all of
 * them: the shipped plugins, device drivers and skills, the installed ones under <data>, their
 * runtimes (in-process, child process, Lua, SKILL.md) and control methods. Binding it completes
 * the change tracker's late link to the plugins it reloads.
 */
import { join } from 'node:path';
import { BoundedTurnRunner } from '../agent/bounded-turn.js';
import type { LoadedConfig } from '../config/loader.js';
import type { EntityRegistry } from '../home/entity-registry.js';
import type { InputScheduler } from '../io/input-scheduler.js';
import type { KnowledgeService } from '../knowledge/knowledge-service.js';
import type { MemoryService } from '../memory/memory-service.js';
import { HttpRouteRegistry } from '../plugin/http-routes.js';
import { PluginControlMethods } from '../plugin/plugin-generation.js';
import { PluginHost } from '../plugin/plugin-host.js';
import { registerPluginMethods } from '../plugin/plugin-methods.js';
import { configSectionsOf } from '../plugin/plugin-settings.js';
import type { SkillLibrary } from '../plugin/skills/skill-library.js';
import { createSkillRuntime, skillManifest } from '../plugin/skills/skill-plugin.js';
import { PACKAGE_ROOT } from '../shared/version.js';
import type { MediaStore } from '../store/media-store.js';
import type { ChangeTracker } from '../tracker/change-tracker.js';
import type { TrackedPluginHost } from '../tracker/change-types.js';
import type { CoreParts } from './compose-core.js';
import type { LlmParts } from './compose-llm.js';
import type { ToolParts } from './compose-tools.js';
import type { LateBinding } from './late-binding.js';

export interface PluginDeps {
  /** The folder holding the built plugins/ and devices/ (dist/ in production). */
  packageDir: string;
  loaded: LoadedConfig;
  toolbox: ToolParts;
  llm: LlmParts;
  memory: MemoryService;
  knowledge: KnowledgeService;
  media: MediaStore;
  entities: EntityRegistry;
  scheduler: InputScheduler;
  skills: SkillLibrary;
  tracker: ChangeTracker;
  trackerPlugins: LateBinding<TrackedPluginHost>;
}

export function composePlugins(core: CoreParts, deps: PluginDeps): PluginHost {
  const { paths, store, settings, events, logs, control, clock } = core;
  const { io, tools, stages } = deps.toolbox;
  const { tracker, packageDir } = deps;
  const configSections = configSectionsOf(deps.loaded);
  // Turns beside the conversation (the subagents plugin) share the one registry and executor, so
  // the same hooks, trust policies and owner approval hold for them.
  const turns = new BoundedTurnRunner({
    model: deps.llm.providers,
    registry: tools,
    executor: deps.toolbox.executor,
    limits: () => settings.config().core.llm,
    log: logs.child('bounded-turn'),
    now: () => clock.now(),
  });
  const plugins = new PluginHost({
    roots: [
      { dir: join(packageDir, 'plugins'), origin: 'shipped', skills: false },
      // Device drivers (gpio, i2c, ...) load like built-in plugins (docs/decisions/0004).
      { dir: join(packageDir, 'devices'), origin: 'shipped', skills: false },
      { dir: join(PACKAGE_ROOT, 'skills'), origin: 'shipped', skills: true },
      { dir: paths.installedPluginsDir, origin: 'installed', skills: true },
      { dir: paths.installedSkillsDir, origin: 'installed', skills: true },
    ],
    installDir: paths.installedPluginsDir,
    pluginDataDir: paths.pluginDataDir,
    dataDir: paths.dataDir,
    runtimeDir: paths.runtimeDir,
    database: () => store.database('state'),
    kernel: {
      settings,
      events,
      logs,
      control,
      io,
      scheduler: deps.scheduler,
      tools,
      stages,
      routes: new HttpRouteRegistry(),
      llm: deps.llm.providers,
      agentTurns: { runTurn: (request) => turns.run(request), offeredTools: (patterns) => turns.offered(patterns) },
      memory: deps.memory.pluginMemory(),
      knowledge: deps.knowledge,
      media: deps.media,
      entities: deps.entities,
      controlMethods: new PluginControlMethods(control),
      // Built-in plugins' own databases are listed with the kernel's (status, backup).
      databases: store,
      newId: core.newId,
      now: () => clock.now(),
    },
    // The process and Lua runtimes load with the first plugin of their kind (most homes run none).
    runtimes: {
      process: async (context) => (await import('../plugin/process/process-plugin.js')).createProcessPlugin(context),
      lua: async (context) => (await import('../plugin/lua/lua-plugin.js')).createLuaPlugin(context),
      skill: createSkillRuntime(deps.skills),
    },
    skillManifest,
    limits: () => settings.config().core.plugins,
    timeoutMs: () => settings.config().core.daemon.plugin_timeout_ms,
    configuredEnabled: (name) => {
      const section = (settings.config().plugin as Record<string, { enabled?: unknown } | undefined>)[name];
      return typeof section?.enabled === 'boolean' ? section.enabled : undefined;
    },
    // Sections of plugins the schema does not know: checked against their manifests (exit 78 at start).
    ...(configSections !== undefined && { configSections }),
  });
  deps.trackerPlugins.bind(plugins);
  registerPluginMethods(control, plugins, tracker.enabled ? (origin, run, options) => tracker.track(origin, run, options) : undefined);
  return plugins;
}
