/**
 * The agent: runs one input through the stages and the bounded tool loop.
 *
 * on_input → prompt → pre_action → [LLM → post_action → tools (before/after_toolcall)]* →
 * before_output → output → after_output. Any stage may set the response and jump to the output.
 * The loop ends when the model calls no tool, when every call of a round was rejected, or after
 * max_tool_turns rounds with tools; in the last two cases the model gets one more round without
 * tools to answer. Pre-emption: the LLM step is interruptible (its request is cancelled and sent
 * again after the interrupt); tool execution is a critical section. Pictures tools attach during a
 * round (ToolContext.attachImage, turn-images.ts) follow that round's tool results for the rest of the turn.
 */
import type { EventBus, EventMap } from '../events/event-bus.js';
import type { InputEvent, OutputEvent, TaskControl, TaskResult, TaskRunner } from '../io/types.js';
import {
  addUsage,
  type ChatMessage,
  collectStream,
  EMPTY_USAGE,
  type GenerateResult,
  type LanguageModel,
  LlmError,
  type StreamPart,
  type ToolCall,
  type ToolSpec,
} from '../llm/spec/index.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError, isHomeAgentError } from '../shared/errors.js';
import { type Language, textLanguage } from '../shared/language.js';
import { lowerTurnTrust, type Trust } from '../shared/trust.js';
import type { ConfirmationGate, PendingConfirmation } from './confirmation-gate.js';
import type { ChannelFacts, PromptBuilder, PromptSlots } from './prompt-builder.js';
import { DEFAULT_MAX_IMAGES_PER_TURN, MAX_IMAGE_BYTES_PER_TURN, type MediaReader, TurnImages } from './turn-images.js';
import type { Stage, StageContext, ToolOutcome } from './types.js';

/** Characters of a tool result an agent.tool_result event carries (the model gets all of it). */
const TOOL_RESULT_EVENT_CHARS = 2000;

/** What the agent needs from the IO manager. */
export interface AgentIo {
  /** The output channel answers to this input go to, if any. */
  channelFor(input: InputEvent): ChannelFacts | undefined;
  send(event: OutputEvent): Promise<void>;
}

export interface AgentStages {
  run(stage: Stage, context: StageContext, options?: { toolOwner?: string }): Promise<boolean>;
}

export interface AgentTools {
  specs(): ToolSpec[];
  /** A call's arguments as the events and logs may show them (ToolExecutor.shownArguments); absent: as the model sent them. */
  shownArguments?(call: ToolCall): string;
  executeBatch(
    calls: ToolCall[],
    options: {
      task_id: string;
      input: InputEvent;
      signal: AbortSignal;
      stageContext: StageContext;
      confirmed?: boolean;
      answer_channel?: string;
      attachImage?: (tool: string, image: { digest: string; mime: string }) => void;
    },
  ): Promise<{
    outcomes: ToolOutcome[];
    short_circuit?: string;
  }>;
}

/** Earlier exchanges of a conversation channel, put between the system prompt and the input. */
export interface ConversationHistory {
  /** Oldest first; `exclude` is the input being answered (a persistent history may already hold it). */
  messages(channel: string, options?: { exclude?: string }): ChatMessage[];
  /** Told of each finished exchange, for histories that keep their own copy. */
  add?(channel: string, exchange: { user: string; assistant: string }): void;
}

export interface AgentLimits {
  max_tool_turns: number;
  temperature: number;
  max_tokens: number;
  /** Pictures tools may show the model per turn (core.agent.max_images_per_turn); default {@link DEFAULT_MAX_IMAGES_PER_TURN}. */
  max_images_per_turn?: number;
}

export interface AgentOptions {
  model: LanguageModel;
  /** False when no LLM source is configured: the agent answers with {@link offlineText} without calling it. */
  modelConfigured: () => boolean;
  offlineText: () => string;
  tools: AgentTools;
  stages: AgentStages;
  io: AgentIo;
  prompt: PromptBuilder;
  /**
   * Memory slots for the prompt, and the lowest trust of what they recalled (`owner` when they
   * hold only memory's own notes): the turn is trusted no further.
   */
  slots?: (input: InputEvent) => Promise<{ slots: PromptSlots; trust: Trust }>;
  conversation: ConversationHistory;
  /**
   * Called with every input before anything else happens to it (the memory makes it durable), so
   * an input acknowledged by a turn that dies half-way is not lost. Failures are logged, never fatal.
   */
  recordInput?: (input: InputEvent) => Promise<void>;
  /** Called with every finished turn (the memory stores it); its failures are logged, never fatal. */
  remember?: (turn: FinishedTurn) => Promise<void>;
  /** The media store, where pictures attached by tools are read from; absent: they are reported as not stored. */
  media?: MediaReader;
  /** Holds dangerous calls for the owner's `/confirm <code>`; the agent tells the person and runs confirmed calls. */
  confirmations?: ConfirmationGate;
  events: EventBus;
  limits: () => AgentLimits;
  clock: Clock;
  log: Logger;
  newId: () => string;
}

