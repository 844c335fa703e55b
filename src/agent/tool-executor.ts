/**
 * Runs the tool calls of one model reply. Each call passes before_toolcall hooks (which may
 * rewrite its arguments, reject it or end the turn), argument validation, execution under a
 * timeout that really aborts the tool's signal, and after_toolcall hooks (which may rewrite the
 * result). Failures of any kind become outcomes the model can read; nothing here throws.
 *
 * Batch rule (kept from the original): the calls run concurrently, at most max_parallel_tools at a
 * time, only when there is more than one, every known tool is parallel_safe, and no two calls send
 * to the same output_send__<channel>; otherwise the whole batch runs serially in call order.
 * Outcomes always come back in call order.
 *
 * Arguments leave a call only as the tool lets them be shown (ToolDefinition.redact_arguments,
 * via {@link shownArguments}): the audit record, the confirmation gate and the events get that
 * view; only `execute` gets the real arguments.
 */
import type { ToolCall } from '../llm/spec/index.js';
import type { Logger } from '../log/logger.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import {
  callTier,
  matchesToolName,
  type ToolContext,
  type ToolDefinition,
  ToolError,
  type ToolErrorInfo,
  type ToolTier,
  toolErrorResult,
} from '../shared/tool.js';
import { type InputSender, lowerTurnTrust } from '../shared/trust.js';
import type { ConfirmationGate, PendingConfirmation } from './confirmation-gate.js';
import type { StageRegistry } from './stage-registry.js';
import { GET_PLUGIN_TOOLS, shownArguments, type ToolRegistry } from './tool-registry.js';
import type { ExecuteOptions, StageContext, ToolOutcome } from './types.js';

export const OUTPUT_SEND_PREFIX = 'output_send__';
/** Characters of a dangerous call's arguments its audit record keeps. */
const AUDIT_ARGUMENT_CHARS = 2000;
export const LIST_CHANNELS_TOOL = 'output_list_channels';

export interface ToolLimits {
  tool_timeout_ms: number;
  tool_output_max_chars: number;
  max_parallel_tools: number;
}

export interface ToolExecutorOptions {
  registry: ToolRegistry;
  stages: StageRegistry;
  /** Read at the start of every batch, so setting changes apply to the next reply. */
  limits: () => ToolLimits;
  log: Logger;
  /** Holds back dangerous calls until the owner confirms them; absent only in tests of other rules. */
  gate?: ConfirmationGate;
  /** Which `act` tools inputs below the owner's trust may run (core.agent.*_act_tools); default {@link DEFAULT_ACT_POLICY}. */
  actPolicy?: () => ActPolicy;
  /** Where the audit record of every dangerous call that runs goes (who asked, the turn's trust, what allowed it). */
  audit?: (record: { actor: string; action: string; [field: string]: unknown }) => void;
  /**
   * Runs around each tool's execute (the change tracker records what a call did to the plugins
   * tree). It must call `run` exactly once and hand back its result or error unchanged.
   */
  around?: ToolCallWrapper;
}

/** Who is calling a tool, for a ToolCallWrapper. */
export interface ToolCallInfo {
  tool: string;
  owner: string;
  task_id: string;
  source: string;
  channel: string;
}

export type ToolCallWrapper = (call: ToolCallInfo, run: () => Promise<unknown>) => Promise<unknown>;

/** Tool-name patterns (`*` wildcard) of tier `act` that an input of each trust below the owner's may run. */
export interface ActPolicy {
  household: readonly string[];
  untrusted: readonly string[];
}

/** The schema's defaults: the household may act; untrusted inputs may only switch non-critical entities. */
export const DEFAULT_ACT_POLICY: ActPolicy = { household: ['*'], untrusted: ['entity_call'] };

export type BatchMode = 'parallel' | 'serial';

export interface BatchResult {
  /** One per call, in call order. */
  outcomes: ToolOutcome[];
  /** How the batch ran (see the batch rule above). */
  mode: BatchMode;
  /**
   * Set when a before_toolcall or after_toolcall hook set `response`: the turn ends with this
   * text. Calls not yet started are not run (their outcomes say so); the earliest call's response wins.
   */
  short_circuit?: string;
}

