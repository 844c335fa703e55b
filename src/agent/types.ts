/**
 * Contracts inside the agent: stage hooks, the tool registry and the tool executor. The agent
 * loop (agent.ts) drives them; plugins reach them through the SDK.
 */
import type { InputEvent } from '../io/types.js';
import type { ChatMessage, ToolCall, ToolSpec, Usage } from '../llm/spec/index.js';
import type { ToolDefinition, ToolErrorInfo, ToolTier } from '../shared/tool.js';
import type { TurnTrust } from '../shared/trust.js';

/** The seven stages, in the order a turn passes them. The list is closed. */
export const STAGES = [
  'on_input',
  'pre_action',
  'post_action',
  'before_toolcall',
  'after_toolcall',
  'before_output',
  'after_output',
] as const;
export type Stage = (typeof STAGES)[number];

/** `global` handlers see every event of their stage; `own_tools` ones only calls of their owner's tools. */
export type StageScope = 'global' | 'own_tools';

/** The result of one tool call as the loop records it. */
export interface ToolOutcome {
  call: ToolCall;
  ok: boolean;
  /** What the model sees (JSON text, capped). */
  content: string;
  error?: ToolErrorInfo;
  duration_ms: number;
  /** The tool itself ran (its output, or its own error, entered the turn); false when it was refused before running. */
  executed: boolean;
}

/**
 * What stage handlers see and may change. Setting `response` in any stage ends the turn: the
 * loop skips to `after_output` with that text. Handlers of one stage run concurrently, so they
 * should change only the fields their stage is about.
 */
export interface StageContext {
  readonly stage: Stage;
  readonly task_id: string;
  readonly input: InputEvent;
  /** The turn's trust so far; the kernel lowers it as memory and tool output enter the turn. */
  readonly trust: TurnTrust;
  /** The messages sent to the model (pre_action may add system messages). */
  messages: ChatMessage[];
  /** post_action: the model's text and tool calls of this round (may be filtered). */
  llm_text: string;
  reasoning: string;
  tool_calls: ToolCall[];
  /** before_toolcall / after_toolcall: the call concerned. Args may be replaced in before_toolcall. */
  tool_call?: ToolCall;
  /**
   * before_toolcall / after_toolcall: what the called tool may do, so a hook can apply a per-person
   * policy (a chat channel lets only owners act on the house).
   */
  tool_tier?: ToolTier;
  /** before_toolcall: set to reject the call with this reason (the model reads it). */
  reject?: string;
  /** after_toolcall: the outcome, whose content may be rewritten. */
  tool_outcome?: ToolOutcome;
  tool_results: ToolOutcome[];
  /** before_output: the final text (may be reformatted). */
  final_text: string;
  /** Set to short-circuit the turn with this answer. */
  response?: string;
  /**
   * The answer if no language model can be reached this turn (on_input may set it: the local
   * intent engine's "did you mean" is more use than "the model is down").
   */
  fallback?: string;
  usage: Usage;
  /** Free space for hooks to pass data along a turn. */
  extra: Record<string, unknown>;
  /** Problems hooks reported (kept for the receipt and the logs). */
  errors: string[];
}

export type StageHandler = (context: StageContext) => void | Promise<void>;

export interface StageRegistration {
  owner: string;
  stage: Stage;
  scope: StageScope;
  handler: StageHandler;
}

/** A tool as the model is offered it, with its owner for the prompt's per-owner summary. */
export interface ToolListing extends ToolSpec {
  owner: string;
  tier: ToolTier;
}

/** Tools offered by a subsystem whose set changes (the IO manager's output_send tools, a plugin). */
export interface ToolProvider {
  readonly owner: string;
  tools(): readonly ToolDefinition[];
}

export interface ExecuteOptions {
  task_id: string;
  input: InputEvent;
  /** Aborted when the task is cancelled; every running tool's signal follows it. */
  signal: AbortSignal;
  /** Run before_toolcall/after_toolcall hooks with this base context. */
  stageContext: StageContext;
  /** The owner confirmed these calls (`/confirm <code>`): dangerous tools run without asking again. */
  confirmed?: boolean;
  /** The output channel that answers the input: sending to it is answering, which anyone who may talk may have. */
  answer_channel?: string;
  /** Receives the pictures tools attach (ToolContext.attachImage), with the attaching tool's name; absent: tools get no attachImage. */
  attachImage?: (tool: string, image: { digest: string; mime: string }) => void;
}
