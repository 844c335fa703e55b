/**
 * The timer plugin: timer_set, timer_list, timer_cancel, timer_cancel_all, timer_pause,
 * timer_resume and timer_adjust, the tools behind both the model and the intent engine's timer
 * intents. At expiry a timer raises an L3 interrupt on the channel the timer was set from when
 * that channel can take a message then (a web page that is open, a chat app), so the agent says it
 * where it was asked; otherwise (the CLI command that set it has long exited) on the first
 * announcement channel that can (core.agent.announce_channels: the speaker, the web page), and the
 * log says where it rang and why. Pending timers, paused ones included, are kept in
 * <plugin data>/timers.json after every change and survive restarts; one that expired while the
 * daemon was down fires right after start, saying how late it is. What a change does to a timer
 * is TimerBook's job; this file validates arguments, persists, and arms the wake-ups.
 */
import { join } from 'node:path';
import { definePlugin, lowerTrust, type PluginContext, type PluginInstance, type ToolContext, ToolError } from '../../src/sdk/index.js';
import { DURATION_FORMS, formatSeconds, parseDuration } from './duration.js';
import type { TimerSettings } from './settings-schema.js';
import { TimerBook } from './timer-book.js';
import { isPaused, type RunningTimer, type StoredTimer, TimerFile } from './timer-file.js';

export { formatSeconds } from './duration.js';

export const TIMER_FILE = 'timers.json';
/** The interrupt level of an expired timer: it may pre-empt ordinary work, but not an L4 alarm. */
export const TIMER_LEVEL = 3;
/**
 * JS timers run on a monotonic clock while fires_at is wall-clock time, and a Pi without a real-time
 * clock boots with a wrong date that NTP later corrects. Waking at least this often and checking the
 * wall clock again keeps a timer within a minute of its time after such a jump.
 */
const MAX_SLEEP_MS = 60_000;
/** Lateness below this is ordinary event-loop delay and not worth telling the agent about. */
const LATE_REPORT_MS = 1000;
const MIN_DURATION_S = 1;
const MAX_MESSAGE_CHARS = 500;
const MAX_NAME_CHARS = 64;

/** Wall-clock time and a way to be woken later; the shape of the kernel's TimerClock, so tests pass a manual one. */
export interface TimerPluginClock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

const systemClock: TimerPluginClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timeout = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(timeout) };
  },
};

export interface TimerPluginOptions {
  clock?: TimerPluginClock;
}

/** A timer as the tools show it. */
interface TimerView {
  id: string;
  name?: string;
  message: string;
  duration_s: number;
  remaining_s: number;
  paused: boolean;
  fires_at: string | null;
  channel: string;
}

const ID_PARAMETERS = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 64, description: 'The id timer_set returned (timer_list shows them).' } },
  required: ['id'],
  additionalProperties: false,
};
const NO_PARAMETERS = { type: 'object', properties: {}, additionalProperties: false };

export class TimerPlugin implements PluginInstance {
  readonly #ctx: PluginContext<TimerSettings>;
  readonly #clock: TimerPluginClock;
  #book: TimerBook;
  readonly #alarms = new Map<string, { cancel(): void }>();
  readonly #unregister: Array<() => void> = [];
  #file: TimerFile | undefined;

  constructor(ctx: PluginContext<TimerSettings>, options: TimerPluginOptions = {}) {
    this.#ctx = ctx;
    this.#clock = options.clock ?? systemClock;
    this.#book = new TimerBook(() => this.#clock.now());
  }

