/**
 * One running instance of a plugin ("generation") and the context it was given. Every
 * registration the instance makes (tools, stage hooks, output channels, event subscriptions, HTTP
 * routes) is recorded here. While the instance starts, registrations are only staged; `commit()`
 * then swaps the whole set for the owner's previous one in a single synchronous step, which is
 * what makes a hot reload atomic: a call made before the swap reaches the old instance (kept
 * running until its calls drain), a call made after it reaches the new one.
 *
 * The context enforces the plugin's trust level. Built-in plugins get the whole SDK; external ones
 * get read-only memory and knowledge, subscribe-only events, no control API (neither calling nor
 * registering methods), no HTTP routes, interrupts clamped to L3, settings only in their namespace
 * and only the tool names their manifest allows. The checks run here, in the daemon, never in the
 * plugin's own process.
 */
import { mkdirSync } from 'node:fs';
import { isStage, type StageRegistry } from '../agent/stage-registry.js';
import type { ToolRegistry } from '../agent/tool-registry.js';
import type { SettingsRegistry } from '../config/settings-registry.js';
import type { EventBus, EventMap, EventName } from '../events/event-bus.js';
import type { EntityRegistry } from '../home/entity-registry.js';
import type { InputScheduler } from '../io/input-scheduler.js';
import type { IoManager } from '../io/io-manager.js';
import { laterTarget } from '../io/later-delivery.js';
import type { InputEvent, Level, OutputChannel } from '../io/types.js';
import type { KnowledgeBase } from '../knowledge/types.js';
import type { LanguageModel } from '../llm/spec/index.js';
import type { Logger, LogManager } from '../log/logger.js';
import type { ControlApi, ControlMethod, MethodInfo } from '../sdk/control.js';
import { openPluginDatabase, type PluginDatabase, type PluginDatabaseRequest } from '../sdk/database.js';
import type {
  PluginAgent,
  PluginContext,
  PluginEntities,
  PluginInput,
  PluginInstance,
  PluginKnowledge,
  PluginMemory,
  PluginTrust,
  ToolFacts,
} from '../sdk/plugin.js';
import { HomeAgentError } from '../shared/errors.js';
import { matchesToolName, type ToolContext, type ToolDefinition, ToolError } from '../shared/tool.js';
import { type InputSender, isTrust, UNKNOWN_SENDER } from '../shared/trust.js';
import type { ManagedDatabase } from '../store/database.js';
import { PLUGIN_DATABASE_NAME, pluginDatabaseFile, pluginDatabaseName } from '../store/plugin-database-name.js';
import type { HttpRouteRegistry, RegisteredRoute } from './http-routes.js';
import { allowedToolPatterns, type Manifest } from './manifest.js';
import { type HostMedia, pluginMedia } from './plugin-media.js';

/** The kernel parts a plugin context reaches. */
export interface KernelServices {
  settings: SettingsRegistry;
  events: EventBus;
  logs: LogManager;
  control: ControlApi;
  io: IoManager;
  scheduler: InputScheduler;
  tools: ToolRegistry;
  stages: StageRegistry;
  routes: HttpRouteRegistry;
  /** The provider manager; absent in tests that do not need it. */
  llm?: LanguageModel;
  /** Bounded agent turns for built-in plugins (`ctx.agent`); absent: their contexts have no `agent`. */
  agentTurns?: PluginAgent;
  memory?: PluginMemory;
  /** The knowledge library; absent when this daemon runs without one (plugins then see it as unavailable). */
  knowledge?: HostKnowledge;
  /** The media store (<data>/media); absent: `ctx.media` answers HA_ERR_UNAVAILABLE. */
  media?: HostMedia;
  /** The home's entities; absent: `ctx.entities` answers HA_ERR_UNAVAILABLE. */
  entities?: EntityRegistry;
  /** Where built-in plugins' own control methods go; absent: `ctx.control.register` answers HA_ERR_UNAVAILABLE. */
  controlMethods?: PluginControlMethods;
  /** The kernel's store, which lists plugin databases with its own (status, backup); absent: they open unlisted. */
  databases?: { attach(db: ManagedDatabase): () => void };
  newId: () => string;
  now: () => number;
}