/**
 * Who gave a turn's answer: the model; the kernel (offline notice, an error, a stage's canned reply
 * such as a local intent's); or the approval gate (the input was an approval code).
 */
export type AnsweredBy = 'model' | 'kernel' | 'approval';

/** A finished turn as memory receives it: what memory may keep of it, nothing the kernel said. */
export interface FinishedTurn {
  input: InputEvent;
  /** The input as text (what the model saw); '' for an approval code, which is no memory. */
  text: string;
  /**
   * The answer the model gave (without kernel-added confirmation requests); '' when the kernel
   * answered (offline notice, error text, a local intent's canned reply, an approval receipt).
   */
  answer: string;
  answered_by: AnsweredBy;
  /** The lowest trust of what entered the turn: what memory keeps of it is trusted no further. */
  trust: Trust;
  tools: Array<{ tool: string; text: string }>;
}

export class Agent implements TaskRunner {
  readonly #o: AgentOptions;

  constructor(options: AgentOptions) {
    this.#o = options;
  }

  async run(input: InputEvent, control: TaskControl): Promise<TaskResult> {
    const userText = inputText(input);
    const channel = this.#o.io.channelFor(input);
    const ctx = newStageContext(control.task_id, input);
    const sent = new Set<string>();
    const unrecorded = await this.#record(input, ctx);
    // Who answered decides what memory keeps: only the model's answers are memory; the kernel's
    // notices (offline, errors, local intent replies) are not, and an approval turn is none at all.
    const finish = (text: string, by: AnsweredBy = 'kernel', modelFailed = false) =>
      this.#finish(ctx, input, channel, userText, text, sent, unrecorded, by, modelFailed);

    // A confirmation is the owner's own decision: it runs the held call exactly, without asking the model.
    const confirmation = this.#o.confirmations?.match(input) ?? { kind: 'none' };
    if (confirmation.kind === 'refused') return finish(confirmation.text, 'approval');
    if (confirmation.kind === 'denied') return finish(TEXT[textLanguage(userText)].denied(confirmation.pending.tool), 'approval');
    if (confirmation.kind === 'confirmed') return finish(await this.#runConfirmed(confirmation.pending, input, control, ctx), 'approval');

    if (await this.#o.stages.run('on_input', ctx)) return finish(ctx.response ?? '');
    if (!this.#o.modelConfigured()) return finish(this.#o.offlineText());

    const memory = await this.#o.slots?.(input);
    const slots = memory?.slots ?? {};
    // Memory holds what anyone told the house, MQTT payloads included.
    if (memory) lowerTurnTrust(ctx.trust, memory.trust, 'recalled memory');
    const system = this.#o.prompt.build({
      source: input.source,
      channel,
      slots,
      now: new Date(this.#o.clock.now()),
      text: userText,
      language: turnLanguage(userText, input.meta),
    });
    ctx.messages = [
      { role: 'system', content: system },
      ...(suppliedHistory(input) ?? this.#o.conversation.messages(input.channel, { exclude: input.id })),
      { role: 'user', content: userText },
    ];
    if (await this.#o.stages.run('pre_action', ctx)) return finish(ctx.response ?? '');

    const { max_tool_turns, max_images_per_turn = DEFAULT_MAX_IMAGES_PER_TURN } = this.#o.limits();
    const images = new TurnImages(this.#o.media, { max_images: max_images_per_turn, max_bytes: MAX_IMAGE_BYTES_PER_TURN });
    let toolTurns = 0;
    let lastRound = false;
    for (let round = 1; ; round++) {
      let result: GenerateResult;
      try {
        result = await this.#generate(ctx, control, lastRound, round);
      } catch (error) {
        if (control.signal.aborted) throw error;
        this.#o.log.error({ task_id: control.task_id, err: error }, 'no language model answered');
        return finish(ctx.fallback ?? llmFailureText(error), 'kernel', true);
      }
      const calls = lastRound ? [] : result.tool_calls;
      ctx.usage = addUsage(ctx.usage, result.usage);
      this.#o.events.emit('agent.llm_chain', {
        task_id: control.task_id,
        input_id: input.id,
        channel: input.channel,
        turn: round,
        text: result.text,
        reasoning: result.reasoning,
        // The web page and the debug log read these: a secret argument is masked (ToolDefinition.redact_arguments).
        tool_calls: calls.map((c) => ({ ...c, arguments: this.#o.tools.shownArguments?.(c) ?? c.arguments })),
        usage: result.usage,
        model: result.model,
        final: calls.length === 0,
      });
      ctx.llm_text = result.text;
      ctx.reasoning = result.reasoning;
      ctx.tool_calls = calls;
      if (await this.#o.stages.run('post_action', ctx)) return finish(ctx.response ?? '');
      if (ctx.tool_calls.length === 0) return finish(ctx.llm_text, 'model');

      toolTurns++;
      ctx.messages.push({ role: 'assistant', content: ctx.llm_text, tool_calls: ctx.tool_calls });
      const batch = ctx.tool_calls;
      const pictures = images.round();
      const { outcomes, short_circuit } = await control.critical(() =>
        this.#o.tools.executeBatch(batch, {
          task_id: control.task_id,
          input,
          signal: control.signal,
          stageContext: ctx,
          attachImage: pictures.attach,
          ...(channel ? { answer_channel: channel.name } : {}),
        }),
      );
      for (const outcome of outcomes) {
        ctx.messages.push({ role: 'tool', tool_call_id: outcome.call.id, name: outcome.call.name, content: outcome.content });
        if (outcome.ok && outcome.call.name.startsWith('output_send__')) sent.add(outcome.call.name.slice('output_send__'.length));
      }
      // Vendors accept images only in user messages, so the round's pictures follow its tool results.
      const shown = pictures.message();
      if (shown) ctx.messages.push(shown);
      ctx.tool_results.push(...outcomes);
      for (const outcome of outcomes) {
        this.#o.events.emit('agent.tool_result', {
          task_id: control.task_id,
          input_id: input.id,
          channel: input.channel,
          turn: round,
          call_id: outcome.call.id,
          name: outcome.call.name,
          ok: outcome.ok,
          content:
            outcome.content.length > TOOL_RESULT_EVENT_CHARS ? `${outcome.content.slice(0, TOOL_RESULT_EVENT_CHARS)}…` : outcome.content,
        });
      }
      if (short_circuit !== undefined) return finish(short_circuit);
      const allRejected =
        outcomes.length > 0 && outcomes.every((o) => o.error?.reason === 'rejected' || o.error?.reason === 'confirmation_required');
      if (allRejected || toolTurns >= max_tool_turns) {
        lastRound = true;
        ctx.messages.push({
          role: 'system',
          content: allRejected
            ? 'Every tool call of your last reply was rejected. Answer the person now without tools.'
            : `You have used the ${max_tool_turns} tool rounds allowed for one request. Answer the person now without tools, saying what is done and what is not.`,
        });
      }
    }
  }

  /** Makes the input durable; the failure, if any, is returned so that the answer can say so. */
  async #record(input: InputEvent, ctx: StageContext): Promise<unknown> {
    if (!this.#o.recordInput) return undefined;
    try {
      await this.#o.recordInput(input);
      return undefined;
    } catch (error) {
      this.#o.log.error({ input_id: input.id, err: error }, 'memory could not record the input');
      ctx.errors.push(`memory: ${describeError(error)}`);
      return error;
    }
  }

  /** One LLM round. A pre-emption cancels the request; it is sent again once the task resumes. */
  async #generate(ctx: StageContext, control: TaskControl, final: boolean, turn: number): Promise<GenerateResult> {
    const { temperature, max_tokens } = this.#o.limits();
    const tools = this.#o.tools.specs();
    const delta = { task_id: control.task_id, input_id: ctx.input.id, channel: ctx.input.channel, turn };
    for (let attempt = 0; ; attempt++) {
      await control.safePoint();
      const llmSignal = control.llmSignal();
      const signal = AbortSignal.any([llmSignal, control.signal]);
      try {
        const parts = this.#o.model.stream({
          messages: ctx.messages,
          ...(tools.length > 0 ? { tools, tool_choice: final ? ('none' as const) : ('auto' as const) } : {}),
          temperature,
          max_tokens,
          signal,
        });
        return await collectStream(this.#tapTextDeltas(parts, { ...delta, restart: attempt > 0 }), this.#o.model.model);
      } catch (error) {
        const preempted = llmSignal.aborted && !control.signal.aborted;
        if (preempted && error instanceof LlmError && error.kind === 'aborted') {
          this.#o.log.debug({ task_id: control.task_id }, 'LLM request cancelled by an interrupt; it will be sent again');
          continue;
        }
        throw error;
      }
    }
  }

  /** Passes the stream through, telling listeners (the web page) of each piece of answer text as it arrives. */
  async *#tapTextDeltas(parts: AsyncIterable<StreamPart>, base: Omit<EventMap['agent.text_delta'], 'delta'>): AsyncIterable<StreamPart> {
    let restart = base.restart;
    for await (const part of parts) {
      if (part.type === 'text-delta' && part.delta !== '') {
        this.#o.events.emit('agent.text_delta', { ...base, delta: part.delta, restart });
        restart = false;
      }
      yield part;
    }
  }

