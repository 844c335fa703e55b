/**
 * The child side of an out-of-process plugin, run as `node child-runtime.js` by process-plugin.ts.
 * It imports the plugin's entry, hands its factory a {@link PluginContext} whose methods are
 * messages to the daemon, and answers the daemon's calls into what the plugin registered (tools,
 * stage hooks, output channels, event listeners, HTTP routes).
 *
 * It enforces nothing: the plugin's code shares this process and could send any message itself,
 * so the daemon checks every request against the plugin's restricted context. It runs under Node's
 * permission model with read access to the runtime's own files only, so it imports nothing of the
 * daemon's but rpc-peer.js (and, through it, the line decoder); everything else here is types.
 */
import { pathToFileURL } from 'node:url';
import type { StageHandler, StageScope } from '../../agent/types.js';
import type { EventName } from '../../events/event-bus.js';
import type { Level, OutputChannel, OutputEvent } from '../../io/types.js';
import type { Logger } from '../../log/logger.js';
import type { HttpRoute, PluginContext, PluginInput, PluginInstance } from '../../sdk/plugin.js';
import type { ToolContext, ToolDefinition } from '../../shared/tool.js';
import type {
  ChildNotificationName,
  ChildNotificationParams,
  ChildRequestName,
  ChildRequestParams,
  ChildRequestResults,
  HostRequests,
  InitParams,
  StageChanges,
  ToolCallResult,
  WireToolDefinition,
} from './protocol.js';
import { PROTOCOL_VERSION, RemoteError, type RequestId, RPC_ERROR, RpcFault, RpcPeer } from './rpc-peer.js';

// The protocol owns stdout: whatever the plugin prints goes to stderr, which the daemon logs.
const writeProtocol = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

const LOG_LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const MAX_LOG_TEXT = 16_000;

/** The plugin's context and everything it registered, once `plugin.init` has run. */
class PluginRuntime {
  readonly #peer: RpcPeer;
  readonly #tools = new Map<string, Omit<ToolDefinition, 'owner'>>();
  readonly #stages = new Map<number, StageHandler>();
  readonly #subscriptions = new Map<number, (payload: unknown) => void | Promise<void>>();
  readonly #channels = new Map<string, (event: OutputEvent) => Promise<void>>();
  readonly #routes = new Map<number, HttpRoute['handler']>();
  readonly #settingListeners = new Set<(key: string) => void>();
  readonly #runningCalls = new Map<RequestId, AbortController>();
  readonly #startController = new AbortController();
  #settings = new Map<string, unknown>();
  #nextId = 1;
  #instance: PluginInstance | undefined;
  #name = '';
  #minLogLevel = LOG_LEVELS.info ?? 30;

  constructor(peer: RpcPeer) {
    this.#peer = peer;
  }

