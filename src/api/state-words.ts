/**
 * Entity states in words, in English and Chinese, by domain and device class: a door contact's
 * `on` is "Open" / "开着", a motion sensor's is "Detected" / "检测到移动", a switch's "On" / "开".
 * The stored state stays Home Assistant's (`on`, `off`, `locked`, ...); only what people read
 * changes. One table for everyone who shows a state: `homeagentctl entities`, the web page's
 * entity cards (through src/sdk/api.ts; this file is plain data and imports nothing, so the page
 * bundles it without any of the daemon) and the local intents' replies. The words follow Home
 * Assistant's device-class state translations, so a house moved from Home Assistant reads the same.
 *
 * Two forms: a label (a card, a table cell: "Open", "开") and a phrase for a sentence ("the door
 * is open", "门开着"). English phrases are the labels in lower case; Chinese ones differ where a
 * bare label does not read as a predicate ("灯开" → "灯开着").
 */

export type StateLanguage = 'en' | 'zh';

/** What decides the words: the entity's domain and device class (either may be unknown). */
export interface StateKind {
  domain?: string | null;
  device_class?: string | null;
}

/** English label, Chinese label, and the Chinese phrase when it is not the label. */
type Words = readonly [en: string, zh: string, zhPhrase?: string];
type WordTable = Readonly<Record<string, Words>>;

const ON_OFF: WordTable = { on: ['On', '开', '开着'], off: ['Off', '关', '关着'] };
const OPEN_CLOSED: Words[] = [
  ['Open', '开着'],
  ['Closed', '关着'],
];

/** A binary sensor's `on` and `off` per device class (Home Assistant's binary_sensor translations). */
const BINARY_CLASSES: Readonly<Record<string, readonly [on: Words, off: Words]>> = {
  battery: [
    ['Low', '电量低'],
    ['Normal', '电量正常'],
  ],
  battery_charging: [
    ['Charging', '充电中', '在充电'],
    ['Not charging', '未充电', '没在充电'],
  ],
  carbon_monoxide: [
    ['Detected', '检测到一氧化碳'],
    ['Clear', '无一氧化碳'],
  ],
  cold: [
    ['Cold', '过冷'],
    ['Normal', '正常'],
  ],
  connectivity: [
    ['Connected', '已连接'],
    ['Disconnected', '已断开'],
  ],
  door: OPEN_CLOSED as [Words, Words],
  garage_door: OPEN_CLOSED as [Words, Words],
  opening: OPEN_CLOSED as [Words, Words],
  window: OPEN_CLOSED as [Words, Words],
  gas: [
    ['Detected', '检测到燃气'],
    ['Clear', '无燃气'],
  ],
  heat: [
    ['Hot', '过热'],
    ['Normal', '正常'],
  ],
  light: [
    ['Light detected', '有光'],
    ['No light', '无光'],
  ],
  // Home Assistant's lock class: on means unlocked.
  lock: [
    ['Unlocked', '未锁', '没锁'],
    ['Locked', '已锁', '锁着'],
  ],
  moisture: [
    ['Wet', '潮湿'],
    ['Dry', '干燥'],
  ],
  motion: [
    ['Detected', '检测到移动'],
    ['Clear', '未检测到移动'],
  ],
  moving: [
    ['Moving', '移动中', '在移动'],
    ['Not moving', '静止'],
  ],
  occupancy: [
    ['Detected', '有人'],
    ['Clear', '无人'],
  ],
  presence: [
    ['Detected', '有人'],
    ['Clear', '无人'],
  ],
  plug: [
    ['Plugged in', '已插入'],
    ['Unplugged', '已拔出'],
  ],
  power: [
    ['Power detected', '有电'],
    ['No power', '无电'],
  ],
  problem: [
    ['Problem', '有问题'],
    ['OK', '正常'],
  ],
  running: [
    ['Running', '运行中', '在运行'],
    ['Not running', '未运行', '没在运行'],
  ],
  safety: [
    ['Unsafe', '不安全'],
    ['Safe', '安全'],
  ],
  smoke: [
    ['Detected', '检测到烟雾'],
    ['Clear', '无烟雾'],
  ],
  sound: [
    ['Detected', '检测到声音'],
    ['Clear', '安静'],
  ],
  tamper: [
    ['Tampering detected', '检测到拆动'],
    ['Clear', '正常'],
  ],
  update: [
    ['Update available', '有更新'],
    ['Up-to-date', '已是最新'],
  ],
  vibration: [
    ['Detected', '检测到振动'],
    ['Clear', '无振动'],
  ],
};

const COVER: WordTable = {
  open: ['Open', '开着'],
  closed: ['Closed', '关着'],
  opening: ['Opening', '正在打开'],
  closing: ['Closing', '正在关闭'],
  stopped: ['Stopped', '已停止'],
};