  /** The approval requests this turn raised, as the requester is told of them. */
  *#confirmationNotes(taskId: string, language: Language): Iterable<string> {
    const gate = this.#o.confirmations;
    if (!gate) return;
    const requested = gate.requestedBy(taskId);
    for (const pending of requested) if (pending.inline) yield gate.requestText(pending, language);
    if (requested.some((pending) => !pending.inline)) yield gate.askedElsewhereText(language);
  }

  async #runConfirmed(pending: PendingConfirmation, input: InputEvent, control: TaskControl, ctx: StageContext): Promise<string> {
    this.#o.log.info(
      { task_id: control.task_id, tool: pending.tool, code: pending.code, asked_by_task: pending.task_id },
      'owner confirmed a dangerous tool call',
    );
    const { outcomes } = await control.critical(() =>
      this.#o.tools.executeBatch([pending.call], {
        task_id: control.task_id,
        input,
        signal: control.signal,
        stageContext: ctx,
        confirmed: true,
      }),
    );
    ctx.tool_results.push(...outcomes);
    const outcome = outcomes[0];
    const text = TEXT[textLanguage(inputText(input))];
    if (!outcome) return text.notRun(pending.tool);
    return outcome.ok ? text.ran(pending.tool, outcome.content) : text.failed(pending.tool, outcome.content);
  }

  async #finish(
    ctx: StageContext,
    input: InputEvent,
    channel: ChannelFacts | undefined,
    userText: string,
    text: string,
    sent: Set<string>,
    unrecorded: unknown,
    answeredBy: AnsweredBy,
    modelFailed: boolean,
  ): Promise<TaskResult> {
    ctx.final_text = text;
    delete ctx.response;
    await this.#o.stages.run('before_output', ctx);
    const modelAnswer = ctx.response ?? ctx.final_text;
    const language = textLanguage(userText);
    // The kernel, not the model, adds what the person must know: the approval requests (shown here
    // only to an owner who asked here; others hear that the owner was asked) and a memory failure.
    const notes = [...this.#confirmationNotes(ctx.task_id, language)];
    if (unrecorded !== undefined) notes.push(TEXT[language].unrecorded(unrecorded));
    const answer = [modelAnswer, ...notes].filter((part) => part !== '').join('\n\n');
    // An asynchronous channel only shows what is sent to it: deliver the answer unless the model
    // already did, and the notes in any case.
    const delivery = channel && !channel.synchronous ? (sent.has(channel.name) ? notes.join('\n\n') : answer) : '';
    let undelivered = false;
    if (channel && delivery) {
      try {
        await this.#o.io.send({
          id: this.#o.newId(),
          input_id: input.id,
          channel: channel.name,
          type: 'text',
          payload: delivery,
          meta: {},
          created_at: this.#o.clock.now(),
        });
      } catch (error) {
        this.#o.log.error({ channel: channel.name, err: error }, 'could not deliver the answer');
        ctx.errors.push(`delivery to ${channel.name} failed: ${describeError(error)}`);
        undelivered = true;
      }
    }
    // Confirmation codes stay out of the conversation the model sees again.
    if (modelAnswer) this.#o.conversation.add?.(input.channel, { user: userText, assistant: modelAnswer });
    if (this.#o.remember) {
      try {
        await this.#o.remember({
          input,
          text: answeredBy === 'approval' ? '' : userText,
          answer: answeredBy === 'model' ? modelAnswer : '',
          answered_by: answeredBy,
          trust: ctx.trust.level,
          tools: ctx.tool_results.map((o) => ({ tool: o.call.name, text: o.content })),
        });
      } catch (error) {
        this.#o.log.error({ input_id: input.id, err: error }, 'memory could not store the turn');
        ctx.errors.push(`memory: ${describeError(error)}`);
      }
    }
    ctx.final_text = answer;
    const { prompt_tokens, completion_tokens, total_tokens } = ctx.usage;
    this.#o.events.emit('agent.answer', {
      task_id: ctx.task_id,
      input_id: input.id,
      channel: input.channel,
      text: answer,
      usage: { prompt_tokens, completion_tokens, total_tokens },
    });
    await this.#o.stages.run('after_output', ctx);
    this.#o.log.info(
      {
        task_id: ctx.task_id,
        input_id: input.id,
        channel: input.channel,
        tool_calls: ctx.tool_results.length,
        usage: ctx.usage,
        errors: ctx.errors,
      },
      'turn finished',
    );
    // The scheduler lets the same input run again at once after a turn that did not do what was asked.
    const failed = modelFailed || undelivered || hasUnmendedToolFailure(ctx.tool_results);
    return { text: answer, usage: { prompt_tokens, completion_tokens, total_tokens }, ...(failed && { failed }) };
  }
}