  async start(): Promise<void> {
    const file = new TimerFile(join(this.#ctx.paths.data, TIMER_FILE), this.#ctx.log);
    this.#file = file;
    this.#book = new TimerBook(() => this.#clock.now(), await file.load());
    this.#registerTools();
    const overdue = this.#book.due().length;
    for (const timer of this.#book.all()) this.#arm(timer);
    const pending = this.#book.size;
    if (pending > 0) this.#ctx.log.info({ pending, overdue }, `${pending} stored timers restored`);
  }

  async stop(): Promise<void> {
    for (const alarm of this.#alarms.values()) alarm.cancel();
    this.#alarms.clear();
    for (const unregister of this.#unregister.splice(0)) unregister();
    await this.#file?.flush();
    this.#file = undefined;
    this.#book.clear();
  }

  #registerTools(): void {
    const tools = this.#ctx.tools;
    this.#unregister.push(
      tools.register<{ duration: unknown; message: string; name?: string }>({
        name: 'timer_set',
        tier: 'act',
        description: `Sets a timer; when it runs out you are interrupted with its message on this conversation's channel, or on an announcement channel (the speaker) when this one cannot take a message then (the CLI); rings_on says which. At most ${formatSeconds(this.#ctx.settings.get('max_duration_s'))}.`,
        parameters: {
          type: 'object',
          properties: {
            duration: { type: ['string', 'number'], description: `How long until it rings: ${DURATION_FORMS}.` },
            message: {
              type: 'string',
              minLength: 1,
              maxLength: MAX_MESSAGE_CHARS,
              description: 'What the timer is for, said when it rings (e.g. "take the pizza out").',
            },
            // The length is checked after trimming, so it is not a schema bound.
            name: {
              type: 'string',
              description: `A short name the household uses for it ("pizza"), at most ${MAX_NAME_CHARS} characters; shown in timer_list.`,
            },
          },
          required: ['duration', 'message'],
          additionalProperties: false,
        },
        execute: (args, context) => this.#set(args, context),
      }),
      tools.register<Record<string, never>>({
        name: 'timer_list',
        tier: 'read',
        parallel_safe: true,
        description: 'Lists the pending timers (least time left first) with ids, names, messages, remaining time and whether paused.',
        parameters: NO_PARAMETERS,
        execute: () => ({ timers: this.#book.byRemaining().map((timer) => this.#view(timer)) }),
      }),
      tools.register<{ id: string }>({
        name: 'timer_cancel',
        tier: 'act',
        description: 'Cancels a pending timer by its id.',
        parameters: ID_PARAMETERS,
        execute: (args) => this.#cancel(args.id),
      }),
      tools.register<Record<string, never>>({
        name: 'timer_cancel_all',
        tier: 'act',
        description: 'Cancels every pending timer, paused ones too.',
        parameters: NO_PARAMETERS,
        execute: () => this.#cancelAll(),
      }),
      tools.register<{ id: string }>({
        name: 'timer_pause',
        tier: 'act',
        description: 'Pauses a running timer; it keeps its remaining time and does not ring until resumed.',
        parameters: ID_PARAMETERS,
        execute: (args) => this.#pause(args.id),
      }),
      tools.register<{ id: string }>({
        name: 'timer_resume',
        tier: 'act',
        description: 'Starts a paused timer again with the time it had left.',
        parameters: ID_PARAMETERS,
        execute: (args) => this.#resume(args.id),
      }),
      tools.register<{ id: string; seconds: number }>({
        name: 'timer_adjust',
        tier: 'act',
        description:
          'Adds time to a pending timer (or takes it away with negative seconds), paused ones too. Taking away all its time makes it ring now.',
        parameters: {
          type: 'object',
          properties: {
            id: ID_PARAMETERS.properties.id,
            seconds: { type: 'integer', description: 'Seconds to add; negative to take away (-60 is one minute less). Not 0.' },
          },
          required: ['id', 'seconds'],
          additionalProperties: false,
        },
        execute: (args) => this.#adjust(args.id, args.seconds),
      }),
    );
  }

  async #set(
    args: { duration: unknown; message: string; name?: string },
    context: ToolContext,
  ): Promise<{ id: string; name?: string; fires_at: string; in_s: number; rings_on?: string }> {
    const seconds = this.#checkedDuration(args.duration);
    const message = args.message.trim();
    if (message === '')
      throw new ToolError({ reason: 'required', field: 'message', detail: 'message is empty', hint: 'say what the timer is for' });
    const name = checkedName(args.name);
    const max = this.#ctx.settings.get('max_timers');
    if (this.#book.size >= max) {
      throw new ToolError({
        reason: 'rejected',
        detail: `${this.#book.size} timers are pending, the most allowed at once is ${max}`,
        hint: 'cancel one with timer_cancel (timer_list shows them) or wait until one rings',
      });
    }
    const timer = this.#book.add({
      message,
      ...(name === undefined ? {} : { name }),
      duration_ms: Math.round(seconds * 1000),
      source: context.source,
      channel: context.channel,
      trust: lowerTrust(context.trust, 'household'),
    });
    this.#arm(timer);
    await this.#persist();
    this.#ctx.log.info({ timer_id: timer.id, seconds, channel: timer.channel }, `timer ${timer.id} set for ${formatSeconds(seconds)}`);
    // Where it would ring if it rang now: the person learns at once that a CLI timer rings on the speaker.
    const target = this.#ctx.io.laterTarget?.({ source: timer.source, channel: timer.channel });
    return {
      id: timer.id,
      ...(name === undefined ? {} : { name }),
      fires_at: new Date(timer.fires_at).toISOString(),
      in_s: seconds,
      ...(target === undefined ? {} : { rings_on: target.detail }),
    };
  }

  #checkedDuration(duration: unknown): number {
    const parsed = parseDuration(duration);
    if (!parsed.ok) {
      throw new ToolError({ reason: 'format', field: 'duration', detail: `duration ${parsed.problem}`, hint: `give ${DURATION_FORMS}` });
    }
    const max = this.#ctx.settings.get('max_duration_s');
    if (parsed.seconds < MIN_DURATION_S || parsed.seconds > max) {
      throw new ToolError({
        reason: 'range',
        field: 'duration',
        detail: `duration must be between ${MIN_DURATION_S} second and ${formatSeconds(max)}; got ${formatSeconds(parsed.seconds)}`,
        hint: `give ${DURATION_FORMS}`,
      });
    }
    return parsed.seconds;
  }

  async #cancel(id: string): Promise<{ cancelled: string; name?: string; message: string }> {
    const timer = this.#book.remove(id);
    this.#disarm(id);
    await this.#persist();
    this.#ctx.log.info({ timer_id: id }, `timer ${id} cancelled`);
    return { cancelled: id, ...nameOf(timer), message: timer.message };
  }

