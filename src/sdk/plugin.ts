/**
 * The plugin contract. A plugin's entry module default-exports `definePlugin(factory)`; the host
 * calls the factory with the plugin's own context and then drives the returned instance through
 * the {@link Service} lifecycle: constructors assign, `start(signal)` acquires, `stop()` releases
 * everything `start` acquired.
 *
 * Every context is built for one plugin and stamped with its identity: whatever it registers is
 * owned by `plugin:<name>` and removed when it stops. Built-in plugins get the whole SDK; external
 * ones (out-of-process and Lua) a restricted one, enforced by the host: read-only memory and
 * knowledge, no media store, subscribe-only events, no control API, no HTTP routes, interrupts at most L3, settings
 * only in their own namespace, and only the tool names their manifest allows. A call the plugin
 * may not make throws HA_ERR_PLUGIN_PERMISSION; one whose service this daemon lacks throws
 * HA_ERR_UNAVAILABLE.
 */
import type { TSchema } from '@sinclair/typebox';
import type { BoundedTurnRequest, BoundedTurnResult } from '../agent/bounded-turn.js';
import type { Stage, StageHandler, StageScope } from '../agent/types.js';
import type { KnowledgeHit, KnowledgeTreeItem, KnowledgeTreeNode } from '../api/knowledge.js';
import type { EventMap, EventName } from '../events/event-bus.js';
import type { Area, EntityDefinition, EntityFilter, EntityHandle, EntityInfo, StateHistoryRow } from '../home/types.js';
import type { LaterTarget } from '../io/later-delivery.js';
import type { InputType, Level, OutputChannel, Receipt } from '../io/types.js';
import type { ChatMessage, Usage } from '../llm/spec/index.js';
import type { Logger } from '../log/logger.js';
import type { Service } from '../shared/service.js';
import type { ToolContext, ToolDefinition, ToolTier } from '../shared/tool.js';
import type { InputSender } from '../shared/trust.js';
import type { ControlApi, ControlMethod } from './control.js';
import type { PluginDatabases } from './database.js';
import type { SettingKey, SettingValue } from './settings.js';

export type { KnowledgeHit, KnowledgeTreeItem, KnowledgeTreeNode };

/** `builtin`: shipped in plugins/ and loaded in-process. `external`: installed code (process or Lua). */
export type PluginTrust = 'builtin' | 'external';

/**
 * The settings type argument of a plugin that declares none (the default of PluginContext and
 * PluginSettings). It is `any` on purpose: a context typed by one plugin's section and the plain
 * PluginContext that helpers and tests use must be assignable to each other, and TypeScript lets
 * an `any` type argument through in both directions. Values still come back `unknown` (below).
 */
// biome-ignore lint/suspicious/noExplicitAny: the one bivariant type argument, explained above
export type UntypedSettings = any;

/** Settings of a plugin that declares no section type: any key, values unknown. */
export interface UntypedPluginSettings {
  /** The value the running daemon uses for `plugin.<name>.<key>`. */
  get(key: string): unknown;
  /** Every value of the section as the running daemon uses them, as one object. */
  values(): Record<string, unknown>;
  /** Stores `plugin.<name>.<key>` (checked against its definition; audited with the plugin as actor). */
  set(key: string, value: unknown): void;
  /** Called after any of this plugin's settings changed; returns a function that unsubscribes. */
  onChange(listener: (key: string) => void): () => void;
}

/** The same, typed by the section's `Static<>` type: keys are checked and values come typed, without casts. */
export interface TypedPluginSettings<T extends object> {
  get<K extends SettingKey<T>>(key: K): SettingValue<T, K>;
  values(): T;
  set<K extends SettingKey<T>>(key: K, value: SettingValue<T, K>): void;
  onChange(listener: (key: SettingKey<T>) => void): () => void;
}