/**
 * A tool call failed and no later call of the same tool in the turn succeeded (a model that fixed
 * its arguments and called again mended it). A call waiting for the owner's approval has not failed.
 */
function hasUnmendedToolFailure(outcomes: readonly ToolOutcome[]): boolean {
  return outcomes.some(
    (outcome, index) =>
      !outcome.ok &&
      outcome.error?.reason !== 'confirmation_required' &&
      !outcomes.slice(index + 1).some((later) => later.ok && later.call.name === outcome.call.name),
  );
}

/** A fresh stage context for one input (also used by tests that drive stages directly). */
export function newStageContext(task_id: string, input: InputEvent): StageContext {
  return {
    stage: 'on_input',
    task_id,
    input,
    trust: { level: input.sender.trust, lowered_by: [] },
    messages: [],
    llm_text: '',
    reasoning: '',
    tool_calls: [],
    tool_results: [],
    final_text: '',
    usage: { ...EMPTY_USAGE },
    extra: {},
    errors: [],
  };
}

/** The text the model sees for an input of any type. */
export function inputText(input: InputEvent): string {
  if (typeof input.payload === 'string') return input.payload;
  if (input.type === 'structured') return JSON.stringify(input.payload);
  return `[${input.type} input from ${input.source}]`;
}

/** The language a turn speaks: what a voice pipeline says it heard (`meta.language`), else the script of the words. */
function turnLanguage(text: string, meta: Readonly<Record<string, unknown>>): Language {
  const said = typeof meta.language === 'string' ? meta.language.trim().toLowerCase().split(/[-_]/u)[0] : undefined;
  return said === 'en' || said === 'zh' ? said : textLanguage(text);
}

