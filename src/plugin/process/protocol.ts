/**
 * The message vocabulary between the daemon (host) and an out-of-process plugin (child): JSON-RPC
 * 2.0 over the child's stdin (host → child) and stdout (child → host), one object per line
 * (rpc-peer.ts carries it).
 *
 * Host → child messages come from the daemon and are only typed. Child → host messages come from
 * untrusted code, so each has a schema here that the host checks before acting on it; the host then
 * calls the plugin's real (restricted) context, which decides what the plugin may do. The child
 * runtime imports this module for its types only (`import type`), so TypeBox never loads there.
 *
 * Registrations (tools, stage hooks, subscriptions, output channels, HTTP routes) are
 * notifications: the SDK's register calls return at once, so the child could not act on an answer.
 * The host records a registration it refuses; during start that refusal fails the start.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { StageContext } from '../../agent/types.js';
import type { Area, EntityInfo, StateHistoryRow } from '../../home/types.js';
import type { OutputEvent, Receipt } from '../../io/types.js';
import type { MethodInfo } from '../../sdk/control.js';
import type {
  HttpRequest,
  HttpResponse,
  KnowledgeCategoryCount,
  KnowledgeHit,
  KnowledgeTreeNode,
  MemoryItem,
  PluginHealth,
  PluginLlm,
  PluginPaths,
  PluginTrust,
} from '../../sdk/plugin.js';
import { TOOL_ERROR_REASONS } from '../../shared/tool.js';
import type { Trust } from '../../shared/trust.js';

export { MAX_FRAME_BYTES, PROTOCOL_VERSION } from './rpc-peer.js';

// ---------------------------------------------------------------------------------------------
// Host → child

export interface InitParams {
  /** {@link PROTOCOL_VERSION} of the host; the child refuses another one. */
  protocol: number;
  name: string;
  trust: PluginTrust;
  /** Absolute path of the entry module. */
  entry: string;
  paths: PluginPaths;
  /** The plugin's settings (`plugin.<name>.<key>` for each key its manifest defines), kept current by `settings.changed`. */
  settings: Record<string, unknown>;
  /** What `control.methods()` answers in the child (empty for plugins without the control API). */
  control_methods: MethodInfo[];
  /** What `knowledge.available()` answers in the child (the library was open when the plugin started). */
  knowledge_available: boolean;
  /** Log lines below this level are not sent. */
  log_level: string;
}

export interface ToolCallParams {
  name: string;
  args: unknown;
  context: { task_id: string; call_id: string; source: string; channel: string; trust: Trust };
}

/** `value` is absent when the tool returned nothing. */
export interface ToolCallResult {
  value?: unknown;
}

export interface StageRunParams {
  /** The id the child gave the hook when it registered it. */
  id: number;
  /** A JSON copy of the turn's StageContext. */
  context: StageContext;
}

/** Requests the host sends, with their results. */
export interface HostRequests {
  'plugin.init': { params: InitParams; result: Record<string, never> };
  'plugin.start': { params: Record<string, never>; result: Record<string, never> };
  'plugin.stop': { params: Record<string, never>; result: Record<string, never> };
  'plugin.health': { params: Record<string, never>; result: PluginHealth };
  'tool.call': { params: ToolCallParams; result: ToolCallResult };
  'stage.run': { params: StageRunParams; result: StageChanges };
  'channel.send': { params: { name: string; event: OutputEvent }; result: Record<string, never> };
  'http.request': { params: { id: number; request: HttpRequest }; result: HttpResponse };
}

/** Notifications the host sends. */
export interface HostNotifications {
  /** The tool call with this request id was cancelled (timeout or task cancelled): abort its signal. */
  'tool.cancel': { id: number };
  /** An event for the subscription the child registered with this id. */
  event: { id: number; payload: unknown };
  /** One of the plugin's settings changed; `value` is its new value. */
  'settings.changed': { key: string; value: unknown };
}

export type HostRequestName = keyof HostRequests;

// ---------------------------------------------------------------------------------------------
// Child → host (untrusted: every params object is checked against its schema)

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Text = (maxLength: number) => Type.String({ maxLength });
const Id = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const JsonObject = Type.Record(Type.String(), Type.Unknown());
const strict = { additionalProperties: false };

