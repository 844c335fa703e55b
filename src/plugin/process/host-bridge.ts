/**
 * The daemon's side of one plugin process: it checks each message the child sends against its
 * schema (protocol.ts) and carries it out through the plugin's real context, which is the one that
 * enforces the plugin's permissions (the child is untrusted, so nothing is enforced only there).
 *
 * Stage hooks, event subscriptions, output channels and HTTP routes belong to this process and are
 * removed when it ends ({@link HostBridge.dispose}); a restarted process registers them again.
 * Tools go to the plugin-wide {@link ForwardedTools}, which keeps them across restarts.
 */
import { Value } from '@sinclair/typebox/value';
import type { Stage, StageContext } from '../../agent/types.js';
import type { EventMap, EventName } from '../../events/event-bus.js';
import type { EntityDomain } from '../../home/types.js';
import { withoutImages } from '../../llm/image-parts.js';
import type { ChatMessage } from '../../llm/spec/index.js';
import type { Logger } from '../../log/logger.js';
import type { HttpResponse, PluginContext } from '../../sdk/plugin.js';
import { describeError, type ErrorCode, HomeAgentError } from '../../shared/errors.js';
import type { PluginsLimits } from '../runtime.js';
import type { ForwardedTools } from './forwarded-tools.js';
import type { ChildMessageHandler, PluginChild } from './plugin-child.js';
import {
  type ChildNotificationName,
  type ChildNotificationParams,
  ChildNotificationSchemas,
  type ChildRequestName,
  type ChildRequestParams,
  ChildRequestSchemas,
  type HostRequests,
  HttpResponseSchema,
  type StageChanges,
  StageChangesSchema,
} from './protocol.js';
import { type RequestId, RPC_ERROR, RpcFault } from './rpc-peer.js';

export interface HostBridgeOptions {
  context: PluginContext;
  tools: ForwardedTools;
  limits: () => PluginsLimits;
  log: Logger;
  /** True while the process starts: a refused registration then fails the start. */
  starting: () => boolean;
}

/** Registrations are notifications; these are the ones whose refusal matters to the start. */
const REGISTRATIONS = new Set<string>(['tools.register', 'stages.register', 'events.subscribe', 'io.registerOutputChannel', 'http.route']);

export class HostBridge implements ChildMessageHandler {
  /** Registrations the context refused while the process was starting; the first one fails the start. */
  readonly refused: Error[] = [];
  /** The tools this process registered. */
  readonly toolNames = new Set<string>();
  readonly #options: HostBridgeOptions;
  readonly #owned = new Map<string, () => void>();
  readonly #chats = new Map<RequestId, AbortController>();
  #child: PluginChild | undefined;
  #disposed = false;

  constructor(options: HostBridgeOptions) {
    this.#options = options;
  }

  /** Binds the process this bridge answers for (created after the bridge, which is its message handler). */
  attach(child: PluginChild): void {
    this.#child = child;
  }

  request(method: string, params: unknown, id: RequestId): Promise<unknown> {
    if (!Object.hasOwn(ChildRequestSchemas, method)) {
      return Promise.reject(new RpcFault(RPC_ERROR.METHOD_NOT_FOUND, `the daemon has no method ${method} for plugins`));
    }
    const name = method as ChildRequestName;
    const schema = ChildRequestSchemas[name];
    if (!Value.Check(schema, params))
      return Promise.reject(new RpcFault(RPC_ERROR.INVALID_PARAMS, `${method}: ${firstProblem(schema, params)}`));
    const run = async () => this.#request(name, params as never, id);
    return run().catch((error: unknown) => {
      // Fire-and-forget calls in the SDK: the plugin never sees their failure, so it is logged here.
      if (name === 'settings.set' || name === 'events.publish') {
        this.#options.log.warn({ err: error, method }, `plugin ${this.#options.context.name}: ${method} refused: ${describeError(error)}`);
      }
      throw error;
    });
  }

