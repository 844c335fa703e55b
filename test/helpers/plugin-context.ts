/**
 * A PluginContext for unit tests of one plugin, backed by real registries where that is cheap
 * (a real ToolRegistry, so definitions are validated as in the daemon) and by recording fakes for
 * what the test inspects (injected inputs, channels, audit records). Integration tests load
 * plugins through the real PluginHost instead.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { StageRegistry } from '../../src/agent/stage-registry.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { setByKey } from '../../src/config/loader.js';
import { EventBus } from '../../src/events/event-bus.js';
import { EntityRegistry, type HomeSettings } from '../../src/home/entity-registry.js';
import type { Level, OutputChannel, Receipt } from '../../src/io/types.js';
import { LogManager } from '../../src/log/logger.js';
import { ControlRegistry } from '../../src/plugin/control-registry.js';
import { HttpRouteRegistry } from '../../src/plugin/http-routes.js';
import { callTool, describeTool } from '../../src/plugin/plugin-generation.js';
import { pluginMedia } from '../../src/plugin/plugin-media.js';
import { openPluginDatabase } from '../../src/sdk/database.js';
import type { PluginContext, PluginInput, PluginTrust } from '../../src/sdk/plugin.js';
import { type Clock, systemClock } from '../../src/shared/clock.js';
import { HomeAgentError } from '../../src/shared/errors.js';
import type { ToolContext, ToolDefinition } from '../../src/shared/tool.js';
import { ManagedDatabase } from '../../src/store/database.js';
import { MediaStore } from '../../src/store/media-store.js';
import { PLUGIN_DATABASE_NAME, pluginDatabaseFile, pluginDatabaseName } from '../../src/store/plugin-database-name.js';
import { Store } from '../../src/store/store.js';

export interface InjectedInput {
  input: PluginInput;
  level: Level;
}

export interface TestPluginContext {
  context: PluginContext;
  tools: ToolRegistry;
  events: EventBus;
  channels: Map<string, OutputChannel>;
  injected: InjectedInput[];
  audits: Array<{ action: string; details: Record<string, unknown> }>;
  settings: Map<string, unknown>;
  /** The real entity registry behind ctx.entities, over <dataDir>/home.db. */
  entities: EntityRegistry;
  /** The control methods the plugin registered (ctx.control.register), callable like homeagentctl does. */
  control: ControlRegistry;
  /** The real route table behind ctx.http (routes of this plugin and any the test adds for others). */
  routes: HttpRouteRegistry;
  /** The real media store behind ctx.media, at <dataDir>/media (external plugins are refused as in the daemon). */
  media: MediaStore;
  /** The real stage registry behind ctx.stages: a test runs a stage with `stages.run(stage, context)`. */
  stages: StageRegistry;
  /** A kernel store with no databases of its own: what the plugin opens through ctx.database is listed here (status, backup). */
  store: Store;
  /** Images tools attached through `call` (ToolContext.attachImage), in order, with the tool's name. */
  attached: Array<{ tool: string; digest: string; mime: string }>;
  /** Stops the entity registry (its pending writes land) and closes home.db. */
  close(): Promise<void>;
  /** Calls a registered tool the way the executor does (arguments validated first); throws ToolError as the tool does. */
  call(name: string, args: Record<string, unknown>, context?: Partial<ToolContext>): Promise<unknown>;
  /** Resolves with the next injected input. */
  nextInjected(): Promise<InjectedInput>;
}

export interface TestPluginContextOptions {
  name: string;
  /** plugin.<name>.* values (the test supplies the defaults it relies on). */
  settings?: Record<string, unknown>;
  dataDir: string;
  trust?: PluginTrust;
  root?: string;
  /** The clock of the entity registry (last_changed, history); default the system clock. */
  clock?: Clock;
  /** core.home settings of the entity registry. */
  home?: Partial<HomeSettings>;
  /** Largest media file ctx.media.put accepts (core.knowledge.max_media_mb); default 20 MiB. */
  maxMediaBytes?: number;
  /** Answer of injectInput/injectInterrupt; default a done receipt. */
  receipt?: (input: PluginInput) => Receipt;
  /** Where ctx.log writes (a test that reads the plugin's log lines); silent by default. */
  logs?: LogManager;
}

