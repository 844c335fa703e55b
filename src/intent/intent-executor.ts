/**
 * Carries out a recognised intent and says what happened, in the person's language (issue 11).
 *
 * Everything that changes something goes through tools — entity_call / entity_call_critical for
 * devices, the timer plugin's timer_* tools, list_* for shopping and to-do lists — run by the
 * agent's tool executor, so a local command passes the same stage hooks, argument checks, audit
 * records, change tracking and owner confirmation (a lock or a garage door is held for `/confirm`)
 * as the model's own calls. Reading (states, temperatures, time, weather) is done here directly.
 */

import { stateMatches } from '../api/state-words.js';
import { findArea } from '../home/entity-resolver.js';
import type { Area, EntityInfo } from '../home/types.js';
import type { ToolErrorInfo } from '../shared/tool.js';
import { type Heard, heard, sayName } from './entity-names.js';
import { type AnswerKey, answer, joinNames, sayCondition, sayDuration, sayState } from './intent-answers.js';
import type { IntentLanguage } from './intent-sentences.js';
import { ALL_NAMES, findTargets, type TargetQuery, targetQuery } from './intent-targets.js';
import type { RecognisedIntent } from './recognizer.js';
import type { SlotValue } from './template-grammar.js';

export interface ToolRun {
  ok: boolean;
  /** The tool's result, parsed from its JSON text when it is JSON. */
  result: unknown;
  error?: ToolErrorInfo;
}

export interface ToolRequest {
  name: string;
  args: Record<string, unknown>;
}

/** The part of the running system an intent may touch. */
export interface IntentWorld {
  entities(): readonly EntityInfo[];
  areas(): readonly Area[];
  hasTool(name: string): boolean;
  /** Says the text on every speaker; the names of the outputs it went to (none: no speakers). */
  broadcast(text: string): Promise<string[]>;
  /** A list's stored name for a spoken one ("groceries" → "groceries list"), if it exists. */
  findList(name: string): string | undefined;
  /** The entity core.intent.weather_entity names ('' = the first weather entity). */
  weatherEntity(): string;
  now(): number;
  /** IANA zone for times and dates; undefined = the system's. */
  timeZone?: string;
}

/** Runs the calls one after another through the tool executor, as part of the person's turn. */
export type ToolRunner = (calls: readonly ToolRequest[]) => Promise<ToolRun[]>;

export interface IntentOutcome {
  text: string;
  /** Something was changed (or held for confirmation), not only read. */
  acted: boolean;
}

/** The shopping list's stored name (the list store creates it on first use). */
export const SHOPPING_LIST = 'shopping list';

type Handler = (run: IntentRun) => Promise<IntentOutcome> | IntentOutcome;

interface IntentRun {
  intent: RecognisedIntent;
  slots: Readonly<Record<string, SlotValue>>;
  lang: IntentLanguage;
  /** The person's words: a device or place they named is called what they called it. */
  heard: Heard | undefined;
  world: IntentWorld;
  runTools: ToolRunner;
  say: (key: AnswerKey, parts?: Parameters<typeof answer>[2]) => IntentOutcome;
  /** Like say, for an answer after a change. */
  did: (key: AnswerKey, parts?: Parameters<typeof answer>[2]) => IntentOutcome;
}

/** Service each domain runs for HassTurnOn / HassTurnOff, and what the answer calls it. */
const ON_OFF: Record<string, { on?: [string, AnswerKey]; off?: [string, AnswerKey] }> = {
  light: { on: ['turn_on', 'turned_on'], off: ['turn_off', 'turned_off'] },
  switch: { on: ['turn_on', 'turned_on'], off: ['turn_off', 'turned_off'] },
  fan: { on: ['turn_on', 'turned_on'], off: ['turn_off', 'turned_off'] },
  siren: { on: ['turn_on', 'turned_on'], off: ['turn_off', 'turned_off'] },
  climate: { on: ['turn_on', 'turned_on'], off: ['turn_off', 'turned_off'] },
  media_player: { on: ['turn_on', 'turned_on'], off: ['turn_off', 'turned_off'] },
  script: { on: ['turn_on', 'activated'], off: ['turn_off', 'turned_off'] },
  scene: { on: ['turn_on', 'activated'] },
  button: { on: ['press', 'activated'] },
  cover: { on: ['open', 'opened'], off: ['close', 'closed'] },
  valve: { on: ['open', 'opened'], off: ['close', 'closed'] },
  // Home Assistant's convention: "turn on" a lock locks it.
  lock: { on: ['lock', 'locked'], off: ['unlock', 'unlocked'] },
  vacuum: { on: ['start', 'vacuum_started'], off: ['return_to_base', 'vacuum_returning'] },
};

