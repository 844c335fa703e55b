/**
 * The tool contract shared by everything that offers tools to the model (built-ins, the IO
 * manager's output_send tools, plugins, devices, memory and knowledge) and by the agent's tool
 * registry and loop. Pure types and helpers: no registry lives here.
 */
import type { Trust } from './trust.js';

/** A JSON Schema object describing a tool's arguments (`{"type":"object","properties":...}`). */
export type JsonSchema = Record<string, unknown>;

/** What a tool execution can see. */
export interface ToolContext {
  /** Aborted when the tool times out or the task is cancelled; long tools must honour it. */
  signal: AbortSignal;
  /** The task (one input being processed) this call belongs to. */
  task_id: string;
  /** The id the model gave this call. */
  call_id: string;
  /** The input being answered (what memory cites as the source of facts the tool stores); absent outside a turn. */
  input_id?: string;
  /** Where the input came from, and the channel its answer goes to by default. */
  source: string;
  channel: string;
  /**
   * The turn's trust when the call was made (the lowest trust of what entered it): what a tool
   * keeps for later (a timer's message) must not come back with more trust than it had.
   */
  trust: Trust;
  /**
   * Shows a stored image to the model in its next request of this turn (sources that take images);
   * others get a line saying a picture was stored and not shown. `digest` is the media store's
   * sha256 (PluginMedia.put); the image is read from the store. Absent outside an agent turn.
   */
  attachImage?(image: { digest: string; mime: string }): void;
}

/**
 * What a tool may do, declared by every tool. `read` only looks; `act` changes something in the
 * house or the daemon that is easy to undo (switch a light, set a timer); `dangerous` runs
 * programs, writes files, installs code or drives an output marked critical, and needs the
 * owner's approval unless pre-authorised (core.agent.preauthorized_tools) and asked for in a
 * turn only the owner's input entered. Tools of tier `act` asked for by an input below the owner's
 * trust run only where core.agent.household_act_tools / untrusted_act_tools allow them.
 */
export type ToolTier = 'read' | 'act' | 'dangerous';
export const TOOL_TIERS: readonly ToolTier[] = ['read', 'act', 'dangerous'];

export interface ToolDefinition<A = Record<string, unknown>> {
  /** `^[a-zA-Z0-9_-]{1,64}$`, unique across the registry. */
  name: string;
  description: string;
  /** JSON Schema of the arguments; checked (ajv) before `execute` runs. */
  parameters: JsonSchema;
  /** `core`, `io`, `plugin:<name>`, `device:<name>`: groups tools in the prompt and scopes stage hooks. */
  owner: string;
  /** What the tool may do; `dangerous` tools run only after confirmation. */
  tier: ToolTier;
  /**
   * The tier of one call, when it depends on the arguments (seq_run is as dangerous as the most
   * dangerous step of the sequence it names). The executor applies the trust policies and the
   * confirmation gate to this tier once the arguments are valid; `tier` is what holds before that.
   */
  tier_for?: (args: A) => ToolTier;
  /**
   * What the owner's approval request lists besides the arguments, one line per step, when the
   * arguments alone do not say what would run (seq_run names a sequence; these are its steps).
   */
  confirmation_detail?: (args: A) => string[];
  /** May run concurrently with other parallel-safe tools of the same reply. Default false. */
  parallel_safe?: boolean;
  /** Keep this tool's results out of memory text. */
  no_memory?: boolean;
  /** Cleans this tool's result text before it goes into memory. */
  cleaner?: (text: string) => string;
  /** Overrides core.agent.tool_timeout_ms for this tool. */
  timeout_ms?: number;
  /**
   * The arguments as they may be shown anywhere outside the call itself (the audit record, log
   * lines, the confirmation request and pending list, the web page's events), for a tool whose
   * arguments can hold a secret: gets the parsed arguments (not yet validated, so check their
   * types) and returns them with each secret replaced by {@link SECRET_SHOWN}. `execute` still
   * gets the real ones. A function rather than a list of secret argument names because whether
   * an argument is secret can depend on another one (cfgmgr's `value` is secret when its `key`
   * names a secret setting); {@link hideArguments} makes one for arguments that always are. When
   * it throws, or the arguments do not parse, none of them are shown.
   */
  redact_arguments?: (args: Record<string, unknown>) => Record<string, unknown>;
  /** Returns any JSON-serialisable value, or throws a {@link ToolError} the model can read. */
  execute(args: A, context: ToolContext): unknown | Promise<unknown>;
}

/** What a secret argument is shown as: the mask the settings registry shows a secret setting as. */
export const SECRET_SHOWN = '********';

/** A {@link ToolDefinition.redact_arguments} for arguments that always hold a secret (`password`, `token`). */
export function hideArguments(...names: string[]): (args: Record<string, unknown>) => Record<string, unknown> {
  return (args) => {
    const shown = { ...args };
    for (const name of names) if (name in shown) shown[name] = SECRET_SHOWN;
    return shown;
  };
}

/** The tier of a call with valid `args`: the tool's own `tier_for`, or its declared tier (also when `tier_for` throws). */
export function callTier<A>(definition: Pick<ToolDefinition<A>, 'tier' | 'tier_for'>, args: A): ToolTier {
  if (!definition.tier_for) return definition.tier;
  try {
    const tier = definition.tier_for(args);
    return TOOL_TIERS.includes(tier) ? tier : definition.tier;
  } catch {
    return definition.tier;
  }
}

/** Why a tool call failed, as the model reads it. The list is closed. */
export const TOOL_ERROR_REASONS = [
  'required',
  'type',
  'enum',
  'format',
  'range',
  'unauthorized',
  'timeout',
  'not_found',
  'rejected',
  'capability',
  'confirmation_required',
  'unavailable',
  'failed',
] as const;
export type ToolErrorReason = (typeof TOOL_ERROR_REASONS)[number];

/** A tool failure as the model reads it: what went wrong, where, and what to do instead. */
export interface ToolErrorInfo {
  reason: ToolErrorReason;
  /** The argument concerned, if any (`brightness`, `payload`). */
  field?: string;
  detail: string;
  /** What the model can do about it (`call output_list_channels to see the channels`). */
  hint?: string;
}

export class ToolError extends Error {
  override readonly name = 'ToolError';
  readonly info: ToolErrorInfo;

  constructor(info: ToolErrorInfo) {
    super(info.detail);
    this.info = info;
  }
}

/** The result the model sees for a failed call: compact JSON, never an exception. */
export function toolErrorResult(info: ToolErrorInfo): string {
  return JSON.stringify({ ok: false, error: info });
}

/** True when a tool name matches one of the glob patterns (`*` = any run of characters). */
export function matchesToolName(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`).test(name));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
