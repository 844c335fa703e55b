/**
 * A bounded agent turn that runs beside the conversation instead of in it: the subagents plugin's
 * children (spawn_child) work on a task while the person goes on talking, so their turns cannot
 * wait in the input scheduler's one lane, and the scheduler's turn (agent.ts) would also record
 * the task as something the household said, answer on the channel and keep it in the history.
 *
 * What it shares with a conversation's turn is what makes it safe: the one tool registry and the
 * one tool executor, so every call passes the same stage hooks, argument checks, trust policies
 * (the act policy by the sender's trust) and the owner's confirmation gate. A dangerous call is
 * held for the owner like any other; this turn never matches approval codes, so it can never
 * approve its own call. Tool output lowers the turn's trust as in any turn (the executor does it).
 *
 * Its bounds: tool rounds (then one round without tools to answer, as in agent.ts), total tokens
 * over all its requests (each request may not ask for more than is left), the tools it is neither
 * offered nor allowed to call (a call by name to one of them is refused without running), and the
 * caller's signal (wall time, shutdown). Nothing here throws out of `run`: every end is a result.
 */
import {
  addUsage,
  collectStream,
  EMPTY_USAGE,
  type GenerateResult,
  type LanguageModel,
  type ToolCall,
  type Usage,
} from '../llm/spec/index.js';
import type { Logger } from '../log/logger.js';
import { describeError } from '../shared/errors.js';
import { matchesToolName, type ToolErrorReason, toolErrorResult } from '../shared/tool.js';
import type { InputSender, Trust } from '../shared/trust.js';
import { newStageContext } from './agent.js';
import type { ToolExecutor } from './tool-executor.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ToolOutcome } from './types.js';

/** One bounded turn, as a plugin asks for it (PluginAgent.runTurn). */
export interface BoundedTurnRequest {
  /** The turn's id: the confirmation gate keys held calls by it, and logs name it. */
  task_id: string;
  /** The system prompt: who the turn is and what it is for. */
  system: string;
  /** The one user message: the task. */
  text: string;
  /** The conversation the turn works for: its tools see this source and channel (a timer it sets rings there). */
  source: string;
  channel: string;
  /**
   * Whom the turn acts for. Its trust is where the turn's trust starts and what the act policy
   * checks; `shared: true` keeps approval codes out of everything the turn's answer reaches.
   */
  sender: InputSender;
  /** Tool-name patterns (`*` wildcard) the turn is neither offered nor allowed to call. */
  exclude_tools: readonly string[];
  /** Model rounds with tool calls at most; then one round without tools to answer. At least 1. */
  max_rounds: number;
  /** Tokens (prompt + completion, as the vendor counts them) of all the turn's requests together. */
  max_total_tokens: number;
  /** Aborts the turn (the caller's wall time, shutdown): the model request is cancelled, running tools are told to stop. */
  signal: AbortSignal;
}

/** How a bounded turn ended. */
export type BoundedTurnEnd = 'answered' | 'max_rounds' | 'tokens' | 'aborted' | 'model_error';

export interface BoundedTurnResult {
  /** The model's last text ('' when it gave none). */
  text: string;
  ended_by: BoundedTurnEnd;
  /** Model requests made. */
  requests: number;
  /** Rounds whose tool calls were run. */
  tool_rounds: number;
  usage: Usage;
  /** Every call the model made, in order, and how it went. */
  tool_calls: Array<{ name: string; ok: boolean; reason?: ToolErrorReason }>;
  /** Tools whose calls wait for the owner's approval (the gate holds them; the owner was asked). */
  awaiting_approval: string[];
  /** The turn's trust at its end: the lowest of what entered it. */
  trust: Trust;
  /** What went wrong, for `model_error`. */
  error?: string;
}

export interface BoundedTurnRunnerOptions {
  model: LanguageModel;
  registry: ToolRegistry;
  executor: Pick<ToolExecutor, 'executeBatch'>;
  /** The request settings every turn uses (core.llm.temperature / max_tokens), read per request. */
  limits: () => { temperature: number; max_tokens: number };
  log: Logger;
  now: () => number;
}

export class BoundedTurnRunner {
  readonly #o: BoundedTurnRunnerOptions;

  constructor(options: BoundedTurnRunnerOptions) {
    this.#o = options;
  }

  /** The tools a turn excluding `patterns` is offered, by name. */
  offered(patterns: readonly string[]): string[] {
    return this.#o.registry
      .specs()
      .filter((spec) => !matchesToolName(spec.name, patterns))
      .map((spec) => spec.name);
  }

