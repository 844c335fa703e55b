/**
 * Where the local intent engine sits in a turn (issue 11): first, in the on_input stage, for every
 * text input a person sent (typed, or spoken and transcribed). A confident match is carried out
 * and answered at once, without the model. An unsure one (a name only nearly matched) goes on to
 * the model with the candidate attached as a system note in pre_action, and is the answer the
 * person gets if the model cannot be reached. With no model at all the engine is the answer:
 * the command, a "did you mean", or a short "I did not understand" with examples.
 *
 * Issue 26: the engine may hear several commands in one sentence (each is carried out, in order,
 * and the answers joined), ask which device was meant when several fit (asked at once, never
 * guessed), refuse a request the device cannot do with what it can do instead, and take a
 * follow-up ("turn it off", "还有卧室的") as meaning the conversation's last target. The
 * conversation is the input's channel; its last target is forgotten after follow-up quiet time.
 */
import type { ExecuteOptions, StageContext, ToolOutcome } from '../agent/types.js';
import type { ToolCall } from '../llm/spec/model.js';
import type { Logger } from '../log/logger.js';
import { answer, joinNames } from './intent-answers.js';
import type { IntentExecutor, ToolRunner } from './intent-executor.js';
import type { IntentLanguage } from './intent-sentences.js';
import { type IntentRecognizer, intentLanguageOf, type RecognisedIntent } from './recognizer.js';
import type { IntentUnderstander, Understanding } from './understander.js';

export interface IntentSettings {
  enabled: boolean;
  /** A match at least this sure is carried out without asking the model. */
  min_confidence: number;
  /** Near names less similar than this are not considered at all. */
  near_min_similarity: number;
  /** Input devices and the area each is in. */
  source_areas: ReadonlyArray<{ source: string; area: string }>;
  /** A follow-up ("turn it off") refers to the conversation's last target for this long (seconds). */
  followup_quiet_s: number;
}

export interface IntentStageOptions {
  /** The template recogniser alone: what a ringing timer's stored command is matched with. */
  recognizer: () => IntentRecognizer;
  /** The whole engine: templates, composition, compounds, follow-ups, questions back. */
  understander: () => IntentUnderstander;
  executor: IntentExecutor;
  /** Runs the intent's tool calls as part of this turn (hooks, confirmation, audit, the turn's tool results). */
  toolRunner: (ctx: StageContext) => ToolRunner;
  settings: () => IntentSettings;
  /** The clock of the follow-up quiet time (the daemon's, a test's manual one). */
  now?: () => number;
  /** A language model is configured to take what the engine is unsure of. */
  modelAvailable: () => boolean;
  /** Inputs that are not a person talking (automations, memory upkeep): never matched. */
  isMachineInput: (ctx: StageContext) => boolean;
  log: Logger;
}

/** The input source of a ringing timer (plugins/timer), which carries its message in `meta.timer_message`. */
const TIMER_SOURCE = 'timer';

/**
 * What a timer may run when it rings: things that act on the home. Not timers ("10分钟的计时器"
 * would start itself again, for ever) and not questions, which nobody is there to hear answered.
 */
const DELAYABLE = new Set([
  'HassTurnOn',
  'HassTurnOff',
  'HassLightSet',
  'HassSetPosition',
  'HassClimateSetTemperature',
  'HassMediaPause',
  'HassMediaUnpause',
  'HassMediaNext',
  'HassMediaPrevious',
  'HassSetVolume',
  'HassMediaSearchAndPlay',
  'HassVacuumStart',
  'HassVacuumReturnToBase',
  'HassBroadcast',
  'HassShoppingListAddItem',
  'HassListAddItem',
]);

/** What the turn carries in `ctx.extra` for the later stages, the receipt and the logs. */
export const INTENT_EXTRA = 'intent';

