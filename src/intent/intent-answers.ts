/**
 * What the local intent engine says, in the language the person spoke (issue 11). One table per
 * language with the same keys, so an answer missing in one language fails to compile rather than
 * falling back to English at run time. Texts take already-phrased parts (device lists, durations)
 * made by the helpers below, which know each language's way of joining and counting.
 */
import { type StateKind, statePhrase } from '../api/state-words.js';
import type { IntentLanguage } from './intent-sentences.js';

export interface AnswerParts {
  what: string;
  value: string;
  detail: string;
  count: number;
  state: string;
  list: string;
  item: string;
  time: string;
}

type Phrase = (p: AnswerParts) => string;

const capital = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

const EN = {
  turned_on: (p) => `Turned on ${p.what}.`,
  turned_off: (p) => `Turned off ${p.what}.`,
  opened: (p) => `Opened ${p.what}.`,
  closed: (p) => `Closed ${p.what}.`,
  locked: (p) => `Locked ${p.what}.`,
  unlocked: (p) => `Unlocked ${p.what}.`,
  activated: (p) => `Started ${p.what}.`,
  brightness_set: (p) => `Set ${p.what} to ${p.value}% brightness.`,
  colour_set: (p) => `Set ${p.what} to ${p.value}.`,
  position_set: (p) => `Set ${p.what} to ${p.value}%.`,
  temperature_set: (p) => `Set ${p.what} to ${p.value}.`,
  volume_set: (p) => `Set the volume of ${p.what} to ${p.value}%.`,
  media_paused: (p) => `Paused ${p.what}.`,
  media_resumed: (p) => `Resumed ${p.what}.`,
  media_next: (p) => `Skipped to the next item on ${p.what}.`,
  media_previous: (p) => `Went back to the previous item on ${p.what}.`,
  media_playing: (p) => `Playing ${p.value} on ${p.what}.`,
  vacuum_started: (p) => `Started ${p.what}.`,
  vacuum_returning: (p) => `Sent ${p.what} back to its dock.`,
  state_is: (p) => `${p.what} is ${p.state}.`,
  state_list: (p) => `${capital(p.what)}.`,
  state_yes: (p) => `Yes, ${p.what} is ${p.state}.`,
  state_no: (p) => `No, ${p.what} is ${p.state}.`,
  some_are: (p) => (p.count === 1 ? `Yes, 1 is ${p.state}: ${p.what}.` : `Yes, ${p.count} are ${p.state}: ${p.what}.`),
  none_are: (p) => `No, none ${p.what === '' ? '' : `of ${p.what} `}is ${p.state}.`,
  temperature_is: (p) => `${p.what}: ${p.value}.`,
  timer_started: (p) => `Timer set for ${p.time}${p.what === '' ? '' : ` (${p.what})`}.`,
  timer_cancelled: (p) => `Cancelled ${p.what}.`,
  timers_cancelled: (p) =>
    p.count === 0 ? 'There were no timers to cancel.' : `Cancelled ${p.count === 1 ? 'the timer' : `all ${p.count} timers`}.`,
  timer_paused: (p) => `Paused ${p.what}.`,
  timer_resumed: (p) => `Resumed ${p.what}.`,
  timer_adjusted: (p) => `${capital(p.what)} now has ${p.time} left.`,
  timer_status: (p) => p.list,
  timer_done: (p) => `Time's up${p.what === '' ? '' : ` (${p.what})`}: ${p.item}.`,
  timer_left: (p) => `${capital(p.what)}: ${p.time} left${p.state === '' ? '' : ` (${p.state})`}`,
  timer_paused_state: () => 'paused',
  no_timers: () => 'There are no timers running.',
  no_such_timer: () => "I couldn't find that timer.",
  which_timer: (p) => `Which timer do you mean? ${p.list}`,
  timers_unavailable: () => 'Timers are not available right now (the timer plugin is not running).',
  time_now: (p) => `It is ${p.time}.`,
  date_today: (p) => `Today is ${p.time}.`,
  nevermind: () => 'OK.',
  respond: () => "Hello! I'm listening. Ask me to switch something, set a timer, or what time it is.",
  broadcast_done: (p) => `Announced on ${p.what}.`,
  no_speakers: () => 'There are no speakers to announce on.',
  list_added: (p) => `Added ${p.item} to ${p.list}.`,
  list_already: (p) => `${p.item} is already on ${p.list}.`,
  list_completed: (p) => `Checked off ${p.item} on ${p.list}.`,
  list_items: (p) => `On ${p.list}: ${p.item}.`,
  list_empty: (p) => `${capital(p.list)} is empty.`,
  weather_is: (p) => `The weather: ${p.state}${p.value === '' ? '' : `, ${p.value}`}.`,
  no_weather: () => 'No weather source is set up (core.intent.weather_entity names a weather entity or a temperature sensor).',
  not_found: (p) => `I couldn't find ${p.what}.`,
  no_player: (p) => `There is no media player${p.what === '' ? '' : ` ${p.what}`} that can do that.`,
  unsupported: (p) => `${p.what} can't do that${p.detail === '' ? '' : `: ${p.detail}`}.`,
  failed: (p) => `That didn't work: ${p.detail}`,
  needs_confirmation: (p) => `${p.what} is a critical device, so this waits for the owner's confirmation.`,
  floor_unknown: (p) => `No room is set up on ${p.what} (core.home.areas lists each room's floor).`,
  not_understood: () =>
    "Sorry, I didn't understand that, and I am offline: no language model is set up to help (connect one with `homeagentctl config set core.llm.api_key <key>`, see the README). Try for example “turn on the kitchen light”, “set a timer for 10 minutes” or “what time is it”.",
  unsure: (p) => `I'm not sure what you meant. Did you mean “${p.value}”? Please say it again with the exact name.`,
  ask_which: (p) => `Which one do you mean: ${p.what}?`,
  only_on_off: (p) => `${capital(p.what)} can only be switched on and off, not dimmed.`,
  no_colour: (p) => `${capital(p.what)} cannot change colour${p.detail === '' ? '' : `; it can ${p.detail}`}.`,
  cannot_do: (p) => `${capital(p.what)} cannot do that.`,
} satisfies Record<string, Phrase>;