  async request(method: string, params: unknown, id: RequestId): Promise<unknown> {
    switch (method as keyof HostRequests) {
      case 'plugin.init':
        return this.#init(params as InitParams);
      case 'plugin.start':
        await this.#loaded().start(this.#startController.signal);
        return {};
      case 'plugin.stop':
        this.#startController.abort(pluginError('HA_ERR_ABORTED', 'the plugin is stopping'));
        await this.#instance?.stop();
        return {};
      case 'plugin.health':
        return (await this.#loaded().health?.()) ?? { ok: true, detail: 'running', detail_zh: '运行中' };
      case 'tool.call':
        return this.#callTool(params as HostRequests['tool.call']['params'], id);
      case 'stage.run':
        return this.#runStage(params as HostRequests['stage.run']['params']);
      case 'channel.send': {
        const { name, event } = params as HostRequests['channel.send']['params'];
        const send = this.#channels.get(name);
        if (!send) throw pluginError('HA_ERR_IO_CHANNEL_UNKNOWN', `plugin ${this.#name} has no output channel ${name}`);
        await send(event);
        return {};
      }
      case 'http.request': {
        const { id: routeId, request } = params as HostRequests['http.request']['params'];
        const handler = this.#routes.get(routeId);
        if (!handler) throw pluginError('HA_ERR_PLUGIN_STATE', `plugin ${this.#name} has no such HTTP route`);
        return (await handler(request)) ?? {};
      }
      default:
        throw new RpcFault(RPC_ERROR.METHOD_NOT_FOUND, `the plugin runtime has no method ${method}`);
    }
  }

  notification(method: string, params: unknown): void {
    if (method === 'tool.cancel') {
      const { id } = params as { id: number };
      this.#runningCalls.get(id)?.abort(pluginError('HA_ERR_ABORTED', 'the call was cancelled by HomeAgent'));
    } else if (method === 'event') {
      const { id, payload } = params as { id: number; payload: unknown };
      const listener = this.#subscriptions.get(id);
      if (listener) void this.#isolated(() => listener(payload), 'an event listener failed');
    } else if (method === 'settings.changed') {
      const { key, value } = params as { key: string; value: unknown };
      this.#settings.set(key, value);
      for (const listener of this.#settingListeners) void this.#isolated(() => listener(key), 'a settings listener failed');
    }
  }

  async #init(params: InitParams): Promise<Record<string, never>> {
    if (params.protocol !== PROTOCOL_VERSION) {
      throw pluginError('HA_ERR_PLUGIN_PROTOCOL', `the daemon speaks protocol ${params.protocol}, this runtime ${PROTOCOL_VERSION}`);
    }
    if (this.#instance) throw pluginError('HA_ERR_PLUGIN_STATE', 'the plugin is already loaded');
    this.#name = params.name;
    this.#settings = new Map(Object.entries(params.settings));
    this.#minLogLevel = LOG_LEVELS[params.log_level] ?? Number.POSITIVE_INFINITY;
    const module = (await import(pathToFileURL(params.entry).href)) as { default?: unknown };
    const factory = pluginFactory(module.default);
    if (!factory) {
      throw pluginError(
        'HA_ERR_PLUGIN_LOAD',
        `${params.entry} must default-export definePlugin(...) or a function (context) => ({ start, stop })`,
      );
    }
    const instance = (await factory(this.#context(params))) as Partial<PluginInstance> | undefined;
    if (typeof instance?.start !== 'function' || typeof instance.stop !== 'function') {
      throw pluginError('HA_ERR_PLUGIN_LOAD', `the factory in ${params.entry} must return an object with start() and stop()`);
    }
    this.#instance = instance as PluginInstance;
    return {};
  }

  #loaded(): PluginInstance {
    if (!this.#instance) throw pluginError('HA_ERR_PLUGIN_STATE', 'the plugin is not loaded yet');
    return this.#instance;
  }

  async #callTool(params: HostRequests['tool.call']['params'], id: RequestId): Promise<ToolCallResult> {
    const tool = this.#tools.get(params.name);
    if (!tool) throw toolError('not_found', `plugin ${this.#name} has no tool ${params.name}`);
    const controller = new AbortController();
    this.#runningCalls.set(id, controller);
    try {
      const context: ToolContext = { ...params.context, signal: controller.signal };
      const value = await tool.execute(params.args as Record<string, unknown>, context);
      return value === undefined ? {} : { value };
    } finally {
      this.#runningCalls.delete(id);
    }
  }

  /** Runs a hook on the copy it was sent and reports only what the hook changed. */
  async #runStage({ id, context }: HostRequests['stage.run']['params']): Promise<StageChanges> {
    const handler = this.#stages.get(id);
    if (!handler) throw pluginError('HA_ERR_STAGE_UNKNOWN', `plugin ${this.#name} has no stage hook ${id}`);
    const before = {
      response: context.response,
      reject: context.reject,
      final_text: context.final_text,
      arguments: context.tool_call?.arguments,
      extra: new Map(Object.entries(context.extra ?? {}).map(([k, v]) => [k, JSON.stringify(v)])),
      errors: [...(context.errors ?? [])],
    };
    await handler(context);
    const changes: StageChanges = {};
    if (context.response !== before.response) changes.response = context.response ?? null;
    if (context.reject !== before.reject) changes.reject = context.reject ?? null;
    if (context.final_text !== before.final_text) changes.final_text = String(context.final_text);
    if (context.tool_call && context.tool_call.arguments !== before.arguments)
      changes.tool_call_arguments = String(context.tool_call.arguments);
    const extra = context.extra ?? {};
    const set = Object.fromEntries(Object.entries(extra).filter(([k, v]) => JSON.stringify(v) !== before.extra.get(k)));
    const removed = [...before.extra.keys()].filter((k) => !(k in extra));
    if (Object.keys(set).length > 0) changes.extra_set = set;
    if (removed.length > 0) changes.extra_delete = removed;
    const errors = context.errors ?? [];
    const kept = before.errors.every((e, i) => errors[i] === e);
    const added = kept ? errors.slice(before.errors.length) : errors.filter((e) => !before.errors.includes(e));
    if (added.length > 0) changes.errors_added = added.map(String);
    return changes;
  }

  #context(init: InitParams): PluginContext {
    const name = init.name;
    return {
      name,
      trust: init.trust,
      log: this.#logger({}),
      audit: (action, details) => this.#tell('audit', details === undefined ? { action } : { action, details }),
      settings: {
        get: (key) => this.#settings.get(key),
        values: () => Object.fromEntries(this.#settings),
        set: (key, value) => void this.#ask('settings.set', { key, value }).catch(() => {}),
        onChange: (listener) => {
          this.#settingListeners.add(listener);
          return () => void this.#settingListeners.delete(listener);
        },
      },
      events: {
        subscribe: (event: EventName, listener) => {
          const id = this.#nextId++;
          this.#subscriptions.set(id, listener as (payload: unknown) => void);
          this.#tell('events.subscribe', { id, event });
          return () => {
            if (this.#subscriptions.delete(id)) this.#tell('events.unsubscribe', { id });
          };
        },
        // Refusals are logged by the daemon: publish returns nothing the plugin could check.
        publish: (event, payload) => void this.#ask('events.publish', { event, payload }).catch(() => {}),
      },
      control: {
        call: (method, params) => this.#ask('control.call', { method, params }),
        methods: () => init.control_methods,
        register: () => {
          throw pluginError('HA_ERR_PLUGIN_PERMISSION', `plugin ${init.name} (external) may not register control methods`);
        },
      },
      paths: init.paths,
      database: {
        open: () => {
          throw pluginError('HA_ERR_PLUGIN_PERMISSION', `plugin ${init.name} (external) may not open a database in the daemon`);
        },
      },
      io: {
        registerOutputChannel: (channel: Omit<OutputChannel, 'owner'>) => {
          if (this.#channels.has(channel.name))
            throw pluginError('HA_ERR_IO_DEFINITION', `output channel ${channel.name} is already registered`);
          const send = (event: OutputEvent) => channel.send(event);
          this.#channels.set(channel.name, send);
          const wire = {
            name: channel.name,
            description: channel.description,
            capabilities: channel.capabilities,
            synchronous: channel.synchronous,
            ...(channel.critical === undefined ? {} : { critical: channel.critical }),
          };
          this.#tell('io.registerOutputChannel', { channel: wire });
          return () => {
            if (this.#channels.get(channel.name) !== send) return;
            this.#channels.delete(channel.name);
            this.#tell('io.unregisterOutputChannel', { name: channel.name });
          };
        },
        injectInput: (input: PluginInput) => this.#ask('io.injectInput', { input }),
        injectInterrupt: (input: PluginInput, level: Exclude<Level, 0>) => this.#ask('io.injectInterrupt', { input, level }),
      },
      tools: {
        register: (definition) => {
          const def = definition as unknown as Omit<ToolDefinition, 'owner'>;
          if (this.#tools.has(def.name)) throw pluginError('HA_ERR_TOOL_DEFINITION', `a tool named ${def.name} is already registered`);
          this.#tools.set(def.name, def);
          this.#tell('tools.register', { definition: wireTool(def) });
          return () => {
            if (this.#tools.get(def.name) !== def) return;
            this.#tools.delete(def.name);
            this.#tell('tools.unregister', { name: def.name });
          };
        },
      },
      stages: {
        register: (stage, handler, scope?: StageScope) => {
          const id = this.#nextId++;
          this.#stages.set(id, handler);
          this.#tell('stages.register', scope === undefined ? { id, stage } : { id, stage, scope });
          return () => {
            if (this.#stages.delete(id)) this.#tell('stages.unregister', { id });
          };
        },
      },
      memory: {
        recall: (query, options) => this.#ask('memory.recall', options === undefined ? { query } : { query, options }),
        commit: async (triples, options) =>
          void (await this.#ask('memory.commit', options === undefined ? { triples } : { triples, options })),
      },
      // External plugins get no media store (src/plugin/plugin-media.ts says why).
      media: {
        put: () => {
          throw pluginError('HA_ERR_PLUGIN_PERMISSION', `plugin ${name} (external) may not write to the media store`);
        },
        read: () => {
          throw pluginError('HA_ERR_PLUGIN_PERMISSION', `plugin ${name} (external) may not read from the media store`);
        },
      },
      knowledge: {
        search: (query, options) => this.#ask('knowledge.search', options === undefined ? { query } : { query, options }),
        list: (category) => this.#ask('knowledge.list', category === undefined ? {} : { category }),
        available: () => init.knowledge_available,
        tree: (options) => this.#ask('knowledge.tree', options === undefined ? {} : { options }),
        categories: () => this.#ask('knowledge.categories', {}),
        categoryCounts: () => this.#ask('knowledge.counts', {}),
        add: async (name, content, options) =>
          void (await this.#ask('knowledge.add', options === undefined ? { name, content } : { name, content, options })),
      },
      entities: {
        register: () => {
          throw pluginError('HA_ERR_PLUGIN_PERMISSION', `plugin ${name} (external) may not register entities`);
        },
        list: (filter) => this.#ask('entities.list', filter === undefined ? {} : { filter }),
        get: (reference) => this.#ask('entities.get', { reference }),
        call: async () => {
          throw pluginError('HA_ERR_PLUGIN_PERMISSION', `plugin ${name} (external) may not call entity services`);
        },
        history: (entity_id, options) => this.#ask('entities.history', options === undefined ? { entity_id } : { entity_id, options }),
        areas: () => this.#ask('entities.areas', {}),
      },
      llm: {
        chat: async ({ signal, ...request }) => {
          const { id, result } = this.#peer.request<ChildRequestResults['llm.chat']>('llm.chat', request);
          const onAbort = () => {
            this.#tell('rpc.cancel', { id });
            this.#peer.cancel(id, pluginError('HA_ERR_LLM_ABORTED', 'the chat request was cancelled'));
          };
          if (signal?.aborted) onAbort();
          signal?.addEventListener('abort', onAbort, { once: true });
          try {
            return await result.catch(rethrowForPlugin);
          } finally {
            signal?.removeEventListener('abort', onAbort);
          }
        },
      },
      http: {
        route: (route) => {
          const id = this.#nextId++;
          this.#routes.set(id, route.handler);
          this.#tell('http.route', { id, method: route.method, path: route.path });
          return () => {
            if (this.#routes.delete(id)) this.#tell('http.unroute', { id });
          };
        },
        match: () => {
          throw pluginError('HA_ERR_PLUGIN_PERMISSION', `plugin ${name} (external) may not dispatch HTTP routes`);
        },
      },
    };
  }

  #ask<M extends ChildRequestName>(method: M, params: ChildRequestParams<M>): Promise<ChildRequestResults[M]> {
    return this.#peer.request<ChildRequestResults[M]>(method, params).result.catch(rethrowForPlugin);
  }

  #tell<M extends ChildNotificationName>(method: M, params: ChildNotificationParams<M>): void {
    this.#peer.notify(method, params);
  }

  /** A pino-like logger whose lines become `log` notifications (the daemon writes them with the plugin's logger). */
  #logger(bindings: Record<string, unknown>): Logger {
    const method =
      (level: string) =>
      (first?: unknown, ...rest: unknown[]): void => {
        if ((LOG_LEVELS[level] ?? 0) < this.#minLogLevel) return;
        let fields: Record<string, unknown> = { ...bindings };
        let msg: string;
        if (typeof first === 'string') {
          msg = [first, ...rest].map(String).join(' ');
        } else if (first instanceof Error) {
          fields.err = errorFields(first);
          msg = typeof rest[0] === 'string' ? rest.map(String).join(' ') : first.message;
        } else {
          if (typeof first === 'object' && first !== null) fields = { ...fields, ...plainFields(first as Record<string, unknown>) };
          msg = rest.map(String).join(' ');
        }
        const line = { level, msg: msg.slice(0, MAX_LOG_TEXT), ...(Object.keys(fields).length > 0 ? { fields } : {}) };
        try {
          this.#tell('log', line);
        } catch {
          // Fields that cannot be JSON (a cycle, a BigInt) must not turn a log line into a crash.
          this.#tell('log', { level, msg: line.msg, fields: { fields_dropped: 'not serialisable' } });
        }
      };
    const logger = {
      level: 'info',
      trace: method('trace'),
      debug: method('debug'),
      info: method('info'),
      warn: method('warn'),
      error: method('error'),
      fatal: method('fatal'),
      silent: () => {},
      child: (more: Record<string, unknown>) => this.#logger({ ...bindings, ...more }),
      isLevelEnabled: (level: string) => (LOG_LEVELS[level] ?? 0) >= this.#minLogLevel,
    };
    return logger as unknown as Logger;
  }

  async #isolated(fn: () => unknown, what: string): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.#logger({}).error(error instanceof Error ? error : new Error(String(error)), what);
    }
  }
}

function pluginFactory(exported: unknown): ((context: PluginContext) => unknown) | undefined {
  if (typeof exported === 'function') return exported as (context: PluginContext) => unknown;
  if (typeof exported === 'object' && exported !== null) {
    const module = exported as { kind?: unknown; create?: unknown };
    if (module.kind === 'homeagent-plugin' && typeof module.create === 'function')
      return module.create as (context: PluginContext) => unknown;
  }
  return undefined;
}

function wireTool(def: Omit<ToolDefinition, 'owner'>): WireToolDefinition {
  return {
    name: def.name,
    description: def.description,
    parameters: def.parameters,
    tier: def.tier,
    ...(def.parallel_safe === undefined ? {} : { parallel_safe: def.parallel_safe }),
    ...(def.no_memory === undefined ? {} : { no_memory: def.no_memory }),
    ...(def.timeout_ms === undefined ? {} : { timeout_ms: def.timeout_ms }),
  };
}

/** Errors the plugin sees look like the SDK's HomeAgentError (name and code); the class itself is not loaded here. */
function pluginError(code: string, message: string): Error {
  const error = new Error(message) as Error & { code: string };
  error.name = 'HomeAgentError';
  error.code = code;
  return error;
}

function toolError(reason: string, detail: string): Error {
  const error = new Error(detail) as Error & { info: { reason: string; detail: string } };
  error.name = 'ToolError';
  error.info = { reason, detail };
  return error;
}

function rethrowForPlugin(error: unknown): never {
  if (error instanceof RemoteError) throw pluginError(error.data?.ha_code ?? 'HA_ERR_INTERNAL', error.message);
  throw error;
}

function errorFields(error: Error): Record<string, unknown> {
  return { type: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
}

function plainFields(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, v instanceof Error ? errorFields(v) : v]));
}

function main(): void {
  let runtime: PluginRuntime | undefined;
  const peer = new RpcPeer({
    write: (line) => void writeProtocol(line),
    onRequest: (method, params, id) => runtime?.request(method, params, id),
    onNotification: (method, params) => runtime?.notification(method, params),
    onProtocolError: (detail) => {
      process.stderr.write(`homeagent plugin runtime: protocol error from the daemon: ${detail}\n`);
      process.exit(70);
    },
  });
  runtime = new PluginRuntime(peer);
  process.stdin.on('data', (chunk: Buffer) => peer.receive(chunk));
  // The daemon closed the pipe (it stopped or died): nothing can reach this plugin any more.
  process.stdin.on('end', () => process.exit(0));
}

main();
