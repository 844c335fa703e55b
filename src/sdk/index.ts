/**
 * The public SDK: the only kernel module that plugins (plugins/**) and device drivers (devices/**)
 * import. Everything here is a stable contract.
 */
export type { BoundedTurnEnd, BoundedTurnRequest, BoundedTurnResult } from '../agent/bounded-turn.js';
export { STAGES, type Stage, type StageContext, type StageHandler, type StageScope } from '../agent/types.js';
export type { ConfirmationRequest, EventMap, EventName } from '../events/event-bus.js';
export {
  type Area,
  CRITICAL_DOMAINS,
  DOMAIN_SERVICES,
  ENTITY_CATEGORIES,
  ENTITY_DOMAINS,
  type EntityCategory,
  type EntityContext,
  type EntityDefinition,
  type EntityDomain,
  type EntityFilter,
  type EntityHandle,
  type EntityInfo,
  type EntityState,
  isPrimaryEntity,
  STATE_CLASSES,
  STATE_OFF,
  STATE_ON,
  STATE_UNAVAILABLE,
  type StateClass,
  type StateHistoryRow,
} from '../home/types.js';
export type { LaterTarget } from '../io/later-delivery.js';
export {
  CAPABILITY,
  type InputEvent,
  type InputType,
  type Level,
  type OutputChannel,
  type OutputEvent,
  type OutputType,
  type Receipt,
} from '../io/types.js';
export type { ChatMessage, Usage } from '../llm/spec/index.js';
export type { Logger } from '../log/logger.js';
export { offeredTokens, randomToken, TokenCheck, WEAK_TOKEN_CHARS } from '../shared/access-token.js';
export { type BackoffBounds, backoffDelay, backoffRange, ReconnectBackoff } from '../shared/backoff.js';
export { ERROR_CODES, type ErrorCode, type ErrorEnvelope, HomeAgentError, isHomeAgentError, toErrorEnvelope } from '../shared/errors.js';
export { findOnPath, findProgram } from '../shared/find-on-path.js';
export { type Language, textLanguage } from '../shared/language.js';
export { type DecodedFrame, LineDecoder } from '../shared/line-decoder.js';
export { type AddressScope, addressScope, checkListenHost, urlHost } from '../shared/listen-address.js';
export { type Admitted, LogThrottle, type LogThrottleOptions } from '../shared/log-throttle.js';
export {
  locatePocketsphinxModel,
  POCKETSPHINX_DICTIONARY_FILE,
  POCKETSPHINX_PROGRAM,
  type PocketsphinxModelFiles,
} from '../shared/pocketsphinx-model.js';
export type { Service, ServiceState } from '../shared/service.js';
export { slugify } from '../shared/slug.js';
export {
  hideArguments,
  type JsonSchema,
  SECRET_SHOWN,
  TOOL_TIERS,
  type ToolContext,
  type ToolDefinition,
  ToolError,
  type ToolErrorInfo,
  type ToolErrorReason,
  type ToolTier,
} from '../shared/tool.js';
export { type InputSender, isTrust, lowerTrust, TRUST_LEVELS, type Trust, type TurnTrust, trustAtLeast } from '../shared/trust.js';
/** HomeAgent's version (package.json), e.g. for the firmware a bridge announces. */
export { VERSION as HOMEAGENT_VERSION } from '../shared/version.js';
/** Whether bytes are a picture the media store keeps (png, jpeg, gif, webp), by their first bytes. */
export { pictureMime } from '../store/media-store.js';
export type { Caller, ControlApi, ControlMethod, MethodInfo } from './control.js';
export {
  type Migration,
  openPluginDatabase,
  type PluginDatabase,
  type PluginDatabaseOptions,
  type PluginDatabaseRequest,
  type PluginDatabases,
  type Recovery,
  type SqlDatabase,
  type SqlRunResult,
  type SqlStatement,
} from './database.js';
export {
  definePlugin,
  type HttpRequest,
  type HttpResponse,
  type HttpRoute,
  isPluginModule,
  type KnowledgeCategoryCount,
  type KnowledgeHit,
  type KnowledgeSearchOptions,
  type KnowledgeTreeItem,
  type KnowledgeTreeNode,
  type KnowledgeTreeOptions,
  type MemoryItem,
  type PluginAgent,
  type PluginChatRequest,
  type PluginContext,
  type PluginControl,
  type PluginEntities,
  type PluginEvents,
  type PluginFactory,
  type PluginHealth,
  type PluginHttp,
  type PluginInput,
  type PluginInstance,
  type PluginIo,
  type PluginKnowledge,
  type PluginLlm,
  type PluginMedia,
  type PluginMemory,
  type PluginModule,
  type PluginPaths,
  type PluginSettings,
  type PluginStages,
  type PluginTools,
  type PluginTrust,
  type ServedRoute,
  type StoredMediaInfo,
  type ToolFacts,
  type Triple,
  type TypedPluginSettings,
  type UntypedPluginSettings,
  type UntypedSettings,
} from './plugin.js';
export {
  NAMED_ONLY,
  pluginEnabled,
  pluginMeta,
  type SettingKey,
  type SettingMeta,
  type SettingValue,
  SLUG,
  settingMeta,
} from './settings.js';
