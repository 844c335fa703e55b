/**
 * The plugin contract. A plugin's entry module default-exports `definePlugin(factory)`; the host
 * calls the factory with the plugin's own context and then drives the returned instance through
 * the {@link Service} lifecycle: constructors assign, `start(signal)` acquires, `stop()` releases
 * everything `start` acquired.
 */
import type { Stage, StageHandler, StageScope } from '../agent/types.js';
import type { EventMap, EventName } from '../events/event-bus.js';
import type { InputType, Level, OutputChannel, Receipt } from '../io/types.js';
import type { Logger } from '../log/logger.js';
import type { Service } from '../shared/service.js';
import type { ToolDefinition } from '../shared/tool.js';
import type { ControlApi } from './control.js';

/** The plugin's settings, scoped to `plugin.<name>.*`. */
export interface PluginSettings {
  /** The value the running daemon uses for `plugin.<name>.<key>`. */
  get<T = unknown>(key: string): T;
  /** Called after any of this plugin's settings changed; returns a function that unsubscribes. */
  onChange(listener: (key: string) => void): () => void;
}

/** Event subscriptions stamped with the plugin's name and removed automatically when it stops. */
export interface PluginEvents {
  on<K extends EventName>(event: K, listener: (payload: EventMap[K]) => void | Promise<void>): () => void;
}

export interface PluginPaths {
  /** A private, writable directory for this plugin's files (`<data_dir>/plugins/<name>`). */
  data: string;
  /** The daemon's runtime directory, for sockets. */
  runtime: string;
}

/** An input a plugin hands to the agent; the kernel fills in id, time and defaults. */
export interface PluginInput {
  /** Defaults to the plugin's name. */
  source?: string;
  /** The conversation; answers go to the output channel routed for it. */
  channel: string;
  type?: InputType;
  payload: unknown;
  meta?: Record<string, unknown>;
  /** 0 (queued, the default) or an interrupt level 1-4 (4 only for built-in plugins). */
  level?: Level;
}

/** Inputs and outputs. Everything registered here is removed when the plugin stops. */
export interface PluginIo {
  /** Adds an output channel; its owner is the plugin. */
  registerChannel(channel: Omit<OutputChannel, 'owner'>): void;
  /** Hands an input to the agent; resolves with its one receipt. */
  submit(input: PluginInput): Promise<Receipt>;
}

export interface PluginTools {
  /** Offers a tool to the model; its owner is the plugin. Returns a function that removes it. */
  register<A>(definition: Omit<ToolDefinition<A>, 'owner'>): () => void;
}

export interface PluginStages {
  /** Hooks a stage of every turn (`own_tools`: only calls of this plugin's tools). */
  register(stage: Stage, handler: StageHandler, scope?: StageScope): () => void;
}

/** Everything a plugin may use, handed to its factory. */
export interface PluginContext {
  readonly name: string;
  readonly log: Logger;
  readonly settings: PluginSettings;
  readonly events: PluginEvents;
  /** The kernel's control methods (status, config, backup, ...); built-in plugins only. */
  readonly control: ControlApi;
  readonly paths: PluginPaths;
  readonly io: PluginIo;
  readonly tools: PluginTools;
  readonly stages: PluginStages;
}

export type PluginInstance = Omit<Service, 'name'>;
export type PluginFactory = (context: PluginContext) => PluginInstance;

export interface PluginModule {
  readonly kind: 'homeagent-plugin';
  readonly create: PluginFactory;
}

/** Declares a plugin; the entry module's default export. */
export function definePlugin(create: PluginFactory): PluginModule {
  return { kind: 'homeagent-plugin', create };
}

export function isPluginModule(value: unknown): value is PluginModule {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as PluginModule).kind === 'homeagent-plugin' &&
    typeof (value as PluginModule).create === 'function'
  );
}