export const WireToolDefinitionSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    description: Text(8000),
    parameters: JsonObject,
    tier: Type.Union([Type.Literal('read'), Type.Literal('act'), Type.Literal('dangerous')]),
    parallel_safe: Type.Optional(Type.Boolean()),
    no_memory: Type.Optional(Type.Boolean()),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400_000 })),
  },
  strict,
);
/** A tool definition as it crosses the wire: everything but `execute` (which stays in the child) and `cleaner`. */
export type WireToolDefinition = Static<typeof WireToolDefinitionSchema>;

const PluginInputSchema = Type.Object(
  {
    source: Type.Optional(Name),
    channel: Name,
    /** What the plugin says of the sender; the host makes it untrusted (external plugins vouch for no one). */
    sender: Type.Optional(
      Type.Object(
        {
          trust: Type.Union([Type.Literal('owner'), Type.Literal('household'), Type.Literal('untrusted')]),
          id: Text(128),
          proof: Text(256),
          shared: Type.Optional(Type.Boolean()),
        },
        strict,
      ),
    ),
    type: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('audio'), Type.Literal('image'), Type.Literal('structured')])),
    payload: Type.Unknown(),
    meta: Type.Optional(JsonObject),
  },
  strict,
);

const LimitOptions = Type.Optional(Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }, strict));

export const ChildNotificationSchemas = {
  'tools.register': Type.Object({ definition: WireToolDefinitionSchema }, strict),
  'tools.unregister': Type.Object({ name: Name }, strict),
  'stages.register': Type.Object(
    { id: Id, stage: Name, scope: Type.Optional(Type.Union([Type.Literal('global'), Type.Literal('own_tools')])) },
    strict,
  ),
  'stages.unregister': Type.Object({ id: Id }, strict),
  'events.subscribe': Type.Object({ id: Id, event: Name }, strict),
  'events.unsubscribe': Type.Object({ id: Id }, strict),
  'io.registerOutputChannel': Type.Object(
    {
      channel: Type.Object(
        {
          name: Name,
          description: Text(2000),
          capabilities: Type.Integer({ minimum: 0, maximum: 0xffff }),
          synchronous: Type.Boolean(),
          critical: Type.Optional(Type.Boolean()),
        },
        strict,
      ),
    },
    strict,
  ),
  'io.unregisterOutputChannel': Type.Object({ name: Name }, strict),
  'http.route': Type.Object(
    {
      id: Id,
      method: Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('DELETE'), Type.Literal('PATCH')]),
      path: Text(1000),
    },
    strict,
  ),
  'http.unroute': Type.Object({ id: Id }, strict),
  log: Type.Object(
    {
      level: Type.Union(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((l) => Type.Literal(l))),
      msg: Text(16_000),
      fields: Type.Optional(JsonObject),
    },
    strict,
  ),
  audit: Type.Object({ action: Type.String({ minLength: 1, maxLength: 200 }), details: Type.Optional(JsonObject) }, strict),
  /** Cancels the child's own request with this id (an aborted llm.chat). */
  'rpc.cancel': Type.Object({ id: Id }, strict),
} satisfies Record<string, TSchema>;