  async run(request: BoundedTurnRequest): Promise<BoundedTurnResult> {
    const { task_id, signal } = request;
    const maxRounds = Math.max(1, Math.floor(request.max_rounds));
    const input = {
      id: task_id,
      source: request.source,
      channel: request.channel,
      sender: { ...request.sender },
      type: 'text' as const,
      payload: request.text,
      // Nothing of this turn is the household's own words: keep it out of memory.
      meta: { no_memory: true, bounded_turn: true },
      received_at: this.#o.now(),
      level: 0 as const,
    };
    const ctx = newStageContext(task_id, input);
    ctx.messages = [
      { role: 'system', content: request.system },
      { role: 'user', content: request.text },
    ];
    const result: BoundedTurnResult = {
      text: '',
      ended_by: 'answered',
      requests: 0,
      tool_rounds: 0,
      usage: { ...EMPTY_USAGE },
      tool_calls: [],
      awaiting_approval: [],
      trust: ctx.trust.level,
    };
    const end = (ended_by: BoundedTurnEnd, error?: string): BoundedTurnResult => {
      result.ended_by = ended_by;
      result.trust = ctx.trust.level;
      if (error !== undefined) result.error = error;
      this.#o.log.info(
        { task_id, ended_by, requests: result.requests, tool_rounds: result.tool_rounds, usage: result.usage, ...(error ? { error } : {}) },
        `bounded turn ${task_id} ended: ${ended_by}`,
      );
      return result;
    };

    let final = false;
    for (;;) {
      if (signal.aborted) return end('aborted');
      const left = request.max_total_tokens - result.usage.total_tokens;
      if (left <= 0) return end('tokens');
      const { temperature, max_tokens } = this.#o.limits();
      const specs = this.#o.registry.specs().filter((spec) => !matchesToolName(spec.name, request.exclude_tools));
      let reply: GenerateResult;
      try {
        result.requests++;
        // Streamed like a conversation's turn (agent.ts), so it takes the same path through every vendor.
        const parts = this.#o.model.stream({
          messages: ctx.messages,
          ...(specs.length > 0 ? { tools: specs, tool_choice: final ? ('none' as const) : ('auto' as const) } : {}),
          temperature,
          // One answer may not spend more than the turn has left.
          max_tokens: Math.max(1, Math.min(max_tokens, left)),
          signal,
        });
        reply = await collectStream(parts, this.#o.model.model);
      } catch (error) {
        if (signal.aborted) return end('aborted');
        return end('model_error', describeError(error));
      }
      result.usage = addUsage(result.usage, reply.usage);
      result.text = reply.text;
      const calls = final ? [] : reply.tool_calls;
      if (calls.length === 0) return end(final ? 'max_rounds' : 'answered');
      if (result.usage.total_tokens >= request.max_total_tokens) return end('tokens');

      ctx.messages.push({ role: 'assistant', content: reply.text, tool_calls: calls });
      const outcomes = await this.#runCalls(calls, request, ctx);
      result.tool_rounds++;
      for (const outcome of outcomes) {
        ctx.messages.push({ role: 'tool', tool_call_id: outcome.call.id, name: outcome.call.name, content: outcome.content });
        result.tool_calls.push({
          name: outcome.call.name,
          ok: outcome.ok,
          ...(outcome.error ? { reason: outcome.error.reason } : {}),
        });
        if (outcome.error?.reason === 'confirmation_required' && !result.awaiting_approval.includes(outcome.call.name))
          result.awaiting_approval.push(outcome.call.name);
      }
      if (outcomes.short_circuit !== undefined) {
        result.text = outcomes.short_circuit;
        return end('answered');
      }
      if (result.tool_rounds >= maxRounds) {
        final = true;
        ctx.messages.push({ role: 'system', content: lastRoundNote(maxRounds) });
      }
    }
  }

  /** Runs a round's calls in order: excluded tools are refused here, the rest go through the executor. */
  async #runCalls(
    calls: ToolCall[],
    request: BoundedTurnRequest,
    ctx: ReturnType<typeof newStageContext>,
  ): Promise<ToolOutcome[] & { short_circuit?: string }> {
    const allowed = calls.filter((call) => !matchesToolName(call.name, request.exclude_tools));
    const batch =
      allowed.length === 0
        ? { outcomes: [] as ToolOutcome[] }
        : await this.#o.executor.executeBatch(allowed, {
            task_id: request.task_id,
            input: ctx.input,
            signal: request.signal,
            stageContext: ctx,
          });
    const byCall = new Map(batch.outcomes.map((outcome) => [outcome.call, outcome]));
    const outcomes: ToolOutcome[] & { short_circuit?: string } = calls.map(
      (call) => byCall.get(call) ?? byId(batch.outcomes, call) ?? refused(call),
    );
    ctx.tool_results.push(...outcomes);
    if ('short_circuit' in batch && batch.short_circuit !== undefined) outcomes.short_circuit = batch.short_circuit;
    return outcomes;
  }
}

function byId(outcomes: readonly ToolOutcome[], call: ToolCall): ToolOutcome | undefined {
  return outcomes.find((outcome) => outcome.call.id === call.id && outcome.call.name === call.name);
}

/** A call of a tool this turn may not use: refused as unknown, never run. */
function refused(call: ToolCall): ToolOutcome {
  const info = {
    reason: 'not_found' as const,
    detail: `no tool named ${JSON.stringify(call.name)} is available here`,
    hint: 'use only the tools you are offered',
  };
  return { call, ok: false, content: toolErrorResult(info), error: info, duration_ms: 0, executed: false };
}

function lastRoundNote(rounds: number): string {
  return `You have used the ${rounds} tool rounds allowed for this task. Answer now without tools: what you found, what is done and what is not.`;
}