  notification(method: string, params: unknown): void {
    if (this.#disposed) return;
    if (!Object.hasOwn(ChildNotificationSchemas, method)) {
      this.#options.log.debug({ method }, `plugin ${this.#options.context.name} sent an unknown notification`);
      return;
    }
    const name = method as ChildNotificationName;
    const schema = ChildNotificationSchemas[name];
    try {
      if (!Value.Check(schema, params)) {
        throw new HomeAgentError('HA_ERR_PLUGIN_PROTOCOL', `${method}: ${firstProblem(schema, params)}`);
      }
      this.#notification(name, params as never);
    } catch (error) {
      if (!REGISTRATIONS.has(method)) {
        this.#options.log.warn({ err: error, method }, `plugin ${this.#options.context.name}: ${method} failed: ${describeError(error)}`);
        return;
      }
      this.#options.log.error({ err: error, method }, `plugin ${this.#options.context.name}: ${method} refused: ${describeError(error)}`);
      if (this.#options.starting())
        this.refused.push(error instanceof Error ? error : new HomeAgentError('HA_ERR_PLUGIN_START', String(error)));
    }
  }

  /** Removes everything this process registered except tools, and cancels its model requests. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const remove of this.#owned.values()) remove();
    this.#owned.clear();
    for (const controller of this.#chats.values()) controller.abort(new HomeAgentError('HA_ERR_PLUGIN_DEAD', 'the plugin process ended'));
    this.#chats.clear();
  }

  async #request<M extends ChildRequestName>(method: M, params: ChildRequestParams<M>, id: RequestId): Promise<unknown> {
    const context = this.#options.context;
    switch (method) {
      case 'io.injectInput': {
        const p = params as ChildRequestParams<'io.injectInput'>;
        return context.io.injectInput(p.input);
      }
      case 'io.injectInterrupt': {
        const p = params as ChildRequestParams<'io.injectInterrupt'>;
        return context.io.injectInterrupt(p.input, p.level);
      }
      case 'settings.set': {
        const p = params as ChildRequestParams<'settings.set'>;
        context.settings.set(p.key, p.value);
        return {};
      }
      case 'memory.recall': {
        const p = params as ChildRequestParams<'memory.recall'>;
        return context.memory.recall(p.query, p.options);
      }
      case 'memory.commit': {
        const p = params as ChildRequestParams<'memory.commit'>;
        await context.memory.commit(p.triples, p.options);
        return {};
      }
      case 'knowledge.search': {
        const p = params as ChildRequestParams<'knowledge.search'>;
        return context.knowledge.search(p.query, p.options);
      }
      case 'knowledge.list': {
        const p = params as ChildRequestParams<'knowledge.list'>;
        return context.knowledge.list(p.category);
      }
      case 'knowledge.tree': {
        const p = params as ChildRequestParams<'knowledge.tree'>;
        return context.knowledge.tree(p.options);
      }
      case 'knowledge.categories':
        return context.knowledge.categories();
      case 'knowledge.counts':
        return context.knowledge.categoryCounts();
      case 'knowledge.add': {
        const p = params as ChildRequestParams<'knowledge.add'>;
        await context.knowledge.add(p.name, p.content, p.options);
        return {};
      }
      case 'entities.list': {
        const p = params as ChildRequestParams<'entities.list'>;
        // The domain is checked by the registry's filter (an unknown one matches nothing).
        return context.entities.list(p.filter as { domain?: EntityDomain; area?: string; owner?: string } | undefined);
      }
      case 'entities.get':
        return context.entities.get((params as ChildRequestParams<'entities.get'>).reference);
      case 'entities.history': {
        const p = params as ChildRequestParams<'entities.history'>;
        return context.entities.history(p.entity_id, p.options);
      }
      case 'entities.areas':
        return context.entities.areas();
      case 'llm.chat': {
        const p = params as ChildRequestParams<'llm.chat'>;
        const controller = new AbortController();
        this.#chats.set(id, controller);
        try {
          return await context.llm.chat({ ...p, messages: p.messages as unknown as ChatMessage[], signal: controller.signal });
        } finally {
          this.#chats.delete(id);
        }
      }
      case 'events.publish': {
        const p = params as ChildRequestParams<'events.publish'>;
        context.events.publish(p.event as EventName, p.payload as EventMap[EventName]);
        return {};
      }
      case 'control.call': {
        const p = params as ChildRequestParams<'control.call'>;
        // The actor is the plugin, whatever the child claims.
        return context.control.call(p.method, p.params, { actor: `plugin:${context.name}` });
      }
      default:
        throw new RpcFault(RPC_ERROR.METHOD_NOT_FOUND, `the daemon has no method ${String(method)} for plugins`);
    }
  }

  #notification<M extends ChildNotificationName>(method: M, params: ChildNotificationParams<M>): void {
    const { context, log } = this.#options;
    switch (method) {
      case 'tools.register': {
        const { definition } = params as ChildNotificationParams<'tools.register'>;
        this.#options.tools.add(definition);
        this.toolNames.add(definition.name);
        return;
      }
      case 'tools.unregister': {
        const { name } = params as ChildNotificationParams<'tools.unregister'>;
        if (this.toolNames.delete(name)) this.#options.tools.remove(name);
        return;
      }
      case 'stages.register': {
        const { id, stage, scope } = params as ChildNotificationParams<'stages.register'>;
        this.#own(`stage:${id}`, () => context.stages.register(stage as Stage, (sc) => this.#runStage(id, sc), scope));
        return;
      }
      case 'events.subscribe': {
        const { id, event } = params as ChildNotificationParams<'events.subscribe'>;
        this.#own(`event:${id}`, () =>
          context.events.subscribe(event as EventName, (payload) => {
            if (!this.#disposed) this.#child?.peer.notify('event', { id, payload });
          }),
        );
        return;
      }
      case 'io.registerOutputChannel': {
        const { channel } = params as ChildNotificationParams<'io.registerOutputChannel'>;
        const name = channel.name;
        this.#own(`channel:${name}`, () =>
          context.io.registerOutputChannel({
            ...channel,
            send: async (event) => {
              await this.#call('channel.send', { name, event }, 'HA_ERR_IO_CHANNEL_UNKNOWN');
            },
          }),
        );
        return;
      }
      case 'http.route': {
        const { id, method: verb, path } = params as ChildNotificationParams<'http.route'>;
        this.#own(`route:${id}`, () =>
          context.http.route({
            method: verb,
            path,
            handler: async (request) => {
              const response = await this.#call('http.request', { id, request }, 'HA_ERR_PLUGIN_STATE');
              if (!Value.Check(HttpResponseSchema, response)) throw protocolError(`the answer to an HTTP request is malformed`);
              return response as HttpResponse;
            },
          }),
        );
        return;
      }
      case 'stages.unregister':
        this.#release(`stage:${(params as ChildNotificationParams<'stages.unregister'>).id}`);
        return;
      case 'events.unsubscribe':
        this.#release(`event:${(params as ChildNotificationParams<'events.unsubscribe'>).id}`);
        return;
      case 'io.unregisterOutputChannel':
        this.#release(`channel:${(params as ChildNotificationParams<'io.unregisterOutputChannel'>).name}`);
        return;
      case 'http.unroute':
        this.#release(`route:${(params as ChildNotificationParams<'http.unroute'>).id}`);
        return;
      case 'log': {
        const { level, msg, fields } = params as ChildNotificationParams<'log'>;
        log[level as 'info'](ownFields(fields), msg);
        return;
      }
      case 'audit': {
        const { action, details } = params as ChildNotificationParams<'audit'>;
        context.audit(action, details);
        return;
      }
      case 'rpc.cancel': {
        const { id } = params as ChildNotificationParams<'rpc.cancel'>;
        this.#chats.get(id)?.abort(new HomeAgentError('HA_ERR_LLM_ABORTED', 'the plugin cancelled the request'));
        return;
      }
    }
  }

  /** Registers through the context (which may throw) and remembers how to undo it. */
  #own(key: string, register: () => () => void): void {
    if (this.#owned.has(key)) throw protocolError(`${key} is already registered`);
    this.#owned.set(key, register());
  }

  #release(key: string): void {
    const remove = this.#owned.get(key);
    if (!remove) return;
    this.#owned.delete(key);
    remove();
  }

  /** Sends the turn's context to the hook in the child and applies what the hook changed. */
  async #runStage(id: number, context: StageContext): Promise<void> {
    // Pictures stay in the daemon: external plugins get no media (plugin-media.ts), and base64 would bloat every frame.
    const sent = { ...context, messages: withoutImages(context.messages, 'pictures are not sent to external plugins') };
    const changes = await this.#call('stage.run', { id, context: sent }, 'HA_ERR_PLUGIN_STATE');
    if (!Value.Check(StageChangesSchema, changes)) throw protocolError(`the answer of a ${context.stage} hook is malformed`);
    applyStageChanges(context, changes as StageChanges);
  }