/** The plugin's settings, scoped to `plugin.<name>.*`; typed when the plugin declares its section's type (`definePlugin<CliSettings>`). */
export type PluginSettings<T extends object = UntypedSettings> = string extends keyof T ? UntypedPluginSettings : TypedPluginSettings<T>;

/** Event subscriptions stamped with the plugin's name and removed automatically when it stops. */
export interface PluginEvents {
  subscribe<K extends EventName>(event: K, listener: (payload: EventMap[K]) => void | Promise<void>): () => void;
  /** Emits a kernel event. Built-in plugins only. */
  publish<K extends EventName>(event: K, payload: EventMap[K]): void;
}

export interface PluginPaths {
  /** A private, writable directory for this plugin's files (`<data_dir>/plugin-data/<name>`). */
  data: string;
  /** The daemon's runtime directory, for sockets. */
  runtime: string;
  /** The folder the plugin was loaded from (read-only for external plugins). */
  root: string;
}

/** An input a plugin hands to the agent; the kernel fills in id, time and defaults. */
export interface PluginInput {
  /**
   * The input's id; a fresh one when absent. A plugin that follows the turn's events (agent.text_delta,
   * agent.answer, ... carry `input_id`) chooses it: 8-64 characters of A-Z a-z 0-9 _ -, never reused.
   */
  id?: string;
  /** Defaults to the plugin's name. */
  source?: string;
  /** The conversation; answers go to the output channel routed for it. */
  channel: string;
  /**
   * Who sent it and how the plugin's transport knows (docs/security.md): `owner` only when the
   * transport proves it (a login, a configured owner id), `household` for someone of the house not
   * proven to be the owner, `untrusted` for what anyone could have written. Absent: untrusted.
   * Inputs of external plugins are always untrusted, whatever they claim.
   */
  sender?: InputSender;
  type?: InputType;
  payload: unknown;
  /**
   * Extra facts about the input. `history`, a list of {role: system|user|assistant, content}, is the
   * conversation so far as the client keeps it (the OpenAI-compatible endpoint): the model sees it
   * instead of the channel's own history.
   */
  meta?: Record<string, unknown>;
}

/** Inputs and outputs. Everything registered here is removed when the plugin stops. */
export interface PluginIo {
  /** Adds an output channel; its owner is the plugin. Returns a function that removes it. */
  registerOutputChannel(channel: Omit<OutputChannel, 'owner'>): () => void;
  /** Queues an input for the agent; resolves with its one receipt. */
  injectInput(input: PluginInput): Promise<Receipt>;
  /**
   * Raises an interrupt (level 1-4) that may pre-empt the task running now. External plugins are
   * clamped to L3; L4 is for the kernel and built-in plugins.
   */
  injectInterrupt(input: PluginInput, level: Exclude<Level, 0>): Promise<Receipt>;
  /**
   * Cancels the running (or suspended) turn of an input this plugin injected, e.g. when the person
   * talked over the spoken answer (barge-in): the model's request stops at once and the receipt
   * says `cancelled` with `reason`. False when that input has no running turn (finished, still
   * queued, or another plugin's). Built-in plugins only; absent in external plugins' contexts.
   */
  cancelInput?(inputId: string, reason: string): boolean;
  /**
   * Where a message this plugin raises later for a conversation should go (a timer ringing for the
   * conversation that set it): that conversation when its channel can take a message now, else the
   * first of core.agent.announce_channels that can (src/io/later-delivery.ts). Raise the input on
   * the returned `channel`; `detail` says where and why, for the log and the receipt. Built-in
   * plugins only; absent in external plugins' contexts.
   */
  laterTarget?(origin: { source: string; channel: string }): LaterTarget;
}

/** What a plugin may learn about a registered tool (PluginTools.describe). */
export interface ToolFacts {
  name: string;
  /** `core`, `io`, `plugin:<name>`, `device:<name>`. */
  owner: string;
  tier: ToolTier;
  parallel_safe: boolean;
  description: string;
}