/** What the calls of one batch share. */
interface BatchState {
  options: ExecuteOptions;
  limits: ToolLimits;
  /** Responses set by hooks, by call index. */
  responses: Map<number, string>;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

export class ToolExecutor {
  readonly #registry: ToolRegistry;
  readonly #around: ToolCallWrapper | undefined;
  readonly #stages: StageRegistry;
  readonly #limits: () => ToolLimits;
  readonly #log: Logger;
  readonly #gate: ConfirmationGate | undefined;
  readonly #actPolicy: () => ActPolicy;
  readonly #audit: ToolExecutorOptions['audit'];

  constructor(options: ToolExecutorOptions) {
    this.#audit = options.audit;
    this.#gate = options.gate;
    this.#actPolicy = options.actPolicy ?? (() => DEFAULT_ACT_POLICY);
    this.#around = options.around;
    this.#registry = options.registry;
    this.#stages = options.stages;
    this.#limits = options.limits;
    this.#log = options.log;
  }

  /** A call's arguments as they may be shown outside it (the web page's events, log lines): secrets masked. */
  shownArguments(call: Pick<ToolCall, 'name' | 'arguments'>): string {
    return shownArguments(this.#registry.get(call.name), call.arguments);
  }

  async executeBatch(calls: ToolCall[], options: ExecuteOptions): Promise<BatchResult> {
    const state: BatchState = { options, limits: this.#limits(), responses: new Map() };
    const definitions = calls.map((call) => this.#registry.get(call.name));
    const mode = batchMode(calls, definitions);
    const jobs = calls.map((call, index) => () => this.#runCall(call, definitions[index], index, state));
    const outcomes = mode === 'parallel' ? await runPool(jobs, state.limits.max_parallel_tools) : await runSerially(jobs);
    // What a tool returned may hold anyone's words (a web page, a file, a device's name): the
    // model reads it from now on, so the rest of the turn is trusted no further than that.
    for (const o of outcomes) if (o.executed) lowerTurnTrust(options.stageContext.trust, 'untrusted', `the output of ${o.call.name}`);

    this.#log.debug(
      {
        task_id: options.task_id,
        mode,
        calls: outcomes.map((o) => ({ tool: o.call.name, result: o.error?.reason ?? 'ok', duration_ms: o.duration_ms })),
      },
      `tool batch ran ${mode}`,
    );
    const first = [...state.responses.entries()].sort(([a], [b]) => a - b)[0];
    return { outcomes, mode, ...(first ? { short_circuit: first[1] } : {}) };
  }

  async #runCall(call: ToolCall, def: ToolDefinition | undefined, index: number, state: BatchState): Promise<ToolOutcome> {
    const started = performance.now();
    try {
      if (!def) return failedOutcome(call, notFound(call.name), started, state);
      if (state.responses.size > 0) return failedOutcome(call, TURN_ENDED, started, state);
      if (state.options.signal.aborted) return failedOutcome(call, CANCELLED, started, state);

      const context = callContext(state.options.stageContext, call, def.tier);
      const errorsBefore = context.errors.length;
      await this.#stages.run('before_toolcall', context, { toolOwner: def.owner });
      // A before_toolcall hook may be a policy (who may switch things): when one failed or hung,
      // a tool that changes something is refused rather than run unchecked. Reads go on.
      const hookFailure = def.tier === 'read' ? undefined : context.errors.slice(errorsBefore).join('; ') || undefined;
      // Hooks may replace the arguments; the id and name stay those the model used.
      const rewritten = context.tool_call?.arguments;
      const effective: ToolCall = { ...call, arguments: typeof rewritten === 'string' ? rewritten : call.arguments };
      if (context.response !== undefined) {
        state.responses.set(index, context.response);
        return failedOutcome(effective, TURN_ENDED, started, state);
      }

      let outcome: ToolOutcome;
      if (hookFailure !== undefined) {
        outcome = failedOutcome(
          effective,
          { reason: 'rejected', detail: `not run: a before_toolcall hook failed (${hookFailure})` },
          started,
          state,
        );
      } else if (context.reject !== undefined) {
        outcome = failedOutcome(
          effective,
          { reason: 'rejected', detail: context.reject || 'a stage hook rejected this call' },
          started,
          state,
        );
      } else {
        const { input, task_id, stageContext, confirmed } = state.options;
        const check = this.#registry.validate(def, effective.arguments);
        // A tool whose tier depends on its arguments (seq_run) meets the policies and the gate at this call's tier.
        const tier = check.ok ? callTier(def, check.args) : def.tier;
        const callDef = tier === def.tier ? def : { ...def, tier };
        const notPermitted = check.ok && !confirmed ? this.#actRefusal(callDef, input.sender, state.options.answer_channel) : undefined;
        const verdict =
          check.ok && !confirmed && !notPermitted
            ? this.#gate?.check(callDef, effective, { input, task_id, trust: stageContext.trust })
            : undefined;
        if (!check.ok) outcome = failedOutcome(effective, check.error, started, state);
        else if (notPermitted) {
          this.#log.info(
            { task_id, tool: def.name, sender: input.sender.id, trust: input.sender.trust },
            'act tool refused for the sender',
          );
          outcome = failedOutcome(effective, notPermitted, started, state);
        } else if (verdict && !verdict.allowed) {
          this.#log.info(
            { task_id, tool: def.name, channel: input.channel, trust: stageContext.trust.level, inline: verdict.pending.inline },
            "dangerous tool call awaits the owner's confirmation",
          );
          outcome = failedOutcome(effective, awaitingConfirmation(verdict.pending), started, state);
        } else {
          if (tier === 'dangerous') {
            // Whatever let it through, a dangerous call that runs leaves a record of who asked and why it could.
            this.#audit?.({
              actor: input.sender.id,
              action: 'tool.dangerous',
              tool: def.name,
              arguments: shownArguments(def, effective.arguments).slice(0, AUDIT_ARGUMENT_CHARS),
              task_id,
              sender_trust: input.sender.trust,
              turn_trust: stageContext.trust.level,
              allowed_by: confirmed ? 'owner approval' : verdict?.allowed && verdict.preauthorized ? 'preauthorized_tools' : 'no gate',
            });
          }
          if (verdict?.allowed && verdict.preauthorized)
            this.#log.info({ task_id: state.options.task_id, tool: def.name }, 'dangerous tool pre-authorised by configuration');
          outcome = await this.#execute(def, effective, check.args, started, state);
        }
      }