  async #call<M extends 'stage.run' | 'channel.send' | 'http.request'>(
    method: M,
    params: HostRequests[M]['params'],
    fallback: ErrorCode,
  ): Promise<unknown> {
    const child = this.#child;
    if (!child || this.#disposed) throw new HomeAgentError('HA_ERR_PLUGIN_DEAD', `plugin ${this.#options.context.name} is not running`);
    return child.call(method, params, { timeoutMs: this.#options.limits().call_timeout_ms, fallback }).result;
  }
}

/** Applies a hook's changes to the live context; see {@link StageChanges}. */
export function applyStageChanges(context: StageContext, changes: StageChanges): void {
  if (changes.response === null) delete context.response;
  else if (changes.response !== undefined) context.response = changes.response;
  if (changes.reject === null) delete context.reject;
  else if (changes.reject !== undefined) context.reject = changes.reject;
  if (changes.final_text !== undefined) context.final_text = changes.final_text;
  if (changes.tool_call_arguments !== undefined && context.tool_call) context.tool_call.arguments = changes.tool_call_arguments;
  for (const [key, value] of Object.entries(changes.extra_set ?? {})) {
    // JSON.parse makes `__proto__` an ordinary key; assigning it would replace the object's prototype.
    if (key !== '__proto__') context.extra[key] = value;
  }
  for (const key of changes.extra_delete ?? []) delete context.extra[key];
  if (changes.errors_added) context.errors.push(...changes.errors_added);
}

/** Keys a plugin's log line may not set: they would let it pass its lines off as another subsystem's or as audit records. */
const RESERVED_LOG_FIELDS = new Set(['subsystem', 'audit', 'actor', 'action', 'level', 'time', 'pid', 'hostname', 'msg']);

function ownFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!fields) return {};
  return Object.fromEntries(Object.entries(fields).filter(([key]) => !RESERVED_LOG_FIELDS.has(key)));
}

function protocolError(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_PLUGIN_PROTOCOL', message);
}

function firstProblem(schema: Parameters<typeof Value.Errors>[0], value: unknown): string {
  const error = Value.Errors(schema, value).First();
  return error ? `${error.path || '/'}: ${error.message}` : 'invalid';
}