export interface PluginTools {
  /**
   * Offers a tool to the model; its owner is the plugin. A name already taken is rejected
   * (HA_ERR_TOOL_DEFINITION). Returns a function that removes it.
   */
  register<A>(definition: Omit<ToolDefinition<A>, 'owner'>): () => void;
  /** A registered tool's owner, tier and concurrency; undefined when no tool has that name. Built-in plugins only. */
  describe?(name: string): ToolFacts | undefined;
  /**
   * Runs another registered tool with `args` (checked against its schema first: a ToolError with
   * the reason otherwise) under `context`, and resolves with its result. It does NOT pass the
   * confirmation gate, the trust policies or stage hooks: the caller answers for the call having
   * passed them already, as seq does by running its steps only inside a call of its own whose tier
   * is the highest of theirs. Built-in plugins only.
   */
  call?(name: string, args: Record<string, unknown>, context: ToolContext): Promise<unknown>;
}

export interface PluginStages {
  /** Hooks a stage of every turn (`own_tools`: only calls of this plugin's tools). */
  register(stage: Stage, handler: StageHandler, scope?: StageScope): () => void;
}

/** A remembered fact as memory returns it. */
export interface MemoryItem {
  text: string;
  score: number;
  source?: string;
  at?: string;
}

export interface Triple {
  subject: string;
  relation: string;
  object: string;
  confidence?: number;
}

/** The household memory. External plugins may only recall. */
export interface PluginMemory {
  recall(query: string, options?: { limit?: number }): Promise<MemoryItem[]>;
  /** Built-in plugins only. */
  commit(triples: Triple[], options?: { source?: string }): Promise<void>;
}

export interface KnowledgeSearchOptions {
  /** Results at most (the library's default, 5, when absent). */
  limit?: number;
  /** Only entries in this category or below it. */
  category?: string;
}

export interface KnowledgeTreeOptions {
  /** Start at this category (the whole library by default); an unknown one is an error naming the top-level categories. */
  category?: string;
  /** Levels below the start that are expanded; unlimited by default. */
  max_depth?: number;
  /** List each category's entries with a preview. */
  include_items?: boolean;
  /** Characters of each item's preview; default 120. */
  preview_limit?: number;
}

/** How many entries a category holds, those in its sub-categories included. */
export interface KnowledgeCategoryCount {
  category: string;
  count: number;
}

/**
 * The household knowledge library (markdown entries in a category tree). External plugins may
 * read (search, list, tree, categories, counts) but not write. Every call but `available` throws
 * HA_ERR_UNAVAILABLE when this daemon runs without a knowledge library.
 */
export interface PluginKnowledge {
  /** False when this daemon has no knowledge library: check it before offering a service built on one. */
  available(): boolean;
  /** Searches by meaning and by words, best first. */
  search(query: string, options?: KnowledgeSearchOptions): Promise<KnowledgeHit[]>;
  /** Entries in a category and below it (all of them without one). */
  list(category?: string): Promise<Array<{ name: string; category: string }>>;
  /** The category tree with entry counts (and entries, when asked). */
  tree(options?: KnowledgeTreeOptions): Promise<KnowledgeTreeNode>;
  /** Every category path, intermediate levels included, sorted. */
  categories(): Promise<string[]>;
  /** Entries per category (those below it included), most first, ties by name. */
  categoryCounts(): Promise<KnowledgeCategoryCount[]>;
  /** Writes an entry (`category/.../leaf`) and indexes it; an existing one is replaced only with `overwrite`. Built-in plugins only. */
  add(name: string, content: string, options?: { overwrite?: boolean }): Promise<void>;
}

/** What the media store holds for one content. */
export interface StoredMediaInfo {
  /** sha256 of the bytes, lower-case hex: the name ToolContext.attachImage and `read` take. */
  digest: string;
  mime: string;
  kind: 'image' | 'audio';
  bytes: number;
}