/** The knowledge library as the host gets it; `available` (when present) says whether it is open now. */
export type HostKnowledge = KnowledgeBase & { available?(): boolean };

/** What {@link PluginControlMethods} needs of the control registry. */
export interface ControlMethodTable {
  register(method: ControlMethod): () => void;
  methods(): MethodInfo[];
}

/**
 * Control methods registered by plugins, kept per owner so that a plugin's set can be swapped in
 * one step on reload and removed when it stops, like its tools and routes. One instance serves
 * every plugin of a daemon (it outlives generations).
 */
export class PluginControlMethods {
  readonly #table: ControlMethodTable;
  readonly #owned = new Map<string, Map<string, () => void>>();

  constructor(table: ControlMethodTable) {
    this.#table = table;
  }

  /** Throws (HA_ERR_PLUGIN_LOAD) when one of `methods` is taken by someone other than `owner`. */
  check(owner: string, methods: readonly ControlMethod[]): void {
    const mine = this.#owned.get(owner);
    const taken = new Set(this.#table.methods().map((m) => m.name));
    for (const method of methods) {
      if (taken.has(method.name) && !mine?.has(method.name)) {
        throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `control method ${method.name} is already registered by another part of HomeAgent`);
      }
    }
  }

  /** Makes `methods` the owner's only ones; nothing changes when one of them is taken. */
  replaceOwner(owner: string, methods: readonly ControlMethod[]): void {
    this.check(owner, methods);
    this.removeOwner(owner);
    if (methods.length === 0) return;
    const undos = new Map<string, () => void>();
    this.#owned.set(owner, undos);
    for (const method of methods) undos.set(method.name, this.#table.register(method));
  }

  /** Adds one method for an owner that is already live. */
  add(owner: string, method: ControlMethod): () => void {
    this.check(owner, [method]);
    const undos = this.#owned.get(owner) ?? new Map<string, () => void>();
    this.#owned.set(owner, undos);
    undos.get(method.name)?.();
    const undo = this.#table.register(method);
    undos.set(method.name, undo);
    return () => {
      if (undos.get(method.name) !== undo) return;
      undo();
      undos.delete(method.name);
    };
  }

  removeOwner(owner: string): void {
    const undos = this.#owned.get(owner);
    if (!undos) return;
    this.#owned.delete(owner);
    for (const undo of undos.values()) undo();
    undos.clear();
  }

  /** Names of the owner's live methods, sorted. */
  owned(owner: string): string[] {
    return [...(this.#owned.get(owner)?.keys() ?? [])].sort();
  }
}

interface Subscription {
  event: EventName;
  listener: (payload: never) => void | Promise<void>;
}

interface StagedStage {
  stage: Parameters<StageRegistry['register']>[1];
  handler: Parameters<StageRegistry['register']>[2];
  scope: Parameters<StageRegistry['register']>[3];
}

export interface GenerationOptions {
  manifest: Manifest;
  trust: PluginTrust;
  /** The plugin's folder. */
  root: string;
  dataDir: string;
  runtimeDir: string;
  kernel: KernelServices;
}

/** Ids a plugin may give its inputs. */
const INPUT_ID = /^[A-Za-z0-9_-]{8,64}$/;

export class PluginGeneration {
  readonly manifest: Manifest;
  readonly trust: PluginTrust;
  readonly owner: string;
  readonly context: PluginContext;
  instance: PluginInstance | undefined;
  readonly #kernel: KernelServices;
  readonly #log: Logger;
  /** Registrations of this generation (live once committed). */
  readonly #tools = new Map<string, ToolDefinition>();
  readonly #stages: StagedStage[] = [];
  readonly #channels = new Map<string, OutputChannel>();
  readonly #subscriptions: Subscription[] = [];
  readonly #routes: RegisteredRoute[] = [];
  readonly #controlMethods = new Map<string, ControlMethod>();
  /** Undo functions of registrations made while live. */
  readonly #live = new Set<() => void>();
  /** Entity ids this generation registered (see commit()). */
  readonly #entityIds = new Set<string>();
  /** Takes this generation's plugin databases off the store's list (the plugin stopped without closing them). */
  readonly #detachDatabases = new Set<() => void>();
  #phase: 'staging' | 'live' | 'retired' = 'staging';
  #inflight = 0;
  #drained: Array<() => void> = [];

  constructor(options: GenerationOptions) {
    this.manifest = options.manifest;
    this.trust = options.trust;
    this.owner = `plugin:${options.manifest.name}`;
    this.#kernel = options.kernel;
    this.#log = options.kernel.logs.child(`plugin.${options.manifest.name}`);
    const data = options.dataDir;
    mkdirSync(data, { recursive: true, mode: 0o700 });
    this.context = this.#buildContext(options.root, data, options.runtimeDir);
  }

  get live(): boolean {
    return this.#phase === 'live';
  }

  get inflight(): number {
    return this.#inflight;
  }

  toolNames(): string[] {
    return [...this.#tools.keys()].sort();
  }

  controlMethodNames(): string[] {
    return [...this.#controlMethods.keys()].sort();
  }

  /**
   * Makes this generation's registrations the owner's only ones, in one synchronous step.
   * Throws (and changes nothing) when a staged tool or control method clashes with another owner's.
   */
  commit(): void {
    const { tools, stages, events, io, routes, controlMethods } = this.#kernel;
    const methods = [...this.#controlMethods.values()];
    // Checked before anything is swapped, so a clash leaves the old generation's set in place.
    controlMethods?.check(this.owner, methods);
    tools.replaceOwner(this.owner, [...this.#tools.values()]);
    routes.replaceOwner(this.owner, this.#routes);
    stages.removeOwner(this.owner);
    for (const s of this.#stages) stages.register(this.owner, s.stage, s.handler, s.scope);
    events.removeOwner(this.owner);
    for (const s of this.#subscriptions) events.on(this.owner, s.event, s.listener as never);
    io.replaceOwner(this.owner, { channels: [...this.#channels.values()] });
    controlMethods?.replaceOwner(this.owner, methods);
    // Entities go live when registered (a device reports state while it starts); what an older
    // generation registered and this one did not is removed now.
    this.#kernel.entities?.removeOwner(this.owner, this.#entityIds);
    this.#phase = 'live';
  }

  /**
   * Stops accepting registrations; live ones stay until the owner's are replaced or removed. Its
   * databases leave the store's list now (a failed start, a stop, or a reload whose new generation
   * has listed its own), whether or not the plugin gets to close them.
   */
  retire(): void {
    this.#phase = 'retired';
    this.#detachAllDatabases();
  }

  /** Removes everything this owner registered (the plugin stopped or failed). */
  async removeAll(): Promise<void> {
    const { tools, stages, events, io, routes, controlMethods } = this.#kernel;
    tools.removeOwner(this.owner);
    stages.removeOwner(this.owner);
    events.removeOwner(this.owner);
    routes.removeOwner(this.owner);
    controlMethods?.removeOwner(this.owner);
    this.#kernel.entities?.removeOwner(this.owner);
    io.removeOwner(this.owner);
    this.#detachAllDatabases();
    this.#live.clear();
  }

  #detachAllDatabases(): void {
    for (const detach of this.#detachDatabases) detach();
    this.#detachDatabases.clear();
  }

  /** Resolves when no tool call of this generation is running, or after `ms`. */
  drain(ms: number): Promise<boolean> {
    if (this.#inflight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.#drained.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  #register<T>(kind: string, stage: () => T, live: () => () => void, unstage: () => void): () => void {
    if (this.#phase === 'retired') {
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_STATE',
        `plugin ${this.manifest.name} is being replaced; its old instance cannot register ${kind}`,
      );
    }
    stage();
    if (this.#phase === 'staging') return unstage;
    const undo = live();
    this.#live.add(undo);
    return () => {
      unstage();
      undo();
      this.#live.delete(undo);
    };
  }

  #permission(what: string): never {
    throw new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `plugin ${this.manifest.name} (${this.trust}) may not ${what}`);
  }

  #wrapTool(definition: ToolDefinition): ToolDefinition {
    const execute = definition.execute;
    return { ...definition, execute: (args, context) => this.#counted(() => execute(args, context)) };
  }

  /** Counts a call into this generation so a reload can wait for it (drain). */
  async #counted<T>(call: () => T | Promise<T>): Promise<T> {
    this.#inflight++;
    try {
      return await call();
    } finally {
      this.#inflight--;
      if (this.#inflight === 0) for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  #registerControlMethod(method: ControlMethod): () => void {
    const name = this.manifest.name;
    if (this.trust === 'external') this.#permission('register control methods');
    const controlMethods = this.#kernel.controlMethods;
    if (!controlMethods) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'this daemon does not take control methods from plugins');
    const prefix = `${name.replace(/[.-]/g, '_')}.`;
    const methodName: unknown = method?.name;
    if (typeof methodName !== 'string' || !methodName.startsWith(prefix) || !CONTROL_METHOD_NAME.test(methodName)) {
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_PERMISSION',
        `plugin ${name} may register control methods named ${prefix}<name> (lower-case letters, digits, _), not ${JSON.stringify(methodName)}`,
      );
    }
    if (typeof method.handler !== 'function')
      throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `control method ${methodName} needs a handler`);
    const handler = method.handler;
    const full: ControlMethod = { ...method, handler: (params, caller) => this.#counted(() => handler(params, caller)) };
    return this.#register(
      `control method ${methodName}`,
      () => {
        if (this.#controlMethods.has(methodName)) {
          throw new HomeAgentError('HA_ERR_PLUGIN_LOAD', `plugin ${name} already registered control method ${methodName}`);
        }
        controlMethods.check(this.owner, [full]);
        this.#controlMethods.set(methodName, full);
      },
      () => controlMethods.add(this.owner, full),
      () => {
        if (this.#controlMethods.get(methodName) === full) this.#controlMethods.delete(methodName);
      },
    );
  }

  /** `ctx.database.open`: `<plugin data>/<name>.db`, listed with the kernel's databases as `<plugin>.<name>`. */
  #openDatabase(data: string, request: PluginDatabaseRequest): PluginDatabase {
    const plugin = this.manifest.name;
    if (this.trust === 'external') this.#permission('open a database in the daemon');
    // A retired generation's listing would outlive it (retire() has taken its databases off).
    if (this.#phase === 'retired') this.#permission('open a database while it is being replaced');
    const short: unknown = request?.name;
    if (typeof short !== 'string' || !PLUGIN_DATABASE_NAME.test(short)) {
      throw new HomeAgentError(
        'HA_ERR_PLUGIN_PERMISSION',
        `plugin ${plugin} may open databases named with 1-32 lower-case letters, digits and _ (starting with a letter), not ${JSON.stringify(short)}`,
      );
    }
    const store = this.#kernel.databases;
    return openPluginDatabase({
      name: pluginDatabaseName(plugin, short),
      file: pluginDatabaseFile(data, short),
      component: plugin,
      migrations: request.migrations,
      log: this.#log,
      ...(store && {
        attach: (managed: ManagedDatabase) => {
          const detach = store.attach(managed);
          this.#detachDatabases.add(detach);
          return () => {
            detach();
            this.#detachDatabases.delete(detach);
          };
        },
      }),
    });
  }

  #buildContext(root: string, data: string, runtime: string): PluginContext {
    const kernel = this.#kernel;
    const name = this.manifest.name;
    const owner = this.owner;
    const external = this.trust === 'external';
    const prefix = `plugin.${name}.`;
    const toolPatterns = allowedToolPatterns(this.manifest);

    const inject = (input: PluginInput, level: Level) => {
      if (input === null || typeof input !== 'object') throw new HomeAgentError('HA_ERR_INPUT_INVALID', 'an input must be an object');
      let effective = level;
      if (external && level > 3) {
        this.#log.warn({ level }, 'external plugins may raise interrupts up to L3; clamped');
        effective = 3;
      }
      if (input.id !== undefined && (typeof input.id !== 'string' || !INPUT_ID.test(input.id))) {
        throw new HomeAgentError(
          'HA_ERR_INPUT_INVALID',
          `an input id must be 8-64 characters of A-Z a-z 0-9 _ -, got ${JSON.stringify(input.id)}`,
        );
      }
      const event: InputEvent = {
        id: input.id ?? kernel.newId(),
        source: input.source ?? name,
        channel: input.channel,
        sender: inputSender(input.sender, name, external),
        type: input.type ?? 'text',
        payload: input.payload,
        meta: { ...(input.meta ?? {}), plugin: name },
        received_at: kernel.now(),
        level: effective,
      };
      return kernel.scheduler.submit(event, { origin: external ? 'external' : 'builtin' });
    };

    const memory: PluginMemory = {
      recall: (query, options) => (kernel.memory ? kernel.memory.recall(query, options) : unavailable('memory')),
      commit: (triples, options) =>
        external ? this.#permission('write to memory') : kernel.memory ? kernel.memory.commit(triples, options) : unavailable('memory'),
    };
    const library = kernel.knowledge;
    /** Runs a read against the library; a synchronous throw becomes a rejection like the async calls'. */
    const read = async <T>(call: (kb: KnowledgeBase) => T | Promise<T>): Promise<T> =>
      library ? call(library) : unavailable('the knowledge library');
    const knowledge: PluginKnowledge = {
      available: () => library !== undefined && (library.available?.() ?? true),
      search: (query, options = {}) =>
        read((kb) =>
          kb.search(query, {
            ...(options.limit === undefined ? {} : { top_k: options.limit }),
            ...(options.category === undefined ? {} : { category: options.category }),
          }),
        ),
      list: (category) => read((kb) => kb.list(category)),
      tree: (options = {}) => read((kb) => kb.tree(options)),
      categories: () => read((kb) => kb.categories()),
      categoryCounts: () => read((kb) => kb.categoryCounts()),
      add: (entry, content, options = {}) =>
        external
          ? this.#permission('write to the knowledge library')
          : read(async (kb) => void (await kb.create(entry, content, { overwrite: options.overwrite === true }))),
    };

    const registry = kernel.entities;
    const entityRead = async <T>(call: (r: EntityRegistry) => T | Promise<T>): Promise<T> =>
      registry ? call(registry) : unavailable('the entity registry');
    const entities: PluginEntities = {
      register: (definition) => {
        if (external) this.#permission('register entities');
        if (!registry) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'this daemon has no entity registry');
        if (this.#phase === 'retired') this.#permission('register entities while it is being replaced');
        const handle = registry.register(owner, definition);
        this.#entityIds.add(handle.entity_id);
        return handle;
      },
      list: (filter) => entityRead((r) => r.list(filter)),
      get: (reference) => entityRead((r) => r.resolve(reference)),
      call: (reference, service, data = {}) =>
        external
          ? Promise.reject(new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `plugin ${name} (external) may not call entity services`))
          : entityRead((r) => r.call(reference, service, data, { actor: owner })),
      history: (entityId, options) => entityRead((r) => r.history(entityId, options)),
      areas: () => entityRead((r) => r.areas()),
    };

    return {
      name,
      trust: this.trust,
      log: this.#log,
      audit: (action, details = {}) => kernel.logs.audit({ ...details, actor: owner, action }),
      settings: {
        get: (key) => {
          const section = (kernel.settings.config().plugin as Record<string, Record<string, unknown> | undefined>)[name];
          return section?.[key] ?? kernel.settings.get(prefix + key).value;
        },
        values: () => structuredClone((kernel.settings.config().plugin as Record<string, Record<string, unknown> | undefined>)[name] ?? {}),
        set: (key, value) => void kernel.settings.set(prefix + key, value, owner),
        onChange: (listener) =>
          this.#subscribe('settings.changed', ({ key }) => {
            if (key.startsWith(prefix)) listener(key.slice(prefix.length));
          }),
      },
      events: {
        subscribe: (event, listener) => this.#subscribe(event, listener),
        publish: (event, payload) => (external ? this.#permission('publish events') : kernel.events.emit(event, payload)),
      },
      control: {
        call: (method, params, caller) =>
          external ? Promise.reject(permissionError(name, 'call control methods')) : kernel.control.call(method, params, caller),
        methods: () => (external ? [] : kernel.control.methods()),
        register: (method) => this.#registerControlMethod(method as unknown as ControlMethod),
      },
      paths: { data, runtime, root },
      database: { open: (request) => this.#openDatabase(data, request) },
      io: {
        registerOutputChannel: (channel) => {
          const full: OutputChannel = { ...channel, owner };
          return this.#register(
            `channel ${channel.name}`,
            () => {
              if (this.#channels.has(channel.name)) {
                throw new HomeAgentError('HA_ERR_IO_DEFINITION', `plugin ${name} already registered channel ${channel.name}`);
              }
              this.#channels.set(channel.name, full);
            },
            () => {
              kernel.io.registerChannel(full);
              return () => kernel.io.unregisterChannel(channel.name);
            },
            () => {
              if (this.#channels.get(channel.name) === full) this.#channels.delete(channel.name);
            },
          );
        },
        injectInput: (input) => inject(input, 0),
        injectInterrupt: (input, level) => inject(input, level),
        ...(external
          ? {}
          : {
              cancelInput: (inputId: string, reason: string) => kernel.scheduler.cancelRunning(inputId, reason, name),
              laterTarget: (origin: { source: string; channel: string }) =>
                laterTarget(kernel.io, origin, kernel.settings.config().core.agent.announce_channels),
            }),
      },
      tools: {
        register: (definition) => {
          if (external && !matchesToolName(String(definition.name), toolPatterns)) {
            throw new HomeAgentError(
              'HA_ERR_PLUGIN_PERMISSION',
              `plugin ${name} may not register a tool named ${String(definition.name)}; its manifest allows ${toolPatterns.join(', ')}`,
            );
          }
          const full = this.#wrapTool({ ...(definition as unknown as ToolDefinition), owner });
          return this.#register(
            `tool ${full.name}`,
            () => {
              const taken = kernel.tools.get(full.name);
              if (this.#tools.has(full.name) || (taken && taken.owner !== owner)) {
                throw new HomeAgentError('HA_ERR_TOOL_DEFINITION', `a tool named ${full.name} is already registered`, {
                  details: { name: full.name, owner },
                });
              }
              this.#tools.set(full.name, full);
            },
            () => {
              // A live registration replaces this owner's earlier definition of the same name (a restarted process re-registering).
              kernel.tools.replaceOwner(owner, [...this.#tools.values()]);
              return () => {
                if (kernel.tools.get(full.name) === full) kernel.tools.unregister(full.name);
              };
            },
            () => {
              if (this.#tools.get(full.name) === full) this.#tools.delete(full.name);
            },
          );
        },
        ...(external
          ? {}
          : ({
              describe: (toolName: string) => describeTool(kernel.tools, toolName),
              call: (toolName, args, context) => callTool(kernel.tools, toolName, args, context),
            } satisfies Pick<PluginContext['tools'], 'describe' | 'call'>)),
      },
      stages: {
        register: (stage, handler, scope = 'global') => {
          const staged: StagedStage = { stage, handler, scope };
          return this.#register(
            `stage hook ${stage}`,
            () => {
              if (!isStage(stage))
                throw new HomeAgentError('HA_ERR_STAGE_UNKNOWN', `unknown stage ${JSON.stringify(stage)} (plugin ${name})`);
              this.#stages.push(staged);
            },
            () => kernel.stages.register(owner, stage, handler, scope),
            () => {
              const index = this.#stages.indexOf(staged);
              if (index >= 0) this.#stages.splice(index, 1);
            },
          );
        },
      },
      memory,
      knowledge,
      media: pluginMedia(kernel.media, { name, external }),
      entities,
      llm: {
        chat: async (request) => {
          if (!kernel.llm) return unavailable('a language model');
          const result = await kernel.llm.generate({
            messages: request.messages,
            ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
            ...(request.max_tokens === undefined ? {} : { max_tokens: request.max_tokens }),
            ...(request.signal === undefined ? {} : { signal: request.signal }),
          });
          return { text: result.text, usage: result.usage, model: result.model };
        },
      },
      ...(external || !kernel.agentTurns ? {} : { agent: kernel.agentTurns }),
      http: {
        route: (route) => {
          if (external) this.#permission('serve HTTP routes');
          const full = kernel.routes.prepare(name, route);
          return this.#register(
            `route ${full.full_path}`,
            () => void this.#routes.push(full),
            () => kernel.routes.add(full),
            () => {
              const index = this.#routes.indexOf(full);
              if (index >= 0) this.#routes.splice(index, 1);
            },
          );
        },
        match: (method, fullPath) => {
          if (external) this.#permission('dispatch HTTP routes');
          return kernel.routes.match(method, fullPath);
        },
      },
    };
  }

  #subscribe<K extends EventName>(event: K, listener: (payload: EventMap[K]) => void | Promise<void>): () => void {
    const subscription: Subscription = { event, listener: listener as Subscription['listener'] };
    return this.#register(
      `event ${event}`,
      () => void this.#subscriptions.push(subscription),
      () => this.#kernel.events.on(this.owner, event, listener),
      () => {
        const index = this.#subscriptions.indexOf(subscription);
        if (index >= 0) this.#subscriptions.splice(index, 1);
      },
    );
  }
}

/** Same shape as the control registry's names: dotted lower-case segments. */
const CONTROL_METHOD_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/**
 * The sender a plugin's input carries. Only a built-in plugin's transport can vouch for a sender
 * (a login, a configured owner id); an external plugin is installed code that anyone might have
 * written, so its inputs are untrusted whatever they claim, and a sender a plugin left out is too.
 */
function inputSender(claimed: InputSender | undefined, plugin: string, external: boolean): InputSender {
  const valid =
    claimed !== null &&
    typeof claimed === 'object' &&
    isTrust(claimed.trust) &&
    typeof claimed.id === 'string' &&
    claimed.id !== '' &&
    typeof claimed.proof === 'string';
  if (!valid) return { ...UNKNOWN_SENDER, id: `plugin:${plugin}`, proof: `plugin ${plugin} did not say who sent it` };
  const sender: InputSender = { trust: claimed.trust, id: claimed.id.slice(0, 128), proof: claimed.proof.slice(0, 256) };
  if (claimed.shared === true) sender.shared = true;
  if (external && sender.trust !== 'untrusted') {
    return { ...sender, trust: 'untrusted', proof: `external plugin ${plugin} (it claimed: ${sender.proof})` };
  }
  return sender;
}

function permissionError(plugin: string, what: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `plugin ${plugin} (external) may not ${what}`);
}

function unavailable(what: string): Promise<never> {
  return Promise.reject(new HomeAgentError('HA_ERR_UNAVAILABLE', `${what} is not available in this daemon yet`));
}

/** The facts PluginTools.describe gives about a registered tool. */
export function describeTool(tools: ToolRegistry, name: string): ToolFacts | undefined {
  const def = tools.get(name);
  if (!def) return undefined;
  return { name: def.name, owner: def.owner, tier: def.tier, parallel_safe: def.parallel_safe === true, description: def.description };
}

/** PluginTools.call: the arguments checked as the executor checks them, then the tool's own execute (no gate: see the SDK). */
export async function callTool(tools: ToolRegistry, name: string, args: Record<string, unknown>, context: ToolContext): Promise<unknown> {
  const def = tools.get(name);
  if (!def) throw new ToolError({ reason: 'not_found', field: 'tool', detail: `no tool named ${name} is registered` });
  const check = tools.validate(def, JSON.stringify(args));
  if (!check.ok) throw new ToolError(check.error);
  return def.execute(check.args, context);
}
