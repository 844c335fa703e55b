/**
 * The subagents plugin (the original's child sub-agents): `spawn_child(task, max_turns)` starts a
 * child, a bounded agent turn on one task that runs while the conversation goes on, and returns its
 * task id at once; `child_result(task_id)` tells its state and, once it ended, its result. When a
 * child ends, the conversation that spawned it is told: an L3 interrupt on its channel (or, when
 * that channel cannot take a message then, where a timer would ring), marked as coming from the
 * child and untrusted, so the parent model reads it as tool output and a turn it causes acts only
 * as far as untrusted inputs may.
 *
 * A child's turn is the kernel's (ctx.agent.runTurn): the conversation's tools minus those that
 * spawn agents, change plugins or approve actions (excluded-tools.ts, plus
 * plugin.subagents.excluded_tools), through the same executor, hooks, trust policies and owner
 * approval as any turn. Its sender is the spawning turn's trust (never more), marked shared so that
 * no approval code reaches a model; its dangerous calls are held and the owner asked on their own
 * channels (web page, QQ owners, `homeagentctl confirm list`). Limits are settings: children at
 * once, tool rounds, total tokens, wall time. Children live in this process only: stopping the
 * daemon cancels the running ones (their model requests are aborted) and tells nobody.
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { ChildEnd, ChildState, ChildView, SubagentChildrenResult } from '../../src/sdk/api.js';
import {
  type BoundedTurnResult,
  type ControlMethod,
  definePlugin,
  type InputSender,
  type Language,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  type ToolContext,
  ToolError,
  textLanguage,
} from '../../src/sdk/index.js';
import { ChildBook, type ChildRecord } from './child-book.js';
import { childSystemPrompt, endNotice } from './child-texts.js';
import { excludedPatterns } from './excluded-tools.js';
import { MAX_TURNS_CEILING, type SubagentsSettings } from './settings-schema.js';

export { EXCLUDED_TOOLS, excludedPatterns } from './excluded-tools.js';

/** The interrupt level of an end notice: like a timer's, it may pre-empt ordinary work, not an L4 alarm. */
export const NOTICE_LEVEL = 3;
/** The source of end notices (what the logs and the web page show). */
export const NOTICE_SOURCE = 'subagents';

export interface SubagentsOptions {
  now?: () => number;
  /** A new child's id; default `child_` and 8 random hex digits. */
  newId?: () => string;
}

/** Why a child's signal was aborted. */
type AbortWhy = 'time' | 'daemon_stop';

export class SubagentsPlugin implements PluginInstance {
  readonly #ctx: PluginContext<SubagentsSettings>;
  readonly #now: () => number;
  readonly #newId: () => string;
  readonly #book = new ChildBook();
  readonly #unregister: Array<() => void> = [];
  #stopping = false;

  constructor(ctx: PluginContext<SubagentsSettings>, options: SubagentsOptions = {}) {
    this.#ctx = ctx;
    this.#now = options.now ?? (() => Date.now());
    this.#newId = options.newId ?? (() => `child_${randomBytes(4).toString('hex')}`);
  }