export function createTestPluginContext(options: TestPluginContextOptions): TestPluginContext {
  const logs = options.logs ?? new LogManager({ level: 'silent', levels: {} });
  const owner = `plugin:${options.name}`;
  const stages = new StageRegistry(logs.child('stages'));
  const tools = new ToolRegistry({ log: logs.child('tools') });
  const events = new EventBus(logs.child('events'));
  const channels = new Map<string, OutputChannel>();
  const injected: InjectedInput[] = [];
  const waiters: Array<(value: InjectedInput) => void> = [];
  const audits: Array<{ action: string; details: Record<string, unknown> }> = [];
  const settings = new Map(Object.entries(options.settings ?? {}));
  const changeListeners = new Set<(key: string) => void>();
  const data = join(options.dataDir, 'plugin-data', options.name);
  mkdirSync(data, { recursive: true });

  const inject = async (input: PluginInput, level: Level): Promise<Receipt> => {
    const entry = { input, level };
    injected.push(entry);
    waiters.shift()?.(entry);
    return options.receipt?.(input) ?? { input_id: `in-${injected.length}`, status: 'done', text: '', finished_at: Date.now() };
  };
  const home = ManagedDatabase.open(
    { name: 'home', file: join(options.dataDir, 'home.db'), synchronous: 'NORMAL' },
    { busyTimeoutMs: 2000, startupCheck: 'off', log: logs.child('store'), clock: options.clock ?? systemClock },
  );
  const homeSettings: HomeSettings = {
    areas: [],
    history_raw_days: 7,
    history_days: 365,
    history_period_minutes: 60,
    history_max_rows: 1_000_000,
    maintenance_interval_ms: 3_600_000,
    ...options.home,
  };
  const entities = new EntityRegistry({
    database: () => home,
    events,
    log: logs.child('home'),
    clock: options.clock ?? systemClock,
    settings: () => homeSettings,
  });
  const control = new ControlRegistry();
  const maxMediaBytes = options.maxMediaBytes ?? 20 * 1024 * 1024;
  const media = new MediaStore({ dir: join(options.dataDir, 'media'), maxBytes: () => maxMediaBytes });
  const attached: Array<{ tool: string; digest: string; mime: string }> = [];
  const routes = new HttpRouteRegistry();
  const store = new Store({
    databases: [],
    busyTimeoutMs: 2000,
    startupCheck: 'off',
    log: logs.child('store'),
    clock: options.clock ?? systemClock,
  });
  const unavailable = (what: string) => () =>
    Promise.reject(new HomeAgentError('HA_ERR_UNAVAILABLE', `${what} is not available in this test`));

  const context: PluginContext = {
    name: options.name,
    trust: options.trust ?? 'builtin',
    log: logs.child(`plugin.${options.name}`),
    audit: (action, details = {}) => void audits.push({ action, details }),
    settings: {
      get: (key) => settings.get(key),
      values: () => nestedValues(settings),
      set: (key, value) => {
        settings.set(key, value);
        for (const listener of changeListeners) listener(key);
      },
      onChange: (listener) => {
        changeListeners.add(listener);
        return () => void changeListeners.delete(listener);
      },
    },
    events: {
      subscribe: (event, listener) => events.on(owner, event, listener),
      publish: (event, payload) => events.emit(event, payload),
    },
    control: {
      call: (method, params, caller) => control.call(method, params, caller),
      methods: () => control.methods(),
      register: (method) => control.register(method),
    },
    paths: { data, runtime: join(options.dataDir, 'run'), root: options.root ?? options.dataDir },
    // As the daemon's (plugin-generation.ts): <plugin data>/<name>.db, listed as <plugin>.<name>.
    database: {
      open: (request) => {
        if ((options.trust ?? 'builtin') === 'external')
          throw new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `plugin ${options.name} (external) may not open a database`);
        if (!PLUGIN_DATABASE_NAME.test(request.name))
          throw new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `bad database name ${JSON.stringify(request.name)}`);
        return openPluginDatabase({
          name: pluginDatabaseName(options.name, request.name),
          file: pluginDatabaseFile(data, request.name),
          component: options.name,
          migrations: request.migrations,
          log: logs.child(`plugin.${options.name}`),
          attach: (managed) => store.attach(managed),
        });
      },
    },
    io: {
      registerOutputChannel: (channel) => {
        channels.set(channel.name, { ...channel, owner });
        return () => void channels.delete(channel.name);
      },
      injectInput: (input) => inject(input, 0),
      injectInterrupt: (input, level) => inject(input, level),
    },
    tools: {
      register: (definition) => tools.register({ ...definition, owner } as ToolDefinition),
      ...((options.trust ?? 'builtin') === 'external'
        ? {}
        : {
            describe: (name: string) => describeTool(tools, name),
            call: (name: string, args: Record<string, unknown>, callContext: ToolContext) => callTool(tools, name, args, callContext),
          }),
    },
    stages: { register: (stage, handler, scope) => stages.register(owner, stage, handler, scope) },
    memory: { recall: unavailable('memory'), commit: unavailable('memory') },
    knowledge: {
      available: () => false,
      search: unavailable('knowledge'),
      list: unavailable('knowledge'),
      tree: unavailable('knowledge'),
      categories: unavailable('knowledge'),
      categoryCounts: unavailable('knowledge'),
      add: unavailable('knowledge'),
    },
    media: pluginMedia(media, { name: options.name, external: (options.trust ?? 'builtin') === 'external' }),
    entities: {
      register: (definition) => entities.register(owner, definition),
      list: async (filter) => entities.list(filter),
      get: async (reference) => entities.resolve(reference),
      call: async (reference, service, data = {}) => entities.call(reference, service, data, { actor: owner }),
      history: async (entityId, historyOptions) => entities.history(entityId, historyOptions),
      areas: async () => entities.areas(),
    },
    llm: { chat: unavailable('the language model') },
    http: {
      route: (route) => routes.add(routes.prepare(options.name, route)),
      match: (method, fullPath) => routes.match(method, fullPath),
    },
  };

  return {
    context,
    tools,
    events,
    channels,
    injected,
    audits,
    settings,
    entities,
    control,
    routes,
    media,
    store,
    stages,
    attached,
    close: async () => {
      await entities.stop();
      home.close();
    },
    call: async (name, args, callContext = {}) => {
      const def = tools.get(name);
      if (!def) throw new Error(`no tool ${name} is registered`);
      const check = tools.validate(def, JSON.stringify(args));
      if (!check.ok) throw new Error(`invalid arguments for ${name}: ${JSON.stringify(check.error)}`);
      return def.execute(check.args, {
        signal: callContext.signal ?? new AbortController().signal,
        task_id: callContext.task_id ?? 'task-1',
        call_id: callContext.call_id ?? 'call-1',
        source: callContext.source ?? 'test',
        channel: callContext.channel ?? 'test',
        trust: callContext.trust ?? 'owner',
        attachImage: callContext.attachImage ?? ((image) => void attached.push({ tool: name, digest: image.digest, mime: image.mime })),
      });
    },
    nextInjected: () => new Promise((resolve) => waiters.push(resolve)),
  };
}

/** The test's settings (flat keys, `vad.threshold`) as the section object `values()` returns. */
function nestedValues(settings: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of settings) setByKey(out, key, structuredClone(value));
  return out;
}

/**
 * A context put together in a test (`{ ...test.context, control }`) as a plain PluginContext, which
 * plugins typed by their settings section accept; the spread object alone keeps the untyped settings' type.
 */
export function asContext(context: PluginContext): PluginContext {
  return context;
}