      const capped = outcome.content;
      context.tool_outcome = outcome;
      await this.#stages.run('after_toolcall', context, { toolOwner: def.owner });
      if (context.response !== undefined) state.responses.set(index, context.response);
      const final = context.tool_outcome ?? outcome;
      // A hook's rewrite is capped like the tool's own output (the unchanged text already is).
      return final.content === capped ? final : { ...final, content: capOutput(final.content, state.limits.tool_output_max_chars) };
    } catch (error) {
      // Stage runs and validation do not throw; this keeps a bug from taking the whole batch down.
      this.#log.error({ tool: call.name, err: error }, 'tool call failed inside the executor');
      return failedOutcome(call, { reason: 'failed', detail: describeError(error) }, started, state);
    }
  }

  /** Why the sender may not run this `act` tool, or undefined when they may (owners always may, and anyone may answer). */
  #actRefusal(def: ToolDefinition, sender: InputSender, answerChannel: string | undefined): ToolErrorInfo | undefined {
    if (def.tier !== 'act' || sender.trust === 'owner') return undefined;
    if (answerChannel !== undefined && def.name === `${OUTPUT_SEND_PREFIX}${answerChannel}`) return undefined;
    const allowed = this.#actPolicy()[sender.trust];
    if (matchesToolName(def.name, allowed)) return undefined;
    const key = `core.agent.${sender.trust}_act_tools`;
    return {
      reason: 'unauthorized',
      detail: `not run: this request came from ${sender.id} (${sender.trust}: ${sender.proof}), and ${key} does not let such requests run ${def.name}${allowed.length > 0 ? ` (it allows ${allowed.join(', ')})` : ''}`,
      hint: 'tell the person what you would have done; the owner can do it, or allow it in that setting',
    };
  }

  /**
   * Runs the tool under its own AbortController, aborted by the timeout or by the task's signal.
   * The outcome does not wait for a tool that ignores its signal; such a tool is logged, and its
   * late result is dropped.
   */
  async #execute(
    def: ToolDefinition,
    call: ToolCall,
    args: Record<string, unknown>,
    started: number,
    state: BatchState,
  ): Promise<ToolOutcome> {
    const { options, limits } = state;
    const timeoutMs = def.timeout_ms ?? limits.tool_timeout_ms;
    const controller = new AbortController();
    // Holders rather than `let`s: TypeScript would narrow a `let` assigned only in callbacks to its initial value.
    const halt: { info: ToolErrorInfo | undefined } = { info: undefined };
    let timer: NodeJS.Timeout | undefined;
    let onTaskAbort: (() => void) | undefined;
    // `halt.info` is set before the abort so that a tool rejecting at once on abort still counts as stopped.
    const stopped = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        halt.info = timedOut(timeoutMs);
        resolve();
        controller.abort(new HomeAgentError('HA_ERR_TOOL_TIMEOUT', `${def.name} did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      onTaskAbort = () => {
        halt.info = CANCELLED;
        resolve();
        controller.abort(options.signal.reason);
      };
      options.signal.addEventListener('abort', onTaskAbort, { once: true });
    });

    const toolContext: ToolContext = {
      signal: controller.signal,
      task_id: options.task_id,
      call_id: call.id,
      input_id: options.input.id,
      source: options.input.source,
      channel: options.input.channel,
      trust: options.stageContext.trust.level,
      ...(options.attachImage ? { attachImage: (image) => options.attachImage?.(def.name, image) } : {}),
    };
    const progress = { finished: false };
    // async: a synchronous throw from execute becomes a rejection like any other failure.
    const execute = async () => def.execute(args, toolContext);
    const info: ToolCallInfo = {
      tool: def.name,
      owner: def.owner,
      task_id: options.task_id,
      source: options.input.source,
      channel: options.input.channel,
    };
    const around = this.#around;
    const run: Promise<Settled> = (async () => (around ? around(info, execute) : execute()))().then(
      (value): Settled => {
        progress.finished = true;
        return { ok: true, value };
      },
      (error: unknown): Settled => {
        progress.finished = true;
        return { ok: false, error };
      },
    );

    try {
      const settled = await Promise.race([run, stopped.then(() => undefined)]);
      if (halt.info) {
        // A tool that honours its signal settles within a tick or two; give it one event-loop turn before calling it stuck.
        if (!progress.finished) await Promise.race([run, new Promise<void>((resolve) => setImmediate(resolve))]);
        this.#reportStopped(def, call, halt.info, progress.finished, run);
        return failedOutcome(call, halt.info, started, state, true);
      }
      if (!settled) return failedOutcome(call, { reason: 'failed', detail: 'the tool stopped without a result' }, started, state, true);
      if (!settled.ok) return failedOutcome(call, errorInfo(settled.error), started, state, true);
      let content: string;
      try {
        content = renderResult(settled.value);
      } catch (error) {
        return failedOutcome(
          call,
          { reason: 'failed', detail: `the tool's result could not be turned into JSON: ${describeError(error)}` },
          started,
          state,
          true,
        );
      }
      return outcome(call, true, content, undefined, started, state, true);
    } finally {
      clearTimeout(timer);
      if (onTaskAbort) options.signal.removeEventListener('abort', onTaskAbort);
    }
  }

  #reportStopped(def: ToolDefinition, call: ToolCall, stop: ToolErrorInfo, finished: boolean, run: Promise<Settled>): void {
    const fields = { tool: def.name, owner: def.owner, call_id: call.id, reason: stop.reason };
    if (finished) {
      this.#log.warn(fields, `tool ${def.name} stopped: ${stop.detail}`);
      return;
    }
    // The tool ignored its signal: say so now, and again when (if ever) it returns.
    const abortedAt = performance.now();
    this.#log.warn(fields, `tool ${def.name} kept running after its signal was aborted (${stop.reason}); its result will be dropped`);
    void run.then((settled) =>
      this.#log.warn(
        { ...fields, late_ms: Math.round(performance.now() - abortedAt), ok: settled.ok },
        `tool ${def.name} returned after it was cancelled; result dropped`,
      ),
    );
  }
}