export interface IntentNote {
  name: string;
  slots: RecognisedIntent['slots'];
  confidence: number;
  handled: boolean;
  /** A compound command: every intent, in order (name and slots above are the first). */
  intents?: Array<{ name: string; slots: RecognisedIntent['slots'] }>;
}

const HAN = /\p{Script=Han}/u;

/** The input's language: a voice pipeline's `meta.language` when it says one we speak, else the script of the text. */
export function inputLanguage(text: string, meta: Readonly<Record<string, unknown>>): IntentLanguage {
  const said = typeof meta.language === 'string' ? intentLanguageOf(meta.language) : undefined;
  return said ?? (HAN.test(text) ? 'zh' : 'en');
}

export function intentStage(options: IntentStageOptions) {
  const { log } = options;

  async function onInput(ctx: StageContext): Promise<void> {
    const settings = options.settings();
    const { input } = ctx;
    if (!settings.enabled || input.type !== 'text' || typeof input.payload !== 'string') return;
    if (input.source === TIMER_SOURCE && typeof input.meta.timer_message === 'string') return timerRang(ctx, input.meta.timer_message);
    const text = input.payload.trim();
    // Slash commands are for the kernel and the plugins, not sentences.
    if (text === '' || text.startsWith('/') || options.isMachineInput(ctx)) return;
    const lang = inputLanguage(text, input.meta);
    // The area of the device that heard it: what a satellite says with its input, else where the device is configured.
    const area = typeof input.meta.area === 'string' ? input.meta.area : settings.source_areas.find((s) => s.source === input.source)?.area;
    const understood = options.understander().understand(text, lang, {
      ...(area !== undefined && { area }),
      minSimilarity: settings.near_min_similarity,
      conversation: `${input.source}\u0001${input.channel}`,
      ...(options.now && { now: options.now() }),
    });
    const online = options.modelAvailable();
    const said = localAnswer(understood, lang, (names) => options.executor.sayNames(names, lang, text));
    if (said !== undefined) {
      // A question back or what the device can do: the person hears it now, the model is not needed.
      ctx.response = said;
      log.info({ task_id: ctx.task_id, kind: understood.kind }, 'local intent engine answered without acting');
      return;
    }
    const intents = understood.kind === 'intents' ? understood.intents.filter((i) => options.executor.handles(i.name)) : [];
    if (understood.kind !== 'intents' || intents.length !== understood.intents.length || intents.length === 0) {
      if (!online) ctx.response = answer(lang, 'not_understood');
      return;
    }
    const recognised = intents[0] as RecognisedIntent;
    const confidence = Math.min(understood.confidence, ...intents.map((i) => i.confidence));
    const note: IntentNote = { name: recognised.name, slots: recognised.slots, confidence, handled: false };
    if (intents.length > 1) note.intents = intents.map((i) => ({ name: i.name, slots: i.slots }));
    ctx.extra[INTENT_EXTRA] = note;
    if (confidence >= settings.min_confidence) {
      const texts: string[] = [];
      let acted = false;
      for (const intent of intents) {
        const outcome = await options.executor.execute(intent, lang, options.toolRunner(ctx), text);
        texts.push(outcome.text);
        acted ||= outcome.acted;
      }
      note.handled = true;
      log.info(
        { task_id: ctx.task_id, intents: intents.map((i) => ({ intent: i.name, slots: i.slots })), acted },
        `local intent ${intents.map((i) => i.name).join(' + ')} handled without the model`,
      );
      ctx.response = texts.join(lang === 'zh' ? '' : ' ');
      return;
    }
    const unsure = answer(lang, 'unsure', { value: guessOf(recognised) });
    if (!online) {
      ctx.response = unsure;
      return;
    }
    ctx.fallback = unsure;
    log.debug({ task_id: ctx.task_id, intent: recognised.name, confidence }, 'unsure local intent passed to the model');
  }

  /**
   * A timer rang (the timer plugin's interrupt). A command it was set to run later ("in 10 minutes
   * turn off the light") is carried out now; a reminder is said as it is when no model is there to
   * phrase it. Never a guess: a near name is not acted on when nobody is there to be asked.
   */
  async function timerRang(ctx: StageContext, message: string): Promise<void> {
    const settings = options.settings();
    const lang = inputLanguage(message, {});
    const name = typeof ctx.input.meta.timer_name === 'string' ? ctx.input.meta.timer_name : '';
    const rang = answer(lang, 'timer_done', { what: name, item: message });
    const command = options.recognizer().recognise(message, lang, { minSimilarity: 2 });
    if (command !== undefined && command.confidence >= settings.min_confidence && DELAYABLE.has(command.name)) {
      const outcome = await options.executor.execute(command, lang, options.toolRunner(ctx), message);
      log.info({ task_id: ctx.task_id, intent: command.name, acted: outcome.acted }, `a timer ran its command ${command.name}`);
      ctx.response = `${rang}${lang === 'zh' ? '' : ' '}${outcome.text}`;
    } else if (!options.modelAvailable()) {
      ctx.response = rang;
    }
  }

  /** Tells the model what the engine guessed, just before the person's words. */
  function preAction(ctx: StageContext): void {
    const note = ctx.extra[INTENT_EXTRA] as IntentNote | undefined;
    if (note === undefined || note.handled) return;
    const guess = JSON.stringify({ intent: note.name, slots: note.slots, confidence: Number(note.confidence.toFixed(2)) });
    const content =
      `The on-device intent engine was unsure about this request; its best guess is ${guess}. ` +
      'Use it if it fits what the person said (names may be misheard or misspelt), otherwise ignore it.';
    ctx.messages.splice(Math.max(0, ctx.messages.length - 1), 0, { role: 'system', content });
  }

  return { onInput, preAction };
}