const DOMAIN_NOUNS: Record<string, [string, string]> = {
  light: ['lights', '灯'],
  switch: ['switches', '开关'],
  fan: ['fans', '风扇'],
  cover: ['covers', '窗帘'],
  valve: ['valves', '阀门'],
  lock: ['locks', '锁'],
  climate: ['thermostats', '空调'],
  media_player: ['media players', '播放器'],
  vacuum: ['vacuums', '扫地机'],
  person: ['people', '人'],
  binary_sensor: ['sensors', '传感器'],
  sensor: ['sensors', '传感器'],
};

export class IntentExecutor {
  readonly #world: IntentWorld;
  readonly #handlers: Record<string, Handler>;

  constructor(world: IntentWorld) {
    this.#world = world;
    this.#handlers = {
      HassTurnOn: (run) => this.#onOff(run, 'on'),
      HassTurnOff: (run) => this.#onOff(run, 'off'),
      HassLightSet: (run) => this.#lightSet(run),
      HassSetPosition: (run) => this.#setPosition(run),
      HassClimateSetTemperature: (run) => this.#setTemperature(run),
      HassGetState: (run) => this.#getState(run),
      HassClimateGetTemperature: (run) => this.#getTemperature(run),
      HassMediaPause: (run) => this.#media(run, 'media_pause', 'media_paused', ['playing']),
      HassMediaUnpause: (run) => this.#media(run, 'media_play', 'media_resumed', ['paused']),
      HassMediaNext: (run) => this.#media(run, 'media_next_track', 'media_next', ['playing', 'paused']),
      HassMediaPrevious: (run) => this.#media(run, 'media_previous_track', 'media_previous', ['playing', 'paused']),
      HassSetVolume: (run) => this.#setVolume(run),
      HassMediaSearchAndPlay: (run) => this.#play(run),
      HassVacuumStart: (run) => this.#vacuum(run, 'start', 'vacuum_started'),
      HassVacuumReturnToBase: (run) => this.#vacuum(run, 'return_to_base', 'vacuum_returning'),
      HassStartTimer: (run) => this.#startTimer(run),
      HassCancelTimer: (run) => this.#onTimer(run, 'timer_cancel', 'timer_cancelled'),
      HassPauseTimer: (run) => this.#onTimer(run, 'timer_pause', 'timer_paused'),
      HassUnpauseTimer: (run) => this.#onTimer(run, 'timer_resume', 'timer_resumed'),
      HassIncreaseTimer: (run) => this.#onTimer(run, 'timer_adjust', 'timer_adjusted', 1),
      HassDecreaseTimer: (run) => this.#onTimer(run, 'timer_adjust', 'timer_adjusted', -1),
      HassCancelAllTimers: (run) => this.#cancelAllTimers(run),
      HassTimerStatus: (run) => this.#timerStatus(run),
      HassGetCurrentTime: (run) => run.say('time_now', { time: this.#format(run.lang, { hour: '2-digit', minute: '2-digit' }) }),
      HassGetCurrentDate: (run) =>
        run.say('date_today', { time: this.#format(run.lang, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }) }),
      HassNevermind: (run) => run.say('nevermind'),
      HassRespond: (run) => run.say('respond'),
      HassBroadcast: (run) => this.#broadcast(run),
      HassShoppingListAddItem: (run) => this.#listAdd(run, SHOPPING_LIST),
      HassShoppingListCompleteItem: (run) => this.#listComplete(run, SHOPPING_LIST),
      HassShoppingListLastItems: (run) => this.#listShow(run, SHOPPING_LIST),
      HassListAddItem: (run) => this.#listAdd(run, this.#listName(run)),
      HassListCompleteItem: (run) => this.#listComplete(run, this.#listName(run)),
      HassGetWeather: (run) => this.#weather(run),
    };
  }

  /** Whether this intent can be carried out here. */
  handles(intent: string): boolean {
    return intent in this.#handlers;
  }

  /** `said`: the person's words, so the answer names devices as they did (entity-names.ts). */
  async execute(intent: RecognisedIntent, lang: IntentLanguage, runTools: ToolRunner, said?: string): Promise<IntentOutcome> {
    const handler = this.#handlers[intent.name];
    const say = (key: AnswerKey, parts?: Parameters<typeof answer>[2]) => ({ text: answer(lang, key, parts), acted: false });
    const did = (key: AnswerKey, parts?: Parameters<typeof answer>[2]) => ({ text: answer(lang, key, parts), acted: true });
    if (handler === undefined) return say('not_understood');
    return handler({ intent, slots: intent.slots, lang, heard: heard(said), world: this.#world, runTools, say, did });
  }

  // ---- devices ----------------------------------------------------------------------------------

  #targets(run: IntentRun, query: TargetQuery = targetQuery(run.slots)): EntityInfo[] | IntentOutcome {
    const found = findTargets(query, this.#world.entities(), this.#world.areas());
    if (found.kind === 'floor_unknown') return run.say('floor_unknown', { what: found.floor });
    if (found.kind === 'none') return run.say('not_found', { what: this.#describeQuery(run, query) });
    return found.entities;
  }

  async #onOff(run: IntentRun, way: 'on' | 'off'): Promise<IntentOutcome> {
    const query = targetQuery(run.slots);
    // "turn on the kitchen" without a device or a kind: the lights there, as Home Assistant does.
    if (query.domain === undefined && (query.name === undefined || query.name === ALL_NAMES)) query.domain = 'light';
    const targets = this.#targets(run, query);
    if (!Array.isArray(targets)) return targets;
    const able = targets.filter((entity) => {
      const service = ON_OFF[entity.domain]?.[way]?.[0];
      return service !== undefined && entity.services.includes(service);
    });
    if (able.length === 0) return run.say('unsupported', { what: this.#describe(run, targets) });
    const first = ON_OFF[able[0]?.domain ?? '']?.[way];
    return this.#callEach(
      run,
      able.map((entity) => ({ entity, service: ON_OFF[entity.domain]?.[way]?.[0] ?? '' })),
      first?.[1] ?? 'turned_on',
    );
  }

  async #lightSet(run: IntentRun): Promise<IntentOutcome> {
    const targets = this.#targets(run, { domain: 'light', ...targetQuery(run.slots) });
    if (!Array.isArray(targets)) return targets;
    const { brightness, color } = run.slots;
    const data: Record<string, unknown> = {};
    if (typeof brightness === 'number') data.brightness = Math.round((Math.min(100, Math.max(0, brightness)) * 255) / 100);
    if (typeof color === 'string') data.color_name = color;
    const key: AnswerKey = typeof color === 'string' ? 'colour_set' : 'brightness_set';
    const value = typeof color === 'string' ? color : String(brightness);
    return this.#callEach(
      run,
      targets.map((entity) => ({ entity, service: 'turn_on', data })),
      key,
      { value },
    );
  }

  async #setPosition(run: IntentRun): Promise<IntentOutcome> {
    const query = targetQuery(run.slots);
    const targets = this.#targets(run, query.domain === undefined && query.name === undefined ? { ...query, domain: 'cover' } : query);
    if (!Array.isArray(targets)) return targets;
    const position = Number(run.slots.position);
    const calls = targets.flatMap((entity) => {
      if (entity.services.includes('set_position')) return [{ entity, service: 'set_position', data: { position } }];
      // A valve or cover without positions can still go fully open or fully closed.
      if (position === 100 && entity.services.includes('open')) return [{ entity, service: 'open' }];
      if (position === 0 && entity.services.includes('close')) return [{ entity, service: 'close' }];
      return [];
    });
    if (calls.length === 0) {
      return run.say('unsupported', {
        what: this.#describe(run, targets),
        detail: run.lang === 'zh' ? '只能全开或全关' : 'it only opens or closes fully',
      });
    }
    return this.#callEach(run, calls, 'position_set', { value: String(position) });
  }

  async #setTemperature(run: IntentRun): Promise<IntentOutcome> {
    const targets = this.#targets(run, { ...targetQuery(run.slots), domain: 'climate' });
    if (!Array.isArray(targets)) return targets;
    const temperature = Number(run.slots.temperature);
    return this.#callEach(
      run,
      targets.map((entity) => ({ entity, service: 'set_temperature', data: { temperature } })),
      'temperature_set',
      { value: `${temperature}°` },
    );
  }

  // ---- questions --------------------------------------------------------------------------------

  #getState(run: IntentRun): IntentOutcome {
    const query = targetQuery(run.slots);
    const wanted = typeof run.slots.state === 'string' ? run.slots.state : undefined;
    const targets = this.#targets(run, query);
    if (!Array.isArray(targets)) return targets;
    const single = query.name !== undefined && query.name !== ALL_NAMES && targets.length === 1 ? targets[0] : undefined;
    if (single !== undefined) {
      const state = sayState(run.lang, single.state, single.unit, single);
      const what = this.#name(run, single);
      if (wanted === undefined) return run.say('state_is', { what, state });
      return run.say(matchesState(single, wanted) ? 'state_yes' : 'state_no', { what, state });
    }
    if (wanted === undefined) {
      const list = targets.map(
        (entity) =>
          `${this.#label(run, targets, entity)}${run.lang === 'zh' ? '' : ' '}${sayState(run.lang, entity.state, entity.unit, entity)}`,
      );
      return run.say('state_list', { what: joinNames(run.lang, list, 8) });
    }
    const matching = targets.filter((entity) => matchesState(entity, wanted));
    const state = sayState(run.lang, wanted);
    if (matching.length === 0) return run.say('none_are', { what: this.#describeQuery(run, query), state });
    return run.say('some_are', {
      count: matching.length,
      what: joinNames(
        run.lang,
        matching.map((e) => this.#name(run, e)),
      ),
      state,
    });
  }

  #getTemperature(run: IntentRun): IntentOutcome {
    const { domain: _, ...place } = targetQuery(run.slots);
    const climates = this.#found({ ...place, domain: 'climate' }).filter((e) => typeof e.attributes.current_temperature === 'number');
    if (climates.length > 0) return this.#readings(run, climates, (e) => `${e.attributes.current_temperature}${unitOf(e)}`);
    // No thermostat there: a temperature sensor in the place answers as well.
    const sensors = this.#found({ ...place, domain: 'sensor', device_class: 'temperature' }).filter((e) => typeof e.state === 'number');
    if (sensors.length === 0) return run.say('not_found', { what: this.#describeQuery(run, { ...place, domain: 'climate' }) });
    return this.#readings(run, sensors, (e) => `${e.state}${e.unit ?? ''}`);
  }

  #found(query: TargetQuery): EntityInfo[] {
    const found = findTargets(query, this.#world.entities(), this.#world.areas());
    return found.kind === 'found' ? found.entities : [];
  }

  #readings(run: IntentRun, entities: readonly EntityInfo[], reading: (entity: EntityInfo) => string): IntentOutcome {
    return run.say('temperature_is', {
      what: joinNames(
        run.lang,
        entities.map((e) => this.#name(run, e)),
      ),
      value: joinNames(run.lang, entities.map(reading)),
    });
  }

  #weather(run: IntentRun): IntentOutcome {
    const configured = this.#world.weatherEntity();
    const entities = this.#world.entities();
    const source = configured === '' ? entities.find((e) => e.domain === 'weather') : entities.find((e) => e.entity_id === configured);
    if (source === undefined || source.state === null) return run.say('no_weather');
    if (source.domain !== 'weather')
      return run.say('weather_is', { state: `${this.#name(run, source)} ${sayState(run.lang, source.state, source.unit, source)}` });
    const temperature = source.attributes.temperature;
    const unit = typeof source.attributes.temperature_unit === 'string' ? source.attributes.temperature_unit : '°';
    return run.say('weather_is', {
      state: sayCondition(run.lang, String(source.state)),
      value: typeof temperature === 'number' ? `${temperature}${unit}` : '',
    });
  }

  // ---- media and vacuums ------------------------------------------------------------------------

  /** Players the sentence names, else those in the place in one of `states`, else the only one there. */
  #players(run: IntentRun, states: readonly string[]): EntityInfo[] | IntentOutcome {
    const query = { ...targetQuery(run.slots), domain: 'media_player' };
    const found = findTargets(query, this.#world.entities(), this.#world.areas());
    if (found.kind !== 'found') return run.say('no_player', { what: query.area ?? query.name ?? '' });
    if (query.name !== undefined) return found.entities;
    const busy = found.entities.filter((e) => states.includes(String(e.state)));
    return busy.length > 0 ? busy : found.entities.length === 1 ? found.entities : run.say('no_player', { what: query.area ?? '' });
  }

  async #media(run: IntentRun, service: string, key: AnswerKey, states: readonly string[]): Promise<IntentOutcome> {
    const players = this.#players(run, states);
    if (!Array.isArray(players)) return players;
    return this.#callEach(
      run,
      players.map((entity) => ({ entity, service })),
      key,
    );
  }

  async #setVolume(run: IntentRun): Promise<IntentOutcome> {
    const players = this.#players(run, ['playing', 'paused', 'on', 'idle']);
    if (!Array.isArray(players)) return players;
    const level = Math.min(100, Math.max(0, Number(run.slots.volume_level)));
    return this.#callEach(
      run,
      players.map((entity) => ({ entity, service: 'volume_set', data: { volume_level: level / 100 } })),
      'volume_set',
      { value: String(level) },
    );
  }