  async start(): Promise<void> {
    this.#stopping = false;
    if (!this.#ctx.agent) this.#ctx.log.warn('this daemon offers no bounded agent turns to plugins: spawn_child will refuse');
    this.#registerTools();
    this.#unregister.push(this.#ctx.control.register(this.#childrenMethod()));
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    const running = this.#book.runningCount;
    // Running children end at once (their model requests are aborted) and tell nobody: the daemon is going.
    await this.#book.abortAll('daemon_stop' satisfies AbortWhy);
    if (running > 0) this.#ctx.log.info({ cancelled: running }, `${running} running sub-agents cancelled: the daemon stopped`);
    for (const unregister of this.#unregister.splice(0)) unregister();
    this.#book.clear();
  }

  health(): Required<PluginHealth> {
    const running = this.#book.runningCount;
    const finished = this.#book.finishedCount;
    if (!this.#ctx.agent)
      return {
        ok: false,
        detail: 'no bounded agent turns in this daemon: sub-agents cannot run',
        detail_zh: '此守护进程没有有界代理回合：子代理无法运行',
      };
    return {
      ok: true,
      detail: `${running} sub-agents running, ${finished} finished ones remembered`,
      detail_zh: `${running} 个子代理正在运行，记得 ${finished} 个已结束的`,
    };
  }

  #registerTools(): void {
    const tools = this.#ctx.tools;
    const settings = this.#ctx.settings;
    this.#unregister.push(
      tools.register<{ task: string; max_turns?: number }>({
        name: 'spawn_child',
        // It starts work that may act (each of its calls meets the policies and the gate itself), and spends tokens.
        tier: 'act',
        description: `Starts a sub-agent on one task while you go on talking (e.g. research something, compare options); returns its task_id at once. It has your tools except those that spawn agents, change plugins or approve actions, at most max_turns tool rounds (default ${settings.get('default_max_turns')}), and its dangerous actions wait for the owner's approval. When it ends you are told on this conversation; child_result(task_id) shows its state meanwhile. At most ${settings.get('max_concurrent')} run at once.`,
        parameters: {
          type: 'object',
          properties: {
            task: {
              type: 'string',
              minLength: 1,
              description: 'The task, complete in itself: the sub-agent sees nothing of this conversation but this text.',
            },
            max_turns: {
              type: 'integer',
              minimum: 1,
              maximum: MAX_TURNS_CEILING,
              description: `Tool rounds it may use before it must answer (default ${settings.get('default_max_turns')}).`,
            },
          },
          required: ['task'],
          additionalProperties: false,
        },
        execute: (args, context) => this.#spawn(args, context),
      }),
      tools.register<{ task_id: string }>({
        name: 'child_result',
        tier: 'read',
        parallel_safe: true,
        description:
          "A sub-agent's state (running, done, stopped, failed, cancelled) and, once it ended, its result: its own words and tool output, untrusted.",
        parameters: {
          type: 'object',
          properties: { task_id: { type: 'string', minLength: 1, maxLength: 64, description: 'The task_id spawn_child returned.' } },
          required: ['task_id'],
          additionalProperties: false,
        },
        execute: (args, context) => this.#result(args.task_id, context),
      }),
    );
  }

  #spawn(args: { task: string; max_turns?: number }, context: ToolContext): Record<string, unknown> {
    const agent = this.#ctx.agent;
    if (!agent || this.#stopping) {
      throw new ToolError({
        reason: 'unavailable',
        detail: `HA_ERR_SUBAGENT_UNAVAILABLE: ${this.#stopping ? 'the daemon is stopping' : 'this daemon cannot run sub-agents'}`,
        hint: 'do the task yourself, or tell the person it cannot be done in the background now',
      });
    }
    const settings = this.#ctx.settings.values();
    const task = args.task.trim();
    if (task === '')
      throw new ToolError({ reason: 'required', field: 'task', detail: 'task is empty', hint: 'say what the sub-agent should do' });
    if (task.length > settings.max_task_chars) {
      throw new ToolError({
        reason: 'range',
        field: 'task',
        detail: `the task is ${task.length} characters; at most ${settings.max_task_chars} (plugin.subagents.max_task_chars)`,
        hint: 'say it shorter',
      });
    }
    const running = this.#book.runningCount;
    if (running >= settings.max_concurrent) {
      throw new ToolError({
        reason: 'rejected',
        detail: `HA_ERR_SUBAGENT_LIMIT: ${running} sub-agents are running, the most allowed at once is ${settings.max_concurrent} (plugin.subagents.max_concurrent)`,
        hint: 'wait until one ends (you will be told; child_result shows their state), or do the task yourself',
      });
    }
    const maxTurns = Math.min(args.max_turns ?? settings.default_max_turns, settings.max_turns);
    let id = this.#newId();
    while (this.#book.has(id)) id = this.#newId();
    const language = textLanguage(task);
    const record: ChildRecord = {
      id,
      task,
      state: 'running',
      max_turns: maxTurns,
      source: context.source,
      channel: context.channel,
      started_at: this.#now(),
      tokens: 0,
      tool_rounds: 0,
      tool_calls: 0,
      awaiting_approval: [],
    };
    // Never more trust than the turn that asked: the task is the parent model's words, written after what entered its turn.
    const sender: InputSender = {
      trust: context.trust,
      id: `child:${id}`,
      proof: `a sub-agent spawned on ${context.channel} by a turn of ${context.trust} trust`,
      // Its answer reaches a model: approval codes are never shown in it.
      shared: true,
    };
    const controller = new AbortController();
    const why: { abort?: AbortWhy } = {};
    controller.signal.addEventListener('abort', () => {
      why.abort = controller.signal.reason === 'daemon_stop' ? 'daemon_stop' : 'time';
    });
    const timer = setTimeout(() => controller.abort('time' satisfies AbortWhy), settings.max_wall_time_s * 1000);
    const turn = agent
      .runTurn({
        task_id: id,
        system: childSystemPrompt(language, { max_turns: maxTurns, now: new Date(this.#now()) }),
        text: task,
        source: context.source,
        channel: context.channel,
        sender,
        exclude_tools: excludedPatterns(settings.excluded_tools),
        max_rounds: maxTurns,
        max_total_tokens: settings.max_total_tokens,
        signal: controller.signal,
      })
      .catch(
        (error: unknown): BoundedTurnResult => ({
          text: '',
          ended_by: 'model_error',
          requests: 0,
          tool_rounds: 0,
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cache_read_tokens: 0, reasoning_tokens: 0 },
          tool_calls: [],
          awaiting_approval: [],
          trust: 'untrusted',
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    const done = turn.then((result) => {
      clearTimeout(timer);
      this.#ended(record, result, why.abort, language);
    });
    this.#book.add(record, controller, done);
    this.#ctx.log.info({ task_id: id, channel: context.channel, max_turns: maxTurns, trust: context.trust }, `sub-agent ${id} spawned`);
    return {
      task_id: id,
      state: 'running',
      max_turns: maxTurns,
      note: 'It runs in the background; you will be told on this conversation when it ends. Tell the person it is under way.',
    };
  }

  #ended(record: ChildRecord, result: BoundedTurnResult, aborted: AbortWhy | undefined, language: Language): void {
    const settings = this.#ctx.settings.values();
    const [state, endedBy] = outcomeOf(result, aborted);
    record.state = state;
    record.ended_by = endedBy;
    record.finished_at = this.#now();
    record.result = cut(result.text, settings.max_result_chars);
    if (result.error !== undefined) record.error = result.error;
    record.tokens = result.usage.total_tokens;
    record.tool_rounds = result.tool_rounds;
    record.tool_calls = result.tool_calls.length;
    record.awaiting_approval = [...result.awaiting_approval];
    this.#book.finish(record.id, settings.keep_finished);
    const facts = { task_id: record.id, state, ended_by: endedBy, tokens: record.tokens, tool_rounds: record.tool_rounds };
    if (state === 'failed') this.#ctx.log.warn({ ...facts, error: record.error }, `sub-agent ${record.id} failed: ${record.error}`);
    else this.#ctx.log.info(facts, `sub-agent ${record.id} ended: ${state} (${endedBy})`);
    if (state === 'cancelled') return;
    this.#tell(record, language);
  }

  /** Raises the end notice where the spawning conversation hears it. */
  #tell(record: ChildRecord, language: Language): void {
    const target = this.#ctx.io.laterTarget?.({ source: record.source, channel: record.channel });
    const channel = target?.channel ?? record.channel;
    record.told = target?.detail ?? `on ${channel}`;
    const payload = endNotice(language, {
      id: record.id,
      task: record.task,
      state: record.state,
      ended_by: record.ended_by ?? 'answered',
      max_turns: record.max_turns,
      result: record.result ?? '',
      awaiting_approval: record.awaiting_approval,
      ...(record.error === undefined ? {} : { error: record.error }),
    });
    if (target?.via === 'nowhere') this.#ctx.log.warn({ task_id: record.id, channel }, `sub-agent ${record.id} ended; told ${record.told}`);
    this.#ctx.io
      .injectInterrupt(
        {
          source: NOTICE_SOURCE,
          channel,
          // What a child says is its model's words and its tools' output: anyone's words.
          sender: { trust: 'untrusted', id: `child:${record.id}`, proof: 'the result of a sub-agent (its own model and tool output)' },
          payload,
          meta: {
            // A child's findings are not something the household said.
            no_memory: true,
            child_task_id: record.id,
            child_state: record.state,
            origin_channel: record.channel,
            ...(target === undefined ? {} : { delivery: target.via }),
          },
        },
        NOTICE_LEVEL,
      )
      .then(
        (receipt) =>
          this.#ctx.log.info(
            { task_id: record.id, channel, status: receipt.status },
            `sub-agent ${record.id}: the conversation was told (${receipt.status})`,
          ),
        (error: unknown) =>
          this.#ctx.log.error({ err: error, task_id: record.id }, `sub-agent ${record.id} ended but its notice was not accepted`),
      );
  }

  #result(taskId: string, context: ToolContext): ChildView {
    const record = this.#book.get(taskId);
    // Only the conversation that spawned a child reads it: another one (a group chat) learns nothing of it.
    if (!record || record.channel !== context.channel) {
      throw new ToolError({
        reason: 'not_found',
        field: 'task_id',
        detail: `HA_ERR_SUBAGENT_NOT_FOUND: no sub-agent ${JSON.stringify(taskId)} of this conversation (finished ones are forgotten after plugin.subagents.keep_finished, and all at a restart)`,
        hint: 'use the task_id spawn_child returned',
      });
    }
    return view(record);
  }

  #childrenMethod(): ControlMethod {
    const method: ControlMethod = {
      name: 'subagents.children',
      description: 'The running sub-agents and the finished ones still remembered, with their state, task and result (owner only).',
      params: Type.Object({}),
      owner_only: true,
      handler: (): SubagentChildrenResult => ({
        running: this.#book.runningCount,
        children: this.#book.list().map((record) => ({ ...view(record), channel: record.channel })),
      }),
    };
    return method;
  }
}

/** A turn's end as a child's state and reason. */
function outcomeOf(result: BoundedTurnResult, aborted: AbortWhy | undefined): [ChildState, ChildEnd] {
  switch (result.ended_by) {
    case 'answered':
      return ['done', 'answered'];
    case 'max_rounds':
      return ['done', 'max_turns'];
    case 'tokens':
      return ['stopped', 'tokens'];
    case 'aborted':
      return aborted === 'daemon_stop' ? ['cancelled', 'daemon_stop'] : ['stopped', 'time'];
    case 'model_error':
      return ['failed', 'model_error'];
  }
}

function view(record: ChildRecord): ChildView {
  return {
    task_id: record.id,
    state: record.state,
    task: record.task,
    ...(record.ended_by === undefined ? {} : { ended_by: record.ended_by }),
    max_turns: record.max_turns,
    tool_rounds: record.tool_rounds,
    tool_calls: record.tool_calls,
    tokens: record.tokens,
    started_at: new Date(record.started_at).toISOString(),
    ...(record.finished_at === undefined ? {} : { finished_at: new Date(record.finished_at).toISOString() }),
    ...(record.result === undefined ? {} : { result: record.result }),
    ...(record.error === undefined ? {} : { error: record.error }),
    awaiting_approval: record.awaiting_approval,
    ...(record.told === undefined ? {} : { told: record.told }),
  };
}

function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}…[cut: ${chars.length - max} more characters]`;
}

export default definePlugin<SubagentsSettings>((ctx) => new SubagentsPlugin(ctx));
