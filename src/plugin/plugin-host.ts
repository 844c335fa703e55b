/**
 * The plugin host. This first version loads the built-in plugins (one folder each with a
 * plugin.json manifest and a compiled entry) and runs each through its lifecycle with a timeout.
 * A plugin that fails to load or start is marked failed with its reason and everything else keeps
 * running. The plugin-system work adds external, Lua and SKILL.md plugins, enable/disable, hot
 * reload and quarantine on top of {@link PluginHost.load} and {@link PluginHost.unload}.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StageRegistry } from '../agent/stage-registry.js';
import type { ToolRegistry } from '../agent/tool-registry.js';
import type { SettingsRegistry } from '../config/settings-registry.js';
import type { EventBus } from '../events/event-bus.js';
import type { InputScheduler } from '../io/input-scheduler.js';
import type { IoManager } from '../io/io-manager.js';
import type { InputEvent } from '../io/types.js';
import type { Logger, LogManager } from '../log/logger.js';
import type { ControlApi } from '../sdk/control.js';
import { isPluginModule, type PluginContext, type PluginInstance } from '../sdk/plugin.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service, ServiceState } from '../shared/service.js';
import { VERSION } from '../shared/version.js';
import { type Manifest, readManifest } from './manifest.js';

export interface PluginStatus {
  name: string;
  version: string;
  description: string;
  origin: 'builtin';
  state: ServiceState | 'disabled';
  error?: string;
}

interface LoadedPlugin {
  manifest: Manifest;
  dir: string;
  state: PluginStatus['state'];
  error?: string;
  instance?: PluginInstance;
}

export interface PluginHostOptions {
  /** Folder holding one sub-folder per built-in plugin (dist/plugins). */
  builtinDir: string;
  settings: SettingsRegistry;
  events: EventBus;
  logs: LogManager;
  control: ControlApi;
  pluginDataDir: string;
  runtimeDir: string;
  io: IoManager;
  scheduler: InputScheduler;
  tools: ToolRegistry;
  stages: StageRegistry;
  newId: () => string;
  now: () => number;
}

export class PluginHost implements Service {
  readonly name = 'plugins';
  readonly #options: PluginHostOptions;
  readonly #log: Logger;
  readonly #plugins = new Map<string, LoadedPlugin>();

  constructor(options: PluginHostOptions) {
    this.#options = options;
    this.#log = options.logs.child('plugins');
  }

  async start(signal: AbortSignal): Promise<void> {
    for (const dir of this.#discover()) {
      if (signal.aborted) break;
      await this.load(dir, signal);
    }
  }

  async stop(): Promise<void> {
    for (const name of [...this.#plugins.keys()].reverse()) await this.unload(name);
  }

  list(): PluginStatus[] {
    return [...this.#plugins.values()].map((p) => ({
      name: p.manifest.name,
      version: p.manifest.version,
      description: p.manifest.description,
      origin: 'builtin',
      state: p.state,
      ...(p.error ? { error: p.error } : {}),
    }));
  }

  /** Loads and starts the plugin in `dir`. Never throws: failures are recorded on the plugin. */
  async load(dir: string, signal: AbortSignal): Promise<void> {
    let manifest: Manifest;
    try {
      manifest = readManifest(join(dir, 'plugin.json'));
    } catch (error) {
      this.#log.error({ dir, err: error }, 'plugin manifest rejected');
      return;
    }
    const plugin: LoadedPlugin = { manifest, dir, state: 'created' };
    this.#plugins.set(manifest.name, plugin);
    if (!this.#enabled(manifest.name)) {
      plugin.state = 'disabled';
      this.#log.info({ plugin: manifest.name }, 'plugin disabled by configuration');
      return;
    }
    this.#setState(plugin, 'starting');
    try {
      if (manifest.min_version && compareVersions(VERSION, manifest.min_version) < 0) {
        throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `needs HomeAgent ${manifest.min_version} or newer (this is ${VERSION})`);
      }
      const module = (await import(pathToFileURL(join(dir, manifest.entry)).href)) as { default?: unknown };
      if (!isPluginModule(module.default)) {
        throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `${manifest.entry} does not default-export definePlugin(...)`);
      }
      plugin.instance = module.default.create(this.#context(manifest.name));
      await withTimeout(plugin.instance.start(signal), this.#timeoutMs(), `start of plugin ${manifest.name}`);
      this.#setState(plugin, 'running');
    } catch (error) {
      this.#log.error({ plugin: manifest.name, err: error }, 'plugin failed to start');
      this.#setState(plugin, 'failed', describeError(error));
      await this.#release(plugin);
    }
  }