  async #play(run: IntentRun): Promise<IntentOutcome> {
    const players = this.#players(run, ['playing', 'paused', 'on', 'idle']);
    if (!Array.isArray(players)) return players;
    const query = String(run.slots.search_query ?? '').trim();
    const type = typeof run.slots.media_class === 'string' ? run.slots.media_class : 'music';
    const player = players[0] as EntityInfo;
    return this.#callEach(
      run,
      [{ entity: player, service: 'play_media', data: { media_content_id: query, media_content_type: type } }],
      'media_playing',
      {
        value: query,
      },
    );
  }

  async #vacuum(run: IntentRun, service: string, key: AnswerKey): Promise<IntentOutcome> {
    const query = targetQuery(run.slots);
    // "clean the kitchen": the vacuum of that place, else the only one of the home.
    const named = this.#found({ ...query, domain: 'vacuum' });
    const all = this.#found({ domain: 'vacuum' });
    const targets = named.length > 0 ? named : all.length === 1 ? all : [];
    if (targets.length === 0) return run.say('not_found', { what: this.#describeQuery(run, { ...query, domain: 'vacuum' }) });
    return this.#callEach(
      run,
      targets.map((entity) => ({ entity, service })),
      key,
    );
  }

  // ---- timers -----------------------------------------------------------------------------------

  async #startTimer(run: IntentRun): Promise<IntentOutcome> {
    if (!this.#world.hasTool('timer_set')) return run.say('timers_unavailable');
    const seconds = timerSeconds(run.slots, '');
    const name = textSlot(run.slots.name);
    const command = textSlot(run.slots.conversation_command);
    // A delayed command ("in 5 minutes turn off the light") is the message: when it rings, it is carried out.
    const message = command ?? name ?? this.#timerName(run.lang, { duration_s: seconds });
    const [result] = await run.runTools([{ name: 'timer_set', args: { duration: seconds, message, ...(name !== undefined && { name }) } }]);
    if (!result?.ok) return run.say('failed', { detail: result?.error?.detail ?? '' });
    return run.did('timer_started', { time: sayDuration(run.lang, seconds), what: name ?? command ?? '' });
  }

  async #timers(run: IntentRun): Promise<StoredTimerView[] | undefined> {
    if (!this.#world.hasTool('timer_list')) return undefined;
    const [listed] = await run.runTools([{ name: 'timer_list', args: {} }]);
    const timers = (listed?.result as { timers?: unknown } | undefined)?.timers;
    return Array.isArray(timers) ? (timers as StoredTimerView[]) : undefined;
  }

  /** The timer the sentence means: by name, by the length it was started with, or the only one. */
  async #pickTimer(run: IntentRun): Promise<StoredTimerView | IntentOutcome> {
    const timers = await this.#timers(run);
    if (timers === undefined) return run.say('timers_unavailable');
    if (timers.length === 0) return run.say('no_timers');
    const fitting = fittingTimers(run.slots, timers);
    if (fitting.length === 1) return fitting[0] as StoredTimerView;
    if (fitting.length === 0) return run.say('no_such_timer');
    return run.say('which_timer', { list: this.#timerLines(run.lang, fitting) });
  }

  async #onTimer(run: IntentRun, tool: string, key: AnswerKey, sign?: 1 | -1): Promise<IntentOutcome> {
    const timer = await this.#pickTimer(run);
    if (!isTimer(timer)) return timer;
    const args: Record<string, unknown> = { id: timer.id };
    if (sign !== undefined) args.seconds = sign * timerSeconds(run.slots, '');
    const [result] = await run.runTools([{ name: tool, args }]);
    if (!result?.ok) return run.say('failed', { detail: result?.error?.detail ?? '' });
    const remaining = (result.result as { remaining_s?: unknown } | undefined)?.remaining_s;
    return run.did(key, {
      what: this.#timerName(run.lang, timer),
      time: sayDuration(run.lang, typeof remaining === 'number' ? remaining : 0),
    });
  }

  async #cancelAllTimers(run: IntentRun): Promise<IntentOutcome> {
    if (!this.#world.hasTool('timer_cancel_all')) return run.say('timers_unavailable');
    const [result] = await run.runTools([{ name: 'timer_cancel_all', args: {} }]);
    if (!result?.ok) return run.say('failed', { detail: result?.error?.detail ?? '' });
    const cancelled = (result.result as { cancelled?: unknown } | undefined)?.cancelled;
    return run.did('timers_cancelled', { count: Array.isArray(cancelled) ? cancelled.length : 0 });
  }

  async #timerStatus(run: IntentRun): Promise<IntentOutcome> {
    const timers = await this.#timers(run);
    if (timers === undefined) return run.say('timers_unavailable');
    if (timers.length === 0) return run.say('no_timers');
    const shown = fittingTimers(run.slots, timers);
    if (shown.length === 0) return run.say('no_such_timer');
    return run.say('timer_status', { list: this.#timerLines(run.lang, shown) });
  }

  #timerLines(lang: IntentLanguage, timers: readonly StoredTimerView[]): string {
    return timers
      .map((t) =>
        answer(lang, 'timer_left', {
          what: this.#timerName(lang, t),
          time: sayDuration(lang, t.remaining_s),
          state: t.paused ? answer(lang, 'timer_paused_state') : '',
        }),
      )
      .join(lang === 'zh' ? '；' : '; ');
  }

  /** "the pizza timer", "the 10 minute timer"; 意面计时器, 10分钟的计时器. */
  #timerName(lang: IntentLanguage, timer: Pick<StoredTimerView, 'name' | 'duration_s'>): string {
    if (lang === 'zh') return timer.name === undefined ? `${sayDuration(lang, timer.duration_s)}的计时器` : `${timer.name}计时器`;
    return `the ${timer.name ?? sayDuration(lang, timer.duration_s).replace(/s\b/gu, '')} timer`;
  }

  // ---- lists and announcements ------------------------------------------------------------------

  #listName(run: IntentRun): string {
    const said = textSlot(run.slots.name) ?? SHOPPING_LIST;
    return this.#world.findList(said) ?? said;
  }

  async #listAdd(run: IntentRun, list: string): Promise<IntentOutcome> {
    const item = textSlot(run.slots.item) ?? '';
    const [result] = await run.runTools([{ name: 'list_add', args: { list, item } }]);
    if (!result?.ok) return run.say('failed', { detail: result?.error?.detail ?? '' });
    const added = (result.result as { added?: unknown } | undefined)?.added !== false;
    return run.did(added ? 'list_added' : 'list_already', { item, list: this.#sayList(run.lang, list) });
  }

  async #listComplete(run: IntentRun, list: string): Promise<IntentOutcome> {
    const item = textSlot(run.slots.item) ?? '';
    const [result] = await run.runTools([{ name: 'list_complete', args: { list, item } }]);
    if (!result?.ok) return run.say('failed', { detail: result?.error?.detail ?? '' });
    const done = (result.result as { item?: { text?: unknown } } | undefined)?.item?.text;
    return run.did('list_completed', { item: typeof done === 'string' ? done : item, list: this.#sayList(run.lang, list) });
  }

  async #listShow(run: IntentRun, list: string): Promise<IntentOutcome> {
    const [result] = await run.runTools([{ name: 'list_show', args: { list } }]);
    if (!result?.ok) return run.say('failed', { detail: result?.error?.detail ?? '' });
    const items = (result.result as { items?: Array<{ text?: unknown }> } | undefined)?.items ?? [];
    const texts = items.map((item) => String(item.text ?? ''));
    const said = this.#sayList(run.lang, list);
    if (texts.length === 0) return run.say('list_empty', { list: said });
    return run.say('list_items', { list: said, item: joinNames(run.lang, texts, 20), count: texts.length });
  }

  #sayList(lang: IntentLanguage, list: string): string {
    if (list === SHOPPING_LIST) return lang === 'zh' ? '购物清单' : 'the shopping list';
    return lang === 'zh' ? list : `the ${list}`;
  }

  async #broadcast(run: IntentRun): Promise<IntentOutcome> {
    const message = textSlot(run.slots.message) ?? '';
    const outputs = await this.#world.broadcast(message);
    if (outputs.length === 0) return run.say('no_speakers');
    return run.did('broadcast_done', { what: joinNames(run.lang, outputs) });
  }

  // ---- shared -----------------------------------------------------------------------------------

  /**
   * One service call per entity, in order. The answer names what worked; a critical device held
   * for the owner's confirmation and a failure are said too (the kernel adds how to confirm).
   */
  async #callEach(
    run: IntentRun,
    calls: ReadonlyArray<{ entity: EntityInfo; service: string; data?: Record<string, unknown> }>,
    key: AnswerKey,
    parts: Parameters<typeof answer>[2] = {},
  ): Promise<IntentOutcome> {
    const results = await run.runTools(
      calls.map(({ entity, service, data }) => ({
        name: entity.critical ? 'entity_call_critical' : 'entity_call',
        args: { entity: entity.entity_id, service, ...(data !== undefined && Object.keys(data).length > 0 && { data }) },
      })),
    );
    const done: EntityInfo[] = [];
    const held: EntityInfo[] = [];
    const failed: string[] = [];
    results.forEach((result, index) => {
      const entity = calls[index]?.entity as EntityInfo;
      if (result.ok) done.push(entity);
      else if (result.error?.reason === 'confirmation_required') held.push(entity);
      else failed.push(`${this.#name(run, entity)}: ${result.error?.detail ?? 'failed'}`);
    });
    const sentences: string[] = [];
    if (done.length > 0) sentences.push(answer(run.lang, key, { ...parts, what: this.#describe(run, done) }));
    if (held.length > 0)
      sentences.push(
        answer(run.lang, 'needs_confirmation', {
          what: joinNames(
            run.lang,
            held.map((e) => this.#name(run, e)),
          ),
        }),
      );
    if (failed.length > 0) sentences.push(answer(run.lang, 'failed', { detail: failed.join('; ') }));
    return { text: sentences.join(run.lang === 'zh' ? '' : ' '), acted: done.length > 0 || held.length > 0 };
  }

  /** What the reply calls an entity: as the person said it, else its name in the reply's language. */
  #name(run: IntentRun, entity: EntityInfo): string {
    return sayName(entity, run.lang, run.heard);
  }

  /** An area's name in the reply: as said, else in the reply's language. */
  #areaName(run: IntentRun, areaId: string | null): string | undefined {
    const area = areaId === null ? undefined : this.#world.areas().find((a) => a.id === areaId);
    return area === undefined ? undefined : sayName(area, run.lang, run.heard);
  }

  /** Names in the reply for registered names (a question back, what a device cannot do): each entity's, as #name says it. */
  sayNames(names: readonly string[], lang: IntentLanguage, said?: string): string[] {
    const words = heard(said);
    const entities = this.#world.entities();
    return names.map((name) => {
      const entity = entities.find((e) => e.name === name);
      return entity === undefined ? name : sayName(entity, lang, words);
    });
  }

  /** The entity's name, with its area when another of `among` has the same name ("Lamp (Hall)"). */
  #label(run: IntentRun, among: readonly EntityInfo[], entity: EntityInfo): string {
    const name = this.#name(run, entity);
    if (!among.some((other) => other !== entity && other.name === entity.name)) return name;
    const area = this.#areaName(run, entity.area);
    return area === undefined ? name : `${name} (${area})`;
  }

  /** A few devices by name; many as "5 lights in the kitchen". */
  #describe(run: IntentRun, entities: readonly EntityInfo[]): string {
    const { lang } = run;
    if (entities.length <= 3)
      return joinNames(
        lang,
        entities.map((e) => this.#name(run, e)),
      );
    const domains = new Set(entities.map((e) => e.domain));
    const areas = new Set(entities.map((e) => e.area));
    const noun = domains.size === 1 ? DOMAIN_NOUNS[[...domains][0] as string] : undefined;
    const areaId = areas.size === 1 ? [...areas][0] : null;
    const area = areaId === null || areaId === undefined ? undefined : this.#areaName(run, areaId);
    if (lang === 'zh') return `${area ?? ''}${area ? '的' : ''}${entities.length}个${noun?.[1] ?? '设备'}`;
    return `${entities.length} ${noun?.[0] ?? 'devices'}${area ? ` in the ${area}` : ''}`;
  }

  /** What was asked for, for "I couldn't find …": "lights in the attic", "阁楼的灯". */
  #describeQuery(run: IntentRun, query: TargetQuery): string {
    const { lang } = run;
    const noun = query.domain === undefined ? undefined : DOMAIN_NOUNS[query.domain];
    const thing =
      query.name !== undefined && query.name !== ALL_NAMES
        ? query.name
        : (noun?.[lang === 'zh' ? 1 : 0] ?? (lang === 'zh' ? '设备' : 'devices'));
    // The place as said, or in the reply's language ("阁楼的灯", not "Attic的灯", for an attic with that alias).
    const known = query.area === undefined ? undefined : findArea(query.area, this.#world.areas());
    const area = known === undefined ? query.area : sayName(known, lang, run.heard);
    const place = area ?? query.floor;
    if (lang === 'zh') return place === undefined ? thing : `${place}的${thing}`;
    if (area !== undefined) return `${thing} in the ${area}`;
    return query.floor === undefined ? `any ${thing}` : `${thing} on the ${query.floor}`;
  }

  #format(lang: IntentLanguage, options: Intl.DateTimeFormatOptions): string {
    const locale = lang === 'zh' ? 'zh-CN' : 'en-GB';
    return new Intl.DateTimeFormat(locale, { ...options, ...(this.#world.timeZone && { timeZone: this.#world.timeZone }) }).format(
      new Date(this.#world.now()),
    );
  }
}

/** A timer as timer_list reports it. */
interface StoredTimerView {
  id: string;
  name?: string;
  message: string;
  duration_s: number;
  remaining_s: number;
  paused: boolean;
}

function isTimer(value: StoredTimerView | IntentOutcome): value is StoredTimerView {
  return 'id' in value;
}

/** The timers a sentence's name and start length (if it says them) fit. */
function fittingTimers(slots: Readonly<Record<string, SlotValue>>, timers: readonly StoredTimerView[]): StoredTimerView[] {
  const name = textSlot(slots.name)?.toLowerCase();
  const started = timerSeconds(slots, 'start_');
  return timers.filter(
    (t) => (name === undefined || (t.name ?? t.message).toLowerCase().includes(name)) && (started === 0 || t.duration_s === started),
  );
}

function textSlot(value: SlotValue | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The recogniser's hours/minutes/seconds slots (optionally prefixed) as seconds. */
function timerSeconds(slots: Readonly<Record<string, SlotValue>>, prefix: string): number {
  const part = (unit: string) => {
    const value = slots[`${prefix}${unit}`];
    return typeof value === 'number' ? value : 0;
  };
  return part('hours') * 3600 + part('minutes') * 60 + part('seconds');
}

/** Whether an entity is in the state a question asks about ("is the door locked", "any light on"). */
function matchesState(entity: EntityInfo, wanted: string): boolean {
  // A door contact's `on` is open (the state words of its device class).
  if (stateMatches(entity, entity.state, wanted)) return true;
  // A cover half open is open; a person in a named zone is not home.
  if (wanted === 'open')
    return entity.state === 'opening' || (typeof entity.attributes.current_position === 'number' && entity.attributes.current_position > 0);
  return false;
}

function unitOf(entity: EntityInfo): string {
  const unit = entity.attributes.temperature_unit ?? entity.unit;
  return typeof unit === 'string' ? unit : '°';
}
