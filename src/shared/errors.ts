/**
 * The error catalogue. Every error HomeAgent throws on purpose is a {@link HomeAgentError} with a
 * stable code from {@link ERROR_CODES}; transports (CLI socket, HTTP, MQTT) turn it into the one
 * envelope `{ok:false, error:{code, message}}`. Codes are never reused for another meaning.
 * The kernel's codes are written here; each built-in plugin and device writes its own in its folder
 * (error-codes.ts) and they join through the generated index src/shared/plugin-error-codes.ts, so
 * that adding a device does not touch the kernel.
 */
import type { ErrorEnvelope } from '../api/errors.js';
import * as pluginErrorCodes from './plugin-error-codes.js';

export type { ErrorEnvelope };

const KERNEL_ERROR_CODES = {
  HA_ERR_INTERNAL: 'an unexpected internal error',
  HA_ERR_ABORTED: 'the operation was cancelled because HomeAgent is shutting down',

  HA_ERR_CONFIG_FILE: 'a configuration file could not be read or parsed',
  HA_ERR_CONFIG_INVALID: 'the configuration does not match the schema',
  HA_ERR_CONFIG_VERSION: 'the configuration file is written for a newer HomeAgent',

  HA_ERR_SETTINGS_UNKNOWN_KEY: 'no setting with that key is defined',
  HA_ERR_SETTINGS_INVALID_VALUE: 'the value does not fit the setting definition',
  HA_ERR_SETTINGS_FILE_ONLY: 'the setting can only be changed in the configuration file or environment',
  HA_ERR_SETTINGS_DEFINITION: 'a setting definition is malformed or clashes with another one',

  HA_ERR_STORE_OPEN: 'a database could not be opened',
  HA_ERR_STORE_MIGRATION: 'a database migration failed and was rolled back',
  HA_ERR_STORE_TOO_NEW: 'a database was written by a newer HomeAgent version',
  HA_ERR_STORE_BACKUP: 'a database backup failed',
  HA_ERR_STORE_RESTORE: 'a database restore failed',
  HA_ERR_STORE_FULL: 'the disk is full: a database or data file could not be written, and nothing of that change was kept',
  HA_ERR_STORE_WRITE: 'a database or data file could not be written (read-only file system or a disk error)',

  HA_ERR_RPC_BAD_REQUEST: 'the request is not a valid JSON request object',
  HA_ERR_RPC_FRAME_TOO_LARGE: 'the request frame exceeds the size limit',
  HA_ERR_RPC_UNKNOWN_METHOD: 'no method with that name exists',
  HA_ERR_RPC_INVALID_PARAMS: 'the method parameters are invalid',
  HA_ERR_RPC_BUSY: 'too many connections',
  HA_ERR_RPC_FORBIDDEN: 'only the owner may call this method',

  HA_ERR_DAEMON_ALREADY_RUNNING: 'another HomeAgent daemon is using this data directory',
  HA_ERR_DAEMON_NOT_RUNNING: 'the HomeAgent daemon is not running',
  HA_ERR_DAEMON_WIRING: 'a part of the daemon was used before the part it depends on was composed',

  HA_ERR_SERVICE_START: 'a service failed to start',

  HA_ERR_LLM_UNAVAILABLE: 'no language model is configured',
  HA_ERR_LLM_ALL_FAILED: 'every configured language model failed',
  HA_ERR_LLM_AUTH: 'the language model rejected the credentials',
  HA_ERR_LLM_RATE_LIMITED: 'the language model is rate limiting requests',
  HA_ERR_LLM_SERVER: 'the language model service failed',
  HA_ERR_LLM_TIMEOUT: 'the language model did not answer in time',
  HA_ERR_LLM_NETWORK: 'the language model could not be reached',
  HA_ERR_LLM_BAD_RESPONSE: 'the language model answered with something that could not be understood',
  HA_ERR_LLM_BAD_REQUEST: 'the language model refused the request as invalid',
  HA_ERR_LLM_ABORTED: 'the language model request was cancelled',

  HA_ERR_LUA_LOAD: 'a Lua script could not be loaded',
  HA_ERR_LUA_RUNTIME: 'a Lua script failed',
  HA_ERR_LUA_LIMIT: 'a Lua script exceeded its time or memory limit',

  HA_ERR_TOOL_NOT_FOUND: 'no tool with that name exists',
  HA_ERR_TOOL_INVALID_ARGS: 'the tool arguments do not match its schema',
  HA_ERR_TOOL_TIMEOUT: 'the tool did not finish in time and was cancelled',
  HA_ERR_TOOL_FAILED: 'the tool failed',
  HA_ERR_TOOL_REJECTED: 'a stage hook rejected the tool call',
  HA_ERR_TOOL_DEFINITION: 'a tool definition is invalid or clashes with another tool',

  HA_ERR_STAGE_UNKNOWN: 'no stage with that name exists',
  HA_ERR_STAGE_TIMEOUT: 'a stage hook did not finish within core.agent.stage_timeout_ms; the turn went on without it',

  HA_ERR_IO_CHANNEL_UNKNOWN: 'no output channel with that name exists',
  HA_ERR_IO_CAPABILITY: 'the output channel cannot carry that kind of content',
  HA_ERR_IO_DEFINITION: 'an output channel or route definition is invalid or clashes with another one',

  HA_ERR_INPUT_INVALID: 'the input event is malformed',
  HA_ERR_INPUT_QUEUE_FULL: 'the input queue is full',
  HA_ERR_INPUT_DROPPED: 'the input was dropped to make room for newer ones',

  HA_ERR_PLUGIN_MANIFEST: 'a plugin manifest is missing or invalid',
  HA_ERR_PLUGIN_LOAD: 'a plugin could not be loaded',
  HA_ERR_PLUGIN_START: 'a plugin failed to start',
  HA_ERR_PLUGIN_NOT_FOUND: 'no plugin with that name is installed',
  HA_ERR_PLUGIN_PERMISSION: 'the plugin is not allowed to do that',
  HA_ERR_PLUGIN_DEAD: 'the plugin is not running (crashed, restarting or failed)',
  HA_ERR_PLUGIN_TIMEOUT: 'a call into the plugin did not finish in time',
  HA_ERR_PLUGIN_PROTOCOL: 'a plugin process sent a malformed or unexpected message',
  HA_ERR_PLUGIN_INSTALL: 'the plugin archive could not be installed',
  HA_ERR_PLUGIN_STATE: 'the plugin is not in a state that allows this',
  HA_ERR_SKILL_INVALID: 'a SKILL.md file is missing or invalid',
  HA_ERR_OPENCLAW_MANIFEST:
    'an OpenClaw-format plugin cannot be hosted: its openclaw.plugin.json or package.json says something HomeAgent cannot map (the field is named)',
  HA_ERR_OPENCLAW_UNSUPPORTED: 'an OpenClaw plugin registered something HomeAgent does not host (only agent tools of contracts.tools are)',

  HA_ERR_UNAVAILABLE: 'the service needed for this is not available in this daemon',
  HA_ERR_CONFIRMATION_REQUIRED: "the action needs the owner's confirmation first",
  HA_ERR_CONFIRMATION_UNKNOWN: 'no pending confirmation matches that code',

  HA_ERR_FILES_DENIED: 'the path is outside the allowed file roots',

  HA_ERR_EVAL_DATA: 'evaluation data is missing or does not have the expected shape',

  HA_ERR_KNOWLEDGE_NAME:
    'the knowledge entry or category name is not allowed (empty, too long, traversal, control characters, or a link leaving the library)',
  HA_ERR_KNOWLEDGE_NOT_FOUND: 'no knowledge entry or category with that name exists',
  HA_ERR_KNOWLEDGE_EXISTS: 'a knowledge entry with that name already exists (overwrite it explicitly)',
  HA_ERR_KNOWLEDGE_TOO_LARGE: 'the knowledge entry is larger than core.knowledge.max_entry_kb',
  HA_ERR_KNOWLEDGE_UNAVAILABLE: 'the knowledge library is not running',
  HA_ERR_MEDIA_TYPE: 'the file is not a supported image or audio format',
  HA_ERR_MEDIA_NOT_FOUND: 'the media store has no file with that digest',
  HA_ERR_MEDIA_TOO_LARGE: 'the media file is larger than the allowed size',

  HA_ERR_EMBED_CLOSED: 'the embedder was closed',
  HA_ERR_EMBED_OPTIONS: 'the embedder options are invalid',
  HA_ERR_EMBED_MODEL_MISSING: 'the model directory or one of its files is missing',
  HA_ERR_EMBED_MANIFEST: 'the manifest of a local model (embedder.json, parser.json) is invalid or does not match the model',
  HA_ERR_EMBED_MODEL_LOAD: 'a local ONNX model (embedder, dependency parser) or its tokenizer could not be loaded',
  HA_ERR_EMBED_OUTPUT_SHAPE: "a local model's output does not have the shape its manifest promises",
  HA_ERR_EMBED_FAILED: 'local model inference (embedding, parsing) failed',
  HA_ERR_EMBED_INSTALL: 'the model could not be installed',
  HA_ERR_EMBED_CHECKSUM: 'the sha256 checksum of the model does not match',

  HA_ERR_ENTITY_NOT_FOUND: 'no entity has that id, name or alias',
  HA_ERR_ENTITY_AMBIGUOUS: 'the name matches more than one entity; use the entity id or add the area',
  HA_ERR_ENTITY_DEFINITION: 'the entity definition is invalid or its id is taken by another owner',
  HA_ERR_ENTITY_SERVICE: 'the entity does not offer that service, or its data is invalid',
  HA_ERR_ENTITY_UNAVAILABLE: 'the entity is unavailable (its device does not answer)',
  HA_ERR_ENTITY_OVERRIDE: 'the new name, area or alias of an entity is invalid (empty, too long, or too many aliases)',
  HA_ERR_LIST_INVALID: 'a list name or item is empty, too long or has control characters',
  HA_ERR_LIST_FULL: 'the list, or the number of lists, is at its limit (core.lists.max_items_per_list, core.lists.max_lists)',
  HA_ERR_LIST_NOT_FOUND: 'no list has that name, or the list has no such item',
  HA_ERR_LIST_AMBIGUOUS: 'the item text matches more than one item on the list; say which one',
  HA_ERR_AUTOMATION_CONFIG: 'an automation rule is invalid',
  HA_ERR_AUTOMATION_NOT_FOUND: 'no automation has that id',

  HA_ERR_INPUT_DUPLICATE: 'the same input arrived again within core.agent.dedupe_window_ms and was skipped',
  HA_ERR_AGENT_TIMEOUT: 'the agent did not answer within the time the caller waits (the input keeps running)',
  HA_ERR_MEMORY_RAW_LOG: 'the raw conversation log could not be rewritten (the files named stay as they were)',
  HA_ERR_TRACKER_STATE:
    "the change tracker's state folder is damaged or misplaced (unreadable journal, state folder inside the plugins tree)",
  HA_ERR_TRACKER_MOUNT: 'the plugins overlay could not be mounted or unmounted (busy, or no privilege)',
  HA_ERR_CHANGE_NOT_FOUND: 'the change tracker has no change set with that id (it may have been pruned)',
  HA_ERR_CHANGE_STATE:
    'the change set cannot take that action in its state (already committed or rolled back, or a later change touched the same files)',
  HA_ERR_TRACKER_OFF: 'the change tracker is off (core.tracker.backend: off), so changes are neither recorded nor rolled back',
  HA_ERR_TRACKER_APPLY: 'the privileged tracker helper did not finish a commit or rollback of the plugins overlay (failed or timed out)',
  HA_ERR_INTENT_TEMPLATE: 'an intent sentence template has bad syntax or names an unknown or bad list',
  HA_ERR_MEMORY_NOT_FOUND: 'memory has no entity, relation, event or document with that name or id',
} as const;