  async #cancelAll(): Promise<{ cancelled: Array<{ id: string; name?: string; message: string }> }> {
    const timers = this.#book.clear();
    for (const timer of timers) this.#disarm(timer.id);
    await this.#persist();
    if (timers.length > 0) this.#ctx.log.info({ timer_ids: timers.map((timer) => timer.id) }, `${timers.length} timers cancelled`);
    return { cancelled: timers.map((timer) => ({ id: timer.id, ...nameOf(timer), message: timer.message })) };
  }

  async #pause(id: string): Promise<{ id: string; remaining_s: number }> {
    const timer = this.#book.pause(id);
    this.#disarm(id);
    await this.#persist();
    this.#ctx.log.info({ timer_id: id, remaining_ms: timer.remaining_ms }, `timer ${id} paused`);
    return { id, remaining_s: toSeconds(timer.remaining_ms) };
  }

  async #resume(id: string): Promise<{ id: string; fires_at: string; remaining_s: number }> {
    const timer = this.#book.resume(id);
    this.#arm(timer);
    await this.#persist();
    this.#ctx.log.info({ timer_id: id }, `timer ${id} resumed`);
    return { id, fires_at: new Date(timer.fires_at).toISOString(), remaining_s: toSeconds(this.#book.remainingMs(timer)) };
  }

  async #adjust(id: string, seconds: number): Promise<{ id: string; remaining_s: number; fires_at: string | null }> {
    const max = this.#ctx.settings.get('max_duration_s');
    if (!Number.isInteger(seconds) || seconds === 0 || Math.abs(seconds) > max) {
      throw new ToolError({
        reason: 'range',
        field: 'seconds',
        detail: `seconds must be a whole number from -${max} to ${max} and not 0; got ${seconds}`,
        hint: 'positive seconds add time, negative take it away',
      });
    }
    const timer = this.#book.adjust(id, seconds * 1000, max * 1000);
    this.#ctx.log.info({ timer_id: id, seconds }, `timer ${id} adjusted by ${seconds} s`);
    const view = this.#view(timer);
    if (!isPaused(timer) && timer.fires_at <= this.#clock.now()) this.#fire(timer);
    else this.#arm(timer);
    await this.#persist();
    return { id, remaining_s: view.remaining_s, fires_at: view.fires_at };
  }

  #view(timer: StoredTimer): TimerView {
    const paused = isPaused(timer);
    return {
      id: timer.id,
      ...nameOf(timer),
      message: timer.message,
      duration_s: timer.duration_ms / 1000,
      remaining_s: toSeconds(this.#book.remainingMs(timer)),
      paused,
      fires_at: paused ? null : new Date(timer.fires_at).toISOString(),
      channel: timer.channel,
    };
  }

  /** Schedules the next wake-up of a running timer; a paused one has none. */
  #arm(timer: StoredTimer): void {
    this.#disarm(timer.id);
    if (isPaused(timer)) return;
    const wait = Math.min(Math.max(0, timer.fires_at - this.#clock.now()), MAX_SLEEP_MS);
    this.#alarms.set(
      timer.id,
      this.#clock.setTimer(() => this.#wake(timer.id), wait),
    );
  }

  #disarm(id: string): void {
    this.#alarms.get(id)?.cancel();
    this.#alarms.delete(id);
  }

  #wake(id: string): void {
    this.#alarms.delete(id);
    const timer = this.#book.find(id);
    if (!timer || isPaused(timer)) return;
    if (timer.fires_at <= this.#clock.now()) this.#fire(timer);
    else this.#arm(timer);
  }

  #fire(timer: RunningTimer): void {
    this.#disarm(timer.id);
    this.#book.remove(timer.id);
    const lateBy = this.#clock.now() - timer.fires_at;
    const meta: Record<string, unknown> = {
      // The interrupt is a reminder, not something the household said: keep it out of memory.
      no_memory: true,
      timer_id: timer.id,
      // What it was set for, on its own: the local intent engine says it (or runs it, when it is a command) without a model.
      timer_message: timer.message,
      ...(timer.name === undefined ? {} : { timer_name: timer.name }),
      set_at: new Date(timer.set_at).toISOString(),
      origin_source: timer.source,
    };
    if (lateBy >= LATE_REPORT_MS) meta.late_by_ms = lateBy;
    // Decided when it rings, from the channels' state then: the CLI command that set it is gone, a page may have been closed.
    const target = this.#ctx.io.laterTarget?.({ source: timer.source, channel: timer.channel });
    const channel = target?.channel ?? timer.channel;
    if (target !== undefined) {
      meta.origin_channel = timer.channel;
      meta.delivery = target.via;
    }
    const where = target?.detail ?? `on ${channel}`;
    const facts = { timer_id: timer.id, channel, origin_channel: timer.channel, delivery: target?.via, late_by_ms: lateBy };
    if (target?.via === 'nowhere') this.#ctx.log.warn(facts, `timer ${timer.id} fired ${where}`);
    else this.#ctx.log.info(facts, `timer ${timer.id} fired ${where}`);
    const payload = timer.name === undefined ? `timer: ${timer.message}` : `timer ${JSON.stringify(timer.name)}: ${timer.message}`;
    // The receipt arrives only when the agent has dealt with the interrupt; nothing waits for it.
    this.#ctx.io
      .injectInterrupt(
        {
          source: 'timer',
          channel,
          sender: { trust: timer.trust, id: 'timer', proof: `a timer set from ${timer.source} on ${timer.channel}` },
          payload,
          meta,
        },
        TIMER_LEVEL,
      )
      .then(
        (receipt) =>
          this.#ctx.log.info(
            { timer_id: timer.id, channel, status: receipt.status, ...(receipt.error === undefined ? {} : { error: receipt.error }) },
            `timer ${timer.id} rang ${where}: ${receipt.status}`,
          ),
        (error: unknown) =>
          this.#ctx.log.error({ err: error, timer_id: timer.id }, `timer ${timer.id} fired but its interrupt was not accepted`),
      );
    void this.#persist();
  }

  #persist(): Promise<void> {
    return this.#file?.save(this.#book.all()) ?? Promise.resolve();
  }
}

/** The trimmed name, undefined when none was given; refuses one that is blank or too long. */
function checkedName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const text = name.trim();
  if (text === '')
    throw new ToolError({ reason: 'format', field: 'name', detail: 'name is blank', hint: 'leave name out, or give a word like "pizza"' });
  if ([...text].length > MAX_NAME_CHARS) {
    throw new ToolError({
      reason: 'range',
      field: 'name',
      detail: `name is longer than ${MAX_NAME_CHARS} characters`,
      hint: 'use a short name',
    });
  }
  return text;
}

function nameOf(timer: StoredTimer): { name?: string } {
  return timer.name === undefined ? {} : { name: timer.name };
}

function toSeconds(ms: number): number {
  return Math.max(0, Math.round(ms / 1000));
}

export default definePlugin<TimerSettings>((ctx) => new TimerPlugin(ctx));