/**
 * The conversation a client sent with its input (`meta.history`, as the OpenAI-compatible endpoint
 * does), used instead of the channel's own history: the client decides what the model has seen.
 * Anything but a list of {role: system|user|assistant, content: text} is ignored.
 */
function suppliedHistory(input: InputEvent): ChatMessage[] | undefined {
  const history = input.meta.history;
  if (!Array.isArray(history)) return undefined;
  const messages: ChatMessage[] = [];
  for (const item of history) {
    const { role, content } = (item ?? {}) as { role?: unknown; content?: unknown };
    if (typeof content !== 'string') continue;
    if (role === 'system' || role === 'user' || role === 'assistant') messages.push({ role, content });
  }
  return messages;
}

/** What the kernel itself says in a turn, in both languages. */
const TEXT = {
  en: {
    denied: (tool: string) => `Refused: ${tool} will not run.`,
    notRun: (tool: string) => `Confirmed, but ${tool} did not run.`,
    ran: (tool: string, result: string) => `Confirmed: ${tool} ran. Result: ${result}`,
    failed: (tool: string, result: string) => `Confirmed, but ${tool} failed: ${result}`,
    unrecorded: (error: unknown) =>
      `(I answered, but could not remember this: ${isHomeAgentError(error, 'HA_ERR_STORE_FULL') ? 'the disk is full' : describeError(error)}.)`,
  },
  zh: {
    denied: (tool: string) => `已拒绝：${tool} 不会执行。`,
    notRun: (tool: string) => `已确认，但 ${tool} 没有执行。`,
    ran: (tool: string, result: string) => `已确认：${tool} 已执行。结果：${result}`,
    failed: (tool: string, result: string) => `已确认，但 ${tool} 执行失败：${result}`,
    unrecorded: (error: unknown) =>
      `（我回答了，但没能记住这件事：${isHomeAgentError(error, 'HA_ERR_STORE_FULL') ? '磁盘已满' : describeError(error)}。）`,
  },
} satisfies Record<Language, unknown>;

function llmFailureText(error: unknown): string {
  if (error instanceof LlmError && error.kind === 'unavailable') return error.message;
  return `I could not reach a language model, so I cannot answer that right now. ${describeError(error)}`;
}