export const ChildRequestSchemas = {
  'io.injectInput': Type.Object({ input: PluginInputSchema }, strict),
  /** The level goes to the host context unchanged: clamping by trust is the host's job. */
  'io.injectInterrupt': Type.Object(
    { input: PluginInputSchema, level: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4)]) },
    strict,
  ),
  'settings.set': Type.Object({ key: Name, value: Type.Unknown() }, strict),
  'memory.recall': Type.Object({ query: Text(10_000), options: LimitOptions }, strict),
  'memory.commit': Type.Object(
    {
      triples: Type.Array(
        Type.Object(
          {
            subject: Text(1000),
            relation: Text(1000),
            object: Text(1000),
            confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          },
          strict,
        ),
        { maxItems: 1000 },
      ),
      options: Type.Optional(Type.Object({ source: Type.Optional(Name) }, strict)),
    },
    strict,
  ),
  'knowledge.search': Type.Object(
    {
      query: Text(10_000),
      options: Type.Optional(
        Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })), category: Type.Optional(Name) }, strict),
      ),
    },
    strict,
  ),
  'knowledge.list': Type.Object({ category: Type.Optional(Name) }, strict),
  'knowledge.tree': Type.Object(
    {
      options: Type.Optional(
        Type.Object(
          {
            category: Type.Optional(Name),
            max_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
            include_items: Type.Optional(Type.Boolean()),
            preview_limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
          },
          strict,
        ),
      ),
    },
    strict,
  ),
  'knowledge.categories': Type.Object({}, strict),
  'knowledge.counts': Type.Object({}, strict),
  'knowledge.add': Type.Object(
    { name: Name, content: Type.String(), options: Type.Optional(Type.Object({ overwrite: Type.Optional(Type.Boolean()) }, strict)) },
    strict,
  ),
  'entities.list': Type.Object(
    { filter: Type.Optional(Type.Object({ domain: Type.Optional(Name), area: Type.Optional(Name), owner: Type.Optional(Name) }, strict)) },
    strict,
  ),
  'entities.get': Type.Object({ reference: Text(256) }, strict),
  'entities.history': Type.Object(
    {
      entity_id: Name,
      options: Type.Optional(
        Type.Object(
          { from: Type.Optional(Type.Number()), to: Type.Optional(Type.Number()), limit: Type.Optional(Type.Integer({ minimum: 1 })) },
          strict,
        ),
      ),
    },
    strict,
  ),
  'entities.areas': Type.Object({}, strict),
  'llm.chat': Type.Object(
    {
      messages: Type.Array(JsonObject, { minItems: 1, maxItems: 1000 }),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    },
    strict,
  ),
  'events.publish': Type.Object({ event: Name, payload: Type.Unknown() }, strict),
  'control.call': Type.Object({ method: Name, params: Type.Unknown() }, strict),
} satisfies Record<string, TSchema>;

export type ChildNotificationName = keyof typeof ChildNotificationSchemas;
export type ChildRequestName = keyof typeof ChildRequestSchemas;
export type ChildNotificationParams<M extends ChildNotificationName> = Static<(typeof ChildNotificationSchemas)[M]>;
export type ChildRequestParams<M extends ChildRequestName> = Static<(typeof ChildRequestSchemas)[M]>;

/** What each child request resolves with. */
export interface ChildRequestResults {
  'io.injectInput': Receipt;
  'io.injectInterrupt': Receipt;
  'settings.set': Record<string, never>;
  'memory.recall': MemoryItem[];
  'memory.commit': Record<string, never>;
  'knowledge.search': KnowledgeHit[];
  'knowledge.list': Array<{ name: string; category: string }>;
  'knowledge.tree': KnowledgeTreeNode;
  'knowledge.categories': string[];
  'knowledge.counts': KnowledgeCategoryCount[];
  'knowledge.add': Record<string, never>;
  'entities.list': EntityInfo[];
  'entities.get': EntityInfo;
  'entities.history': StateHistoryRow[];
  'entities.areas': Area[];
  'llm.chat': Awaited<ReturnType<PluginLlm['chat']>>;
  'events.publish': Record<string, never>;
  'control.call': unknown;
}

// ---------------------------------------------------------------------------------------------
// Results of host requests that the host must check (they come from the child too)

/**
 * What a stage hook changed, as the child computed it against the copy it was sent. `null` removes
 * `response` or `reject`. `extra` changes are per key and errors are only added, so hooks of one
 * stage running at the same time do not undo each other.
 */
export const StageChangesSchema = Type.Object(
  {
    response: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    reject: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    final_text: Type.Optional(Type.String()),
    tool_call_arguments: Type.Optional(Type.String()),
    extra_set: Type.Optional(JsonObject),
    extra_delete: Type.Optional(Type.Array(Type.String())),
    errors_added: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
  },
  strict,
);
export type StageChanges = Static<typeof StageChangesSchema>;

export const ToolCallResultSchema = Type.Object({ value: Type.Optional(Type.Unknown()) }, strict);

export const HealthResultSchema = Type.Object({ ok: Type.Boolean(), detail: Text(2000), detail_zh: Type.Optional(Text(2000)) });

export const HttpResponseSchema = Type.Object(
  {
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    body: Type.Optional(Type.Unknown()),
  },
  strict,
);

export const ToolErrorInfoSchema = Type.Object({
  reason: Type.Union(TOOL_ERROR_REASONS.map((r) => Type.Literal(r))),
  field: Type.Optional(Text(200)),
  detail: Text(4000),
  hint: Type.Optional(Text(2000)),
});