/**
 * The content-addressed media store (<data>/media, shared with the knowledge library): images and
 * audio kept once per content. Files larger than core.knowledge.max_media_mb are refused. Built-in
 * plugins only: for external ones both calls throw HA_ERR_PLUGIN_PERMISSION (the store holds
 * pictures taken in the home). Both throw HA_ERR_UNAVAILABLE when this daemon has no media store.
 */
export interface PluginMedia {
  /** Stores image or audio bytes (type read from the bytes); the same bytes are stored once. Throws HA_ERR_MEDIA_TYPE / HA_ERR_MEDIA_TOO_LARGE. */
  put(data: Uint8Array): StoredMediaInfo;
  /** The bytes of a stored digest; throws HA_ERR_KNOWLEDGE_NOT_FOUND (the media store's "no such file", as kb.media answers) when absent. */
  read(digest: string): Buffer;
}

export interface PluginChatRequest {
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  signal?: AbortSignal;
}

/** Language models, through the provider manager (sources, fallbacks and cooldowns included). */
export interface PluginLlm {
  chat(request: PluginChatRequest): Promise<{ text: string; usage: Usage; model: string }>;
}

/**
 * Agent turns a plugin runs itself, beside the conversation (the subagents plugin's children work
 * on a task while the person goes on talking; the input scheduler has one lane and its turns are
 * the household's own words). Why it is here: a plugin could call the model (PluginLlm) but not
 * offer it tools through the kernel's executor, which is what keeps such a turn under the same
 * stage hooks, trust policies and owner approval as any turn. Built-in plugins only; absent in
 * external plugins' contexts.
 */
export interface PluginAgent {
  /**
   * Runs one bounded turn (src/agent/bounded-turn.ts): tool rounds, total tokens and the excluded
   * tools are its bounds, `signal` ends it; it never approves its own dangerous calls (they wait
   * for the owner like any other). Resolves with how it ended; never rejects for the model's or a
   * tool's failure.
   */
  runTurn(request: BoundedTurnRequest): Promise<BoundedTurnResult>;
  /** The names of the tools a turn excluding `patterns` would be offered now. */
  offeredTools(patterns: readonly string[]): string[];
}

export interface HttpRequest {
  method: string;
  /** Path below the plugin's prefix, starting with `/`. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
}

export interface HttpResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface HttpRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** Served at `/plugins/<name><path>`. */
  path: string;
  handler(request: HttpRequest): HttpResponse | Promise<HttpResponse>;
}

/** A plugin's route as the web server finds it. */
export interface ServedRoute extends HttpRoute {
  /** `plugin:<name>`. */
  owner: string;
  /** The full path served, `/plugins/<name><path>`. */
  full_path: string;
}

/** Routes served by the daemon's one web server. Built-in plugins only. */
export interface PluginHttp {
  route(route: HttpRoute): () => void;
  /**
   * The route any plugin registered for `method` and a full path below `/plugins/`, for the plugin
   * that runs the web server (webui) to dispatch to; undefined when none is registered.
   */
  match(method: string, fullPath: string): ServedRoute | undefined;
}

/** The kernel's control methods, and methods of the plugin's own. Built-in plugins only. */
export interface PluginControl extends ControlApi {
  /**
   * Adds a control method, served wherever control methods are (`homeagentctl`, the CLI socket).
   * Its name must start with the plugin's name and a dot (`kbtree.token`; `-` and `.` in the
   * plugin's name become `_`). Registered while the plugin starts, it goes live with the plugin's
   * other registrations; it is removed when the plugin stops or is replaced by a reload. External
   * plugins get HA_ERR_PLUGIN_PERMISSION. Returns a function that removes it.
   */
  register<P extends TSchema, R>(method: ControlMethod<P, R>): () => void;
}

/**
 * The home's entities (switches, lights, sensors, ...), the one place device state is read and
 * changed. Entities a plugin registers are owned by it and removed when it stops (their history
 * stays). External plugins may read (list, get, history, areas) but not register or call. Reads
 * are asynchronous because an out-of-process plugin's go over its connection to the daemon.
 */
