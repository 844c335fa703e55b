/**
 * The timer plugin: timer_set, timer_list and timer_cancel. At expiry a timer raises an L3
 * interrupt on the channel the timer was set from, so the agent says it where it was asked.
 * Pending timers are kept in <plugin data>/timers.json and survive restarts; one that expired
 * while the daemon was down fires right after start, saying how late it is.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { definePlugin, type PluginContext, type PluginInstance, type ToolContext, ToolError } from '../../src/sdk/index.js';
import { DURATION_FORMS, parseDuration } from './duration.js';
import { type StoredTimer, TimerFile } from './timer-file.js';

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

interface Settings {
  max_duration_s: number;
  max_timers: number;
}

export interface TimerPluginOptions {
  /** Wall-clock milliseconds since the Unix epoch; tests may move time. */
  now?: () => number;
}

export class TimerPlugin implements PluginInstance {
  readonly #ctx: PluginContext;
  readonly #now: () => number;
  readonly #timers = new Map<string, StoredTimer>();
  readonly #alarms = new Map<string, NodeJS.Timeout>();
  readonly #unregister: Array<() => void> = [];
  #file: TimerFile | undefined;

  constructor(ctx: PluginContext, options: TimerPluginOptions = {}) {
    this.#ctx = ctx;
    this.#now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const file = new TimerFile(join(this.#ctx.paths.data, TIMER_FILE), this.#ctx.log);
    this.#file = file;
    for (const timer of await file.load()) this.#timers.set(timer.id, timer);
    this.#registerTools();
    const now = this.#now();
    const overdue = [...this.#timers.values()].filter((timer) => timer.fires_at <= now).length;
    for (const timer of this.#timers.values()) this.#arm(timer);
    if (this.#timers.size > 0) this.#ctx.log.info({ pending: this.#timers.size, overdue }, `${this.#timers.size} stored timers restored`);
  }

  async stop(): Promise<void> {
    for (const alarm of this.#alarms.values()) clearTimeout(alarm);
    this.#alarms.clear();
    for (const unregister of this.#unregister.splice(0)) unregister();
    await this.#file?.flush();
    this.#file = undefined;
    this.#timers.clear();
  }

  #setting<K extends keyof Settings>(key: K): Settings[K] {
    return this.#ctx.settings.get<Settings[K]>(key);
  }

  #registerTools(): void {
    this.#unregister.push(
      this.#ctx.tools.register<{ duration: unknown; message: string }>({
        name: 'timer_set',
        tier: 'act',
        description: `Sets a timer; when it runs out you are interrupted with its message on this conversation's channel. At most ${formatSeconds(this.#setting('max_duration_s'))}.`,
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
          },
          required: ['duration', 'message'],
          additionalProperties: false,
        },
        execute: (args, context) => this.#set(args.duration, args.message, context),
      }),
      this.#ctx.tools.register<Record<string, never>>({
        name: 'timer_list',
        tier: 'read',
        parallel_safe: true,
        description: 'Lists the pending timers with their ids, messages and remaining time.',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
        execute: () => this.#list(),
      }),
      this.#ctx.tools.register<{ id: string }>({
        name: 'timer_cancel',
        tier: 'act',
        description: 'Cancels a pending timer by its id (timer_list shows the ids).',
        parameters: {
          type: 'object',
          properties: { id: { type: 'string', minLength: 1, maxLength: 64, description: 'The id timer_set returned.' } },
          required: ['id'],
          additionalProperties: false,
        },
        execute: (args) => this.#cancel(args.id),
      }),
    );
  }

  async #set(duration: unknown, message: string, context: ToolContext): Promise<{ id: string; fires_at: string; in_s: number }> {
    const seconds = this.#checkedDuration(duration);
    const text = message.trim();
    if (text === '')
      throw new ToolError({ reason: 'required', field: 'message', detail: 'message is empty', hint: 'say what the timer is for' });
    const max = this.#setting('max_timers');
    if (this.#timers.size >= max) {
      throw new ToolError({
        reason: 'rejected',
        detail: `${this.#timers.size} timers are pending, the most allowed at once is ${max}`,
        hint: 'cancel one with timer_cancel (timer_list shows them) or wait until one rings',
      });
    }
    const now = this.#now();
    const timer: StoredTimer = {
      id: this.#newId(),
      message: text,
      fires_at: now + Math.round(seconds * 1000),
      set_at: now,
      source: context.source,
      channel: context.channel,
    };
    this.#timers.set(timer.id, timer);
    this.#arm(timer);
    await this.#persist();
    this.#ctx.log.info({ timer_id: timer.id, seconds, channel: timer.channel }, `timer ${timer.id} set for ${formatSeconds(seconds)}`);
    return { id: timer.id, fires_at: new Date(timer.fires_at).toISOString(), in_s: seconds };
  }

  #checkedDuration(duration: unknown): number {
    const parsed = parseDuration(duration);
    if (!parsed.ok) {
      throw new ToolError({ reason: 'format', field: 'duration', detail: `duration ${parsed.problem}`, hint: `give ${DURATION_FORMS}` });
    }
    const max = this.#setting('max_duration_s');
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

  #list(): { timers: Array<{ id: string; message: string; fires_at: string; remaining_s: number; channel: string }> } {
    const now = this.#now();
    const timers = [...this.#timers.values()].sort((a, b) => a.fires_at - b.fires_at);
    return {
      timers: timers.map((timer) => ({
        id: timer.id,
        message: timer.message,
        fires_at: new Date(timer.fires_at).toISOString(),
        remaining_s: Math.max(0, Math.round((timer.fires_at - now) / 1000)),
        channel: timer.channel,
      })),
    };
  }

  async #cancel(id: string): Promise<{ cancelled: string; message: string }> {
    const timer = this.#timers.get(id);
    if (!timer) {
      throw new ToolError({
        reason: 'not_found',
        field: 'id',
        detail: `no pending timer has the id ${JSON.stringify(id)}`,
        hint: 'timer_list shows the pending timers; a timer that already rang is gone',
      });
    }
    this.#disarm(id);
    this.#timers.delete(id);
    await this.#persist();
    this.#ctx.log.info({ timer_id: id }, `timer ${id} cancelled`);
    return { cancelled: id, message: timer.message };
  }

  #arm(timer: StoredTimer): void {
    this.#disarm(timer.id);
    const wait = Math.min(Math.max(0, timer.fires_at - this.#now()), MAX_SLEEP_MS);
    this.#alarms.set(
      timer.id,
      setTimeout(() => this.#wake(timer.id), wait),
    );
  }

  #disarm(id: string): void {
    clearTimeout(this.#alarms.get(id));
    this.#alarms.delete(id);
  }

  #wake(id: string): void {
    this.#alarms.delete(id);
    const timer = this.#timers.get(id);
    if (!timer) return;
    if (timer.fires_at > this.#now()) this.#arm(timer);
    else this.#fire(timer);
  }

  #fire(timer: StoredTimer): void {
    this.#timers.delete(timer.id);
    const lateBy = this.#now() - timer.fires_at;
    const meta: Record<string, unknown> = {
      // The interrupt is a reminder, not something the household said: keep it out of memory.
      no_memory: true,
      timer_id: timer.id,
      set_at: new Date(timer.set_at).toISOString(),
      origin_source: timer.source,
    };
    if (lateBy >= LATE_REPORT_MS) meta.late_by_ms = lateBy;
    this.#ctx.log.info({ timer_id: timer.id, channel: timer.channel, late_by_ms: lateBy }, `timer ${timer.id} fired`);
    // The receipt arrives only when the agent has dealt with the interrupt; nothing waits for it.
    this.#inject({ source: 'timer', channel: timer.channel, payload: `timer: ${timer.message}`, meta }).catch((error: unknown) =>
      this.#ctx.log.error({ err: error, timer_id: timer.id }, `timer ${timer.id} fired but its interrupt was not accepted`),
    );
    void this.#persist();
  }

  async #inject(input: { source: string; channel: string; payload: string; meta: Record<string, unknown> }): Promise<void> {
    await this.#ctx.io.injectInterrupt(input, TIMER_LEVEL);
  }

  #persist(): Promise<void> {
    return this.#file?.save([...this.#timers.values()]) ?? Promise.resolve();
  }

  #newId(): string {
    let id: string;
    do id = `t${randomBytes(3).toString('hex')}`;
    while (this.#timers.has(id));
    return id;
  }
}

/** "90 s", "5 min", "1 h 30 min": what the model reads back in descriptions and errors. */
export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Number(seconds.toFixed(3))} s`;
  const whole = Math.round(seconds);
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  return [hours > 0 ? `${hours} h` : '', minutes > 0 ? `${minutes} min` : '', rest > 0 ? `${rest} s` : ''].filter(Boolean).join(' ');
}

export default definePlugin((ctx) => new TimerPlugin(ctx));