/** A runner over the agent's tool executor for one turn: the outcomes join the turn's tool results (memory sees them). */
export function turnToolRunner(
  executeBatch: (calls: ToolCall[], options: ExecuteOptions) => Promise<{ outcomes: ToolOutcome[] }>,
  ctx: StageContext,
): ToolRunner {
  return async (requests) => {
    const calls = requests.map((request, index) => ({
      id: `intent_${index}`,
      name: request.name,
      arguments: JSON.stringify(request.args),
    }));
    // The on_input stage has no abort signal of its own; every tool still has its timeout.
    const { outcomes } = await executeBatch(calls, { task_id: ctx.task_id, input: ctx.input, signal: NEVER, stageContext: ctx });
    ctx.tool_results.push(...outcomes);
    return outcomes.map((outcome) => ({ ok: outcome.ok, result: parsed(outcome.content), ...(outcome.error && { error: outcome.error }) }));
  };
}

const NEVER = new AbortController().signal;

function parsed(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/**
 * What the engine says itself instead of acting: which device was meant, or what the device can
 * do instead of what was asked ("the kitchen light can only be switched on and off"). `say` gives
 * the registered names as the reply calls them (as said, else in the reply's language).
 */
export function localAnswer(
  understood: Understanding,
  lang: IntentLanguage,
  say: (names: readonly string[]) => string[] = (names) => [...names],
): string | undefined {
  if (understood.kind === 'ask') return answer(lang, 'ask_which', { what: joinNames(lang, say(understood.candidates)) });
  if (understood.kind !== 'unsupported') return undefined;
  const what = joinNames(lang, say(understood.names));
  if (understood.why === 'brightness') return answer(lang, 'only_on_off', { what });
  if (understood.why === 'color') return answer(lang, 'no_colour', { what });
  return answer(lang, 'cannot_do', { what });
}

/** The near names the engine took for what was said, or the intent's name when none was near. */
function guessOf(recognised: RecognisedIntent): string {
  const near = recognised.near?.map((n) => n.value) ?? [];
  if (near.length > 0) return near.join(', ');
  return typeof recognised.slots.name === 'string' ? recognised.slots.name : recognised.name;
}