export type AnswerKey = keyof typeof EN;

const ZH: Record<AnswerKey, Phrase> = {
  turned_on: (p) => `已打开${p.what}。`,
  turned_off: (p) => `已关闭${p.what}。`,
  opened: (p) => `已打开${p.what}。`,
  closed: (p) => `已关上${p.what}。`,
  locked: (p) => `已锁上${p.what}。`,
  unlocked: (p) => `已解锁${p.what}。`,
  activated: (p) => `已启动${p.what}。`,
  brightness_set: (p) => `已把${p.what}的亮度调到${p.value}%。`,
  colour_set: (p) => `已把${p.what}调成${p.value}。`,
  position_set: (p) => `已把${p.what}调到${p.value}%。`,
  temperature_set: (p) => `已把${p.what}设为${p.value}。`,
  volume_set: (p) => `已把${p.what}的音量调到${p.value}%。`,
  media_paused: (p) => `${p.what}已暂停。`,
  media_resumed: (p) => `${p.what}已继续播放。`,
  media_next: (p) => `${p.what}已切到下一首。`,
  media_previous: (p) => `${p.what}已回到上一首。`,
  media_playing: (p) => `正在${p.what}上播放${p.value}。`,
  vacuum_started: (p) => `${p.what}开始清扫了。`,
  vacuum_returning: (p) => `${p.what}正在回充电座。`,
  state_is: (p) => `${p.what}${p.state}。`,
  state_list: (p) => `${p.what}。`,
  state_yes: (p) => `是的，${p.what}${p.state}。`,
  state_no: (p) => `没有，${p.what}${p.state}。`,
  some_are: (p) => `有${p.count}个${p.state}：${p.what}。`,
  none_are: (p) => `没有，${p.what}没有${p.state}的。`,
  temperature_is: (p) => `${p.what}：${p.value}。`,
  timer_started: (p) => `已设好${p.time}的计时器${p.what === '' ? '' : `（${p.what}）`}。`,
  timer_cancelled: (p) => `已取消${p.what}。`,
  timers_cancelled: (p) => (p.count === 0 ? '没有可以取消的计时器。' : `已取消全部${p.count}个计时器。`),
  timer_paused: (p) => `已暂停${p.what}。`,
  timer_resumed: (p) => `${p.what}已继续。`,
  timer_adjusted: (p) => `${p.what}还剩${p.time}。`,
  timer_status: (p) => p.list,
  timer_done: (p) => `时间到了${p.what === '' ? '' : `（${p.what}）`}：${p.item}。`,
  timer_left: (p) => `${p.what}：还剩${p.time}${p.state === '' ? '' : `（${p.state}）`}`,
  timer_paused_state: () => '已暂停',
  no_timers: () => '现在没有计时器。',
  no_such_timer: () => '没有找到这个计时器。',
  which_timer: (p) => `你说的是哪个计时器？${p.list}`,
  timers_unavailable: () => '现在用不了计时器（计时器插件没有运行）。',
  time_now: (p) => `现在是${p.time}。`,
  date_today: (p) => `今天是${p.time}。`,
  nevermind: () => '好的。',
  respond: () => '你好！我在听。可以让我开关设备、设个计时器，或者问我现在几点。',
  broadcast_done: (p) => `已在${p.what}上广播。`,
  no_speakers: () => '没有可以广播的音箱。',
  list_added: (p) => `已把${p.item}加到${p.list}。`,
  list_already: (p) => `${p.item}已经在${p.list}里了。`,
  list_completed: (p) => `已在${p.list}里勾掉${p.item}。`,
  list_items: (p) => `${p.list}里有：${p.item}。`,
  list_empty: (p) => `${p.list}是空的。`,
  weather_is: (p) => `天气：${p.state}${p.value === '' ? '' : `，${p.value}`}。`,
  no_weather: () => '还没有设置天气来源（core.intent.weather_entity 填一个天气实体或温度传感器）。',
  not_found: (p) => `没有找到${p.what}。`,
  no_player: (p) => `没有${p.what === '' ? '' : `${p.what}的`}媒体播放器能做这个。`,
  unsupported: (p) => `${p.what}做不到${p.detail === '' ? '' : `：${p.detail}`}。`,
  failed: (p) => `没有成功：${p.detail}`,
  needs_confirmation: (p) => `${p.what}是重要设备，需要主人确认后才会执行。`,
  floor_unknown: (p) => `${p.what}还没有设置房间（在 core.home.areas 里给房间填上楼层）。`,
  not_understood: () =>
    '抱歉，我没听懂，现在也没有接入语言模型（可以用 `homeagentctl config set core.llm.api_key <key>` 接入一个，见 README）。可以试试“打开厨房的灯”“设一个十分钟的计时器”或“现在几点”。',
  unsure: (p) => `我不太确定你的意思。你是说“${p.value}”吗？请用准确的名字再说一遍。`,
  ask_which: (p) => `你说的是哪一个：${p.what}？`,
  only_on_off: (p) => `${p.what}只能开关，不能调亮度。`,
  no_colour: (p) => `${p.what}不能调颜色${p.detail === '' ? '' : `，只能${p.detail}`}。`,
  cannot_do: (p) => `${p.what}做不到这个。`,
};