/** The states of each domain that has words of its own (binary sensors: {@link BINARY_CLASSES}). */
const DOMAIN_WORDS: Readonly<Record<string, WordTable>> = {
  switch: ON_OFF,
  light: ON_OFF,
  fan: ON_OFF,
  siren: ON_OFF,
  script: { on: ['Running', '运行中', '在运行'], off: ['Off', '关', '关着'] },
  binary_sensor: ON_OFF,
  cover: COVER,
  valve: COVER,
  lock: {
    locked: ['Locked', '已锁', '锁着'],
    unlocked: ['Unlocked', '未锁', '没锁'],
    jammed: ['Jammed', '卡住了'],
    locking: ['Locking', '正在上锁'],
    unlocking: ['Unlocking', '正在解锁'],
    open: ['Open', '开着'],
    opening: ['Opening', '正在打开'],
  },
  vacuum: {
    cleaning: ['Cleaning', '清扫中', '在清扫'],
    docked: ['Docked', '已回座', '在充电座上'],
    returning: ['Returning to dock', '正在回充电座'],
    idle: ['Idle', '空闲'],
    paused: ['Paused', '已暂停', '暂停了'],
    error: ['Error', '出错', '出错了'],
  },
  media_player: {
    on: ['On', '开', '开着'],
    off: ['Off', '关', '关着'],
    idle: ['Idle', '空闲'],
    playing: ['Playing', '播放中', '在播放'],
    paused: ['Paused', '已暂停', '暂停了'],
    standby: ['Standby', '待机'],
    buffering: ['Buffering', '缓冲中'],
  },
  climate: {
    off: ['Off', '关', '关着'],
    heat: ['Heat', '制热'],
    cool: ['Cool', '制冷'],
    auto: ['Auto', '自动'],
    heat_cool: ['Heat/Cool', '制热/制冷'],
    dry: ['Dry', '除湿'],
    fan_only: ['Fan only', '仅送风'],
  },
  person: { home: ['Home', '在家'], not_home: ['Away', '不在家'] },
  camera: { idle: ['Idle', '空闲'], recording: ['Recording', '录像中'], streaming: ['Streaming', '直播中'] },
  weather: {
    'clear-night': ['Clear, night', '晴朗的夜晚'],
    cloudy: ['Cloudy', '多云'],
    exceptional: ['Exceptional', '异常天气'],
    fog: ['Fog', '有雾'],
    hail: ['Hail', '冰雹'],
    lightning: ['Lightning', '雷暴'],
    'lightning-rainy': ['Lightning, rainy', '雷阵雨'],
    partlycloudy: ['Partly cloudy', '局部多云'],
    pouring: ['Pouring', '大雨'],
    rainy: ['Rainy', '下雨'],
    snowy: ['Snowy', '下雪'],
    'snowy-rainy': ['Snowy, rainy', '雨夹雪'],
    sunny: ['Sunny', '晴'],
    windy: ['Windy', '有风'],
    'windy-variant': ['Windy, cloudy', '多云有风'],
  },
};

/** Every entity's: the device does not answer. */
const UNAVAILABLE: Words = ['Unavailable', '不可用', '连不上'];
/** A null state (never reported) and Home Assistant's `unknown`. */
const UNKNOWN: Words = ['Unknown', '未知', '状态未知'];

/**
 * States said without a kind (a state a question asks about, "is anything open"), and the states
 * of a kind whose table lacks them: the plain meaning of the word.
 */
const PLAIN: WordTable = Object.assign(
  {},
  DOMAIN_WORDS.vacuum,
  DOMAIN_WORDS.media_player,
  DOMAIN_WORDS.lock,
  COVER,
  DOMAIN_WORDS.person,
  ON_OFF,
);

function wordsFor(kind: StateKind, state: string | null): Words | undefined {
  if (state === null || state === 'unknown') return UNKNOWN;
  if (state === 'unavailable') return UNAVAILABLE;
  const domain = kind.domain ?? undefined;
  const deviceClass = kind.device_class ?? undefined;
  if (domain === 'binary_sensor' && deviceClass !== undefined && (state === 'on' || state === 'off')) {
    const pair = BINARY_CLASSES[deviceClass];
    if (pair !== undefined) return state === 'on' ? pair[0] : pair[1];
  }
  const table = domain === undefined ? undefined : DOMAIN_WORDS[domain];
  if (table !== undefined) return Object.hasOwn(table, state) ? table[state] : undefined;
  // A sensor's text, a number entity's value: said as they are.
  if (domain === 'sensor' || domain === 'number' || domain === 'button' || domain === 'scene') return undefined;
  return Object.hasOwn(PLAIN, state) ? PLAIN[state] : undefined;
}

/**
 * The label of a state for a card or a table ("Open", "开着", "Detected", "有人"), or undefined when
 * it has no words (a number, a sensor's own text): show the state as it is then.
 */
export function stateLabel(language: StateLanguage, kind: StateKind, state: string | number | null): string | undefined {
  if (typeof state === 'number') return undefined;
  const words = wordsFor(kind, state);
  if (words === undefined) return undefined;
  return language === 'zh' ? words[1] : words[0];
}

/** The state as a sentence says it ("is open", "开着", "锁着"), or undefined like {@link stateLabel}. */
export function statePhrase(language: StateLanguage, kind: StateKind, state: string | number | null): string | undefined {
  if (typeof state === 'number') return undefined;
  const words = wordsFor(kind, state);
  if (words === undefined) return undefined;
  if (language === 'zh') return words[2] ?? words[1];
  // "OK" and "Up-to-date" keep their case only as labels; a sentence reads them in lower case too.
  return words[0].toLowerCase();
}

/**
 * A state with its unit for display: the label when there is one, else the state as it is
 * ("21.5 °C", "heating"); `unknown` in the language for null.
 */
export function showStateIn(language: StateLanguage, kind: StateKind, state: string | number | null, unit?: string | null): string {
  if (typeof state === 'number') return unit === null || unit === undefined || unit === '' ? String(state) : `${state} ${unit}`;
  return stateLabel(language, kind, state) ?? String(state);
}

/**
 * Whether an entity's state is the state word a question asks about: a door contact's `on` is
 * `open`, a lock class binary sensor's `on` is `unlocked` (the words of its device class).
 */
export function stateMatches(kind: StateKind, state: string | number | null, wanted: string): boolean {
  if (state === wanted) return true;
  if (kind.domain !== 'binary_sensor' || typeof state !== 'string') return false;
  const said = statePhrase('en', kind, state);
  return said !== undefined && said === wanted.replaceAll('_', ' ');
}