  /** Stops the plugin (if running) and removes everything it registered. */
  async unload(name: string): Promise<void> {
    const plugin = this.#plugins.get(name);
    if (!plugin) return;
    if (plugin.state === 'running' || plugin.state === 'starting') {
      this.#setState(plugin, 'stopping');
      const ok = await this.#release(plugin);
      this.#setState(plugin, ok ? 'stopped' : 'failed', ok ? undefined : 'did not stop cleanly');
    }
    this.#plugins.delete(name);
  }

  async #release(plugin: LoadedPlugin): Promise<boolean> {
    let ok = true;
    if (plugin.instance) {
      try {
        await withTimeout(plugin.instance.stop(), this.#timeoutMs(), `stop of plugin ${plugin.manifest.name}`);
      } catch (error) {
        ok = false;
        this.#log.error({ plugin: plugin.manifest.name, err: error }, 'plugin failed to stop cleanly');
      }
      delete plugin.instance;
    }
    const owner = `plugin:${plugin.manifest.name}`;
    this.#options.events.removeOwner(owner);
    this.#options.tools.removeOwner(owner);
    this.#options.stages.removeOwner(owner);
    await this.#options.io.removeOwner(owner);
    return ok;
  }

  #discover(): string[] {
    const root = this.#options.builtinDir;
    if (!existsSync(root)) {
      this.#log.warn({ dir: root }, 'built-in plugin folder is missing');
      return [];
    }
    return readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'plugin.json')))
      .map((d) => join(root, d.name))
      .sort();
  }

  #enabled(name: string): boolean {
    const section = (this.#options.settings.config().plugin as Record<string, { enabled?: unknown } | undefined>)[name];
    return section?.enabled !== false;
  }

  #timeoutMs(): number {
    return this.#options.settings.config().core.daemon.plugin_timeout_ms;
  }

  #context(name: string): PluginContext {
    const { settings, events, logs, control } = this.#options;
    const owner = `plugin:${name}`;
    const prefix = `plugin.${name}.`;
    const data = join(this.#options.pluginDataDir, name);
    mkdirSync(data, { recursive: true, mode: 0o700 });
    return {
      name,
      log: logs.child(`plugin.${name}`),
      settings: {
        get: <T>(key: string) => {
          const section = (settings.config().plugin as Record<string, Record<string, unknown> | undefined>)[name];
          return (section?.[key] ?? settings.get(prefix + key).value) as T;
        },
        onChange: (listener) =>
          events.on(owner, 'settings.changed', ({ key }) => {
            if (key.startsWith(prefix)) listener(key.slice(prefix.length));
          }),
      },
      events: { on: (event, listener) => events.on(owner, event, listener) },
      control,
      paths: { data, runtime: this.#options.runtimeDir },
      io: {
        registerChannel: (channel) => this.#options.io.registerChannel({ ...channel, owner }),
        submit: (input) => {
          const event: InputEvent = {
            id: this.#options.newId(),
            source: input.source ?? name,
            channel: input.channel,
            type: input.type ?? 'text',
            payload: input.payload,
            meta: input.meta ?? {},
            received_at: this.#options.now(),
            level: input.level ?? 0,
          };
          // Every plugin loaded today is built in; external plugins will submit as 'external' (L4 clamped).
          return this.#options.scheduler.submit(event, { origin: 'builtin' });
        },
      },
      tools: { register: (definition) => this.#options.tools.register({ ...definition, owner }) },
      stages: { register: (stage, handler, scope) => this.#options.stages.register(owner, stage, handler, scope) },
    };
  }

  #setState(plugin: LoadedPlugin, state: ServiceState, error?: string): void {
    plugin.state = state;
    if (error === undefined) delete plugin.error;
    else plugin.error = error;
    this.#options.events.emit('service.state', {
      name: plugin.manifest.name,
      kind: 'plugin',
      state,
      ...(error === undefined ? {} : { error }),
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HomeAgentError('HA_ERR_PLUGIN_START', `${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[-+]/)[0]?.split('.').map(Number) ?? [];
  const pb = b.split(/[-+]/)[0]?.split('.').map(Number) ?? [];
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