const TABLES: Record<IntentLanguage, Record<AnswerKey, Phrase>> = { en: EN, zh: ZH };

const EMPTY: AnswerParts = { what: '', value: '', detail: '', count: 0, state: '', list: '', item: '', time: '' };

export function answer(language: IntentLanguage, key: AnswerKey, parts: Partial<AnswerParts> = {}): string {
  return TABLES[language][key]({ ...EMPTY, ...parts });
}

/** "A", "A and B", "A, B and C"; 、 and 和 in Chinese. Longer lists end with the number left out. */
export function joinNames(language: IntentLanguage, names: readonly string[], max = 5): string {
  const shown = names.slice(0, max);
  const rest = names.length - shown.length;
  if (language === 'zh') {
    const head = shown.join('、');
    return rest > 0 ? `${head}等${names.length}个` : shown.length > 1 ? `${shown.slice(0, -1).join('、')}和${shown.at(-1)}` : head;
  }
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`;
  return shown.length > 1 ? `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}` : (shown[0] ?? '');
}

/** A length in seconds as people say it: "1 hour 30 minutes", "1小时30分钟". */
export function sayDuration(language: IntentLanguage, totalSeconds: number): string {
  const seconds = Math.max(0, Math.round(totalSeconds));
  const parts: Array<[number, string, string]> = [
    [Math.floor(seconds / 3600), 'hour', '小时'],
    [Math.floor((seconds % 3600) / 60), 'minute', '分钟'],
    [seconds % 60, 'second', '秒'],
  ];
  const said = parts.filter(([n]) => n > 0);
  if (said.length === 0) return language === 'zh' ? '0秒' : '0 seconds';
  if (language === 'zh') return said.map(([n, , zh]) => `${n}${zh}`).join('');
  return said.map(([n, en]) => `${n} ${en}${n === 1 ? '' : 's'}`).join(' ');
}

/**
 * An entity's state as a reply says it. With the entity's kind (domain and device class) a door
 * contact's `on` is "open" / "开着" and a motion sensor's "detected" (src/api/state-words.ts, the
 * words the CLI and the page show too); without one (the state a question asked about) the word's
 * plain meaning. Unknown states are said as they are.
 */
export function sayState(language: IntentLanguage, state: string | number | null, unit?: string | null, kind: StateKind = {}): string {
  if (typeof state === 'number') {
    const text = `${state}${unit ? (language === 'zh' || unit.startsWith('°') || unit === '%' ? unit : ` ${unit}`) : ''}`;
    return language === 'zh' ? `是${text}` : text;
  }
  const word = statePhrase(language, kind, state);
  if (word !== undefined) return word;
  return language === 'zh' ? `是${state}` : String(state);
}

/**
 * Weather conditions Home Assistant's weather entities report, as an English sentence says them
 * ("it is foggy"); Chinese says the condition's own words (state-words.ts).
 */
const CONDITIONS_EN: Record<string, string> = {
  'clear-night': 'clear',
  cloudy: 'cloudy',
  exceptional: 'exceptional',
  fog: 'foggy',
  hail: 'hail',
  lightning: 'thunderstorms',
  'lightning-rainy': 'thunderstorms with rain',
  partlycloudy: 'partly cloudy',
  pouring: 'pouring rain',
  rainy: 'rainy',
  snowy: 'snowy',
  'snowy-rainy': 'sleet',
  sunny: 'sunny',
  windy: 'windy',
  'windy-variant': 'windy and cloudy',
};

export function sayCondition(language: IntentLanguage, condition: string): string {
  if (language === 'zh') return statePhrase('zh', { domain: 'weather' }, condition) ?? condition;
  return CONDITIONS_EN[condition] ?? condition;
}