export interface PluginEntities {
  /** Registers an entity owned by the plugin; an id taken by another owner is HA_ERR_ENTITY_DEFINITION. */
  register(definition: EntityDefinition): EntityHandle;
  list(filter?: EntityFilter): Promise<EntityInfo[]>;
  /**
   * One entity by id (`switch.kitchen_light`), name or alias, case-insensitive; "kitchen light"
   * also matches the entity named "light" in the area "kitchen". HA_ERR_ENTITY_NOT_FOUND or
   * HA_ERR_ENTITY_AMBIGUOUS (the message lists the candidates) otherwise.
   */
  get(reference: string): Promise<EntityInfo>;
  /** Calls a service of the entity's domain with the plugin as actor; resolves with the entity after the call. */
  call(reference: string, service: string, data?: Record<string, unknown>): Promise<EntityInfo>;
  /** Stored states of an entity, oldest first, between two epoch ms (default: the last 24 hours). */
  history(entity_id: string, options?: { from?: number; to?: number; limit?: number }): Promise<StateHistoryRow[]>;
  areas(): Promise<Area[]>;
}

/** Everything a plugin may use, handed to its factory. */
export interface PluginContext<T extends object = UntypedSettings> {
  readonly name: string;
  readonly trust: PluginTrust;
  readonly log: Logger;
  /**
   * Writes an audit record (always kept, whatever the log level) with the plugin as actor: every
   * command run, file written or setting changed on someone's behalf.
   */
  audit(action: string, details?: Record<string, unknown>): void;
  readonly settings: PluginSettings<T>;
  readonly events: PluginEvents;
  /** The kernel's control methods (status, config, backup, plugins.*, ...) and the plugin's own. Built-in plugins only. */
  readonly control: PluginControl;
  readonly paths: PluginPaths;
  /** The plugin's own SQLite databases, listed with the kernel's for status, backup and restore. Built-in plugins only. */
  readonly database: PluginDatabases;
  readonly io: PluginIo;
  readonly tools: PluginTools;
  readonly stages: PluginStages;
  readonly memory: PluginMemory;
  readonly knowledge: PluginKnowledge;
  readonly media: PluginMedia;
  readonly entities: PluginEntities;
  readonly llm: PluginLlm;
  readonly http: PluginHttp;
  /** Bounded agent turns beside the conversation. Built-in plugins only (absent for external ones, and where the daemon has none). */
  readonly agent?: PluginAgent;
}

/** A health answer: `ok` false puts the plugin on the supervisor's list. */
export interface PluginHealth {
  ok: boolean;
  detail: string;
  /**
   * The detail in Chinese, shown where the health page or `homeagentctl health` speaks Chinese
   * (the English detail otherwise). Every built-in plugin gives one: it declares its answer as
   * `Required<PluginHealth>`.
   */
  detail_zh?: string;
}

export type PluginInstance = Omit<Service, 'name'> & {
  /** Answers the host's health ping; absent means "healthy while running". */
  health?(): PluginHealth | Promise<PluginHealth>;
};
export type PluginFactory<T extends object = UntypedSettings> = (context: PluginContext<T>) => PluginInstance;

export interface PluginModule {
  readonly kind: 'homeagent-plugin';
  readonly create: PluginFactory;
}

/**
 * Declares a plugin; the entry module's default export. `T` is its settings section's type
 * (`Static<typeof settingsSchema>`): the host hands every plugin the same untyped settings, whose
 * values the registry has checked against that very schema, so the one widening happens here.
 */
export function definePlugin<T extends object = UntypedSettings>(create: PluginFactory<T>): PluginModule {
  return { kind: 'homeagent-plugin', create: create as PluginFactory };
}

export function isPluginModule(value: unknown): value is PluginModule {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as PluginModule).kind === 'homeagent-plugin' &&
    typeof (value as PluginModule).create === 'function'
  );
}