type PluginErrorCodes = typeof pluginErrorCodes;
/** Every code some built-in plugin or device declares. */
type PluginErrorCode = { [Plugin in keyof PluginErrorCodes]: keyof PluginErrorCodes[Plugin] }[keyof PluginErrorCodes];

export type ErrorCode = keyof typeof KERNEL_ERROR_CODES | PluginErrorCode;

/** Every code with its meaning: the kernel's and the built-in plugins' alike. */
export const ERROR_CODES: Readonly<Record<ErrorCode, string>> = Object.freeze(joinCatalogue());

/** A code declared twice would give one code two meanings: refuse it when the module loads. */
function joinCatalogue(): Record<ErrorCode, string> {
  const catalogue: Record<string, string> = { ...KERNEL_ERROR_CODES };
  for (const [plugin, codes] of Object.entries(pluginErrorCodes)) {
    for (const [code, meaning] of Object.entries(codes)) {
      if (Object.hasOwn(catalogue, code)) throw new Error(`error code ${code} of the built-in ${plugin} is declared twice`);
      catalogue[code] = meaning;
    }
  }
  return catalogue as Record<ErrorCode, string>;
}

export class HomeAgentError extends Error {
  override readonly name = 'HomeAgentError';
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message?: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message ?? ERROR_CODES[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

export function isHomeAgentError(error: unknown, code?: ErrorCode): error is HomeAgentError {
  return error instanceof HomeAgentError && (code === undefined || error.code === code);
}

/** The one wire shape for errors. Unknown errors keep their message but get the internal code. */
export function toErrorEnvelope(error: unknown): ErrorEnvelope {
  if (error instanceof HomeAgentError) return { code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'HA_ERR_INTERNAL', message };
}

/** A readable one-line description of any thrown value, for logs and status lines. */
export function describeError(error: unknown): string {
  if (error instanceof HomeAgentError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}