/** Which way a batch runs; exported for the agent's logs and the tests. */
export function batchMode(calls: readonly ToolCall[], definitions: ReadonlyArray<ToolDefinition | undefined>): BatchMode {
  if (calls.length < 2) return 'serial';
  // Unknown tools only produce a not_found outcome, so they do not force serial order.
  if (definitions.some((d) => d !== undefined && d.parallel_safe !== true)) return 'serial';
  const sends = new Set<string>();
  for (const call of calls) {
    if (!call.name.startsWith(OUTPUT_SEND_PREFIX)) continue;
    // Two sends to one channel must arrive in the order the model wrote them.
    if (sends.has(call.name)) return 'serial';
    sends.add(call.name);
  }
  return 'parallel';
}

/** Cuts `text` after `max` characters with a visible marker saying how much was dropped. */
export function capOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  const last = text.charCodeAt(end - 1);
  // Never leave half of a surrogate pair behind.
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…[cut: ${text.length - end} more characters]`;
}

/** Strings as they are; anything else as compact JSON; nothing at all as "ok". */
export function renderResult(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'ok';
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return text ?? 'ok';
}

async function runSerially<T>(jobs: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const results: T[] = [];
  for (const job of jobs) results.push(await job());
  return results;
}

/** Runs the jobs at most `width` at a time, starting them in order; results keep the job order. */
async function runPool<T>(jobs: ReadonlyArray<() => Promise<T>>, width: number): Promise<T[]> {
  const results = new Array<T>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      const job = jobs[index];
      if (job) results[index] = await job();
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, width), jobs.length) }, worker));
  return results;
}

/** Each call gets its own context (its tool_call, reject, outcome); the turn's arrays are shared. */
function callContext(base: StageContext, call: ToolCall, tier: ToolTier): StageContext {
  const context: StageContext = { ...base, tool_call: { ...call }, tool_tier: tier };
  delete context.reject;
  delete context.tool_outcome;
  delete context.response;
  return context;
}

function errorInfo(error: unknown): ToolErrorInfo {
  if (error instanceof ToolError) return error.info;
  // A ToolError from another copy of the module (a plugin bundling its own SDK) is still one.
  if (error instanceof Error && error.name === 'ToolError' && isToolErrorInfo((error as { info?: unknown }).info))
    return (error as ToolError).info;
  return { reason: 'failed', detail: describeError(error) };
}

function isToolErrorInfo(value: unknown): value is ToolErrorInfo {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolErrorInfo).reason === 'string' &&
    typeof (value as ToolErrorInfo).detail === 'string'
  );
}

function notFound(name: string): ToolErrorInfo {
  const hint = name.startsWith(OUTPUT_SEND_PREFIX)
    ? `call ${LIST_CHANNELS_TOOL} to see the output channels you can send to (or ${GET_PLUGIN_TOOLS} for other tools)`
    : `call ${GET_PLUGIN_TOOLS} with an owner from the tool summary to see the available tools and their arguments`;
  return { reason: 'not_found', detail: `no tool named ${JSON.stringify(name)}`, hint };
}

function timedOut(ms: number): ToolErrorInfo {
  return {
    reason: 'timeout',
    detail: `the tool did not finish within ${ms} ms; it was told to stop and any later result is dropped`,
    hint: 'try a smaller request, or tell the person it timed out',
  };
}

function awaitingConfirmation(pending: PendingConfirmation): ToolErrorInfo {
  return pending.inline
    ? {
        reason: 'confirmation_required',
        detail: `this is a dangerous action: it did not run. The person was asked on the ${pending.origin.channel} channel to confirm it; it runs only when they do.`,
        hint: 'do not retry it; tell the person what you want to do and why, and that they need to confirm it',
      }
    : {
        reason: 'confirmation_required',
        detail:
          'this is a dangerous action and this request does not come from the owner: it did not run. The owner was asked to approve it on their own channels; it runs only if they do.',
        hint: 'do not retry it; tell the person that the owner has to approve it',
      };
}

const CANCELLED: ToolErrorInfo = { reason: 'failed', detail: 'cancelled: the task this call belongs to was cancelled' };
const TURN_ENDED: ToolErrorInfo = { reason: 'rejected', detail: 'not run: a stage hook ended the turn' };

/** `executed`: the tool ran and this is its own failure; false for a call refused before it ran. */
function failedOutcome(call: ToolCall, info: ToolErrorInfo, started: number, state: BatchState, executed = false): ToolOutcome {
  return outcome(call, false, toolErrorResult(info), info, started, state, executed);
}

function outcome(
  call: ToolCall,
  ok: boolean,
  content: string,
  error: ToolErrorInfo | undefined,
  started: number,
  state: BatchState,
  executed: boolean,
): ToolOutcome {
  return {
    call,
    ok,
    content: capOutput(content, state.limits.tool_output_max_chars),
    ...(error ? { error } : {}),
    duration_ms: Math.round(performance.now() - started),
    executed,
  };
}
