/**
 * Chinese sentences for every intent of the local intent engine (issue 11): device control, states
 * and temperatures, light settings, covers and valves, locks, time and date, timers, lists, media,
 * vacuums, weather and small talk. Matching is per character, so templates are written without
 * spaces; shared pieces (politeness, final particles, "all", the place of a device) are constants so
 * that the many optional particles of spoken Chinese do not multiply the templates.
 *
 * Measured by `homeagent intent-eval` on home-assistant/intents' zh-cn tests and on our own
 * Chinese tests (test/fixtures/intents/zh), which cover the intents zh-cn has no examples for.
 *
 * Slot naming follows src/intent/sentences/en-assist.ts: {duration} is the timer's length,
 * {duration:start_duration} picks out a running timer, {timer_name:name} names one,
 * {list_name:name} is a to-do list and {volume:volume_level} the volume to set. Locks follow Home
 * Assistant: locking is HassTurnOn, unlocking HassTurnOff.
 *
 * Order matters: on equal scores the group declared first wins, so groups tied to one domain
 * (locks, covers, vacuums, weather, people) come before the generic "turn on {name}" forms.
 */
import type { IntentSentences } from '../intent-sentences.js';
import type { SlotValue } from '../template-grammar.js';

type Slots = Record<string, SlotValue>;

// Politeness before a request and particles after it carry no meaning.
const PLEASE = '[(请|请你|帮我|帮忙|麻烦|麻烦你|给我|你)]';
const ONCE = '[(一下|下)]';
const END = '[(一下|下)][(了|吧|了吧|啊|呀|哦|呢|好吗)]';
const Q = '[(吗|么|没|没有|不|呢|吧|啊|呀)]';
const ALL = '[(所有|全部|所有的|全部的|全屋的|家里的|家里所有的)]';
const BOTH = '[(都|全部|全都|全|统统)]';
const AT = '({area}|{floor})';

const zh = (intent: string, templates: string[], slots?: Slots): IntentSentences =>
  slots === undefined ? { intent, language: 'zh', templates } : { intent, language: 'zh', templates, slots };

// ---------------------------------------------------------------------------------------------
// Turning things on and off.

const ON_BEFORE = '(打开|开启|开|启动|启用)';
const ON_AFTER = '(打开|开开|开启|开|启动|启用)';
const OFF_BEFORE = '(关闭|关掉|关上|关|停掉)';
const OFF_AFTER = '(关闭|关掉|关上|关了|关|停掉|停了)';

/** The alternatives of `(a|b|c)` longer than one character. */
const longWords = (alternatives: string): string =>
  `(${alternatives
    .slice(1, -1)
    .split('|')
    .filter((word) => word.length > 1)
    .join('|')})`;

/**
 * "打开X", "把X打开", "X打开一下": the three orders a request takes around a thing. Said after the
 * thing without 把, a one-character verb needs its particle ("热水器关一下"): "卧室开关" is a name,
 * not "卧室开" switched off.
 */
function switchTemplates(thing: string, before: string, after: string): string[] {
  return [
    `${PLEASE}${before}${ONCE}${thing}${END}`,
    `${PLEASE}把${thing}${BOTH}${after}${END}`,
    `${thing}${BOTH}${PLEASE}${longWords(after)}${END}`,
    `${thing}${BOTH}${PLEASE}${after}(一下|下|吧|了|了吧|一下吧|啊|呀)`,
  ];
}

// Devices said by their kind: the domain (and a device class where Home Assistant needs one).
// Fans, switches and valves in a place say `name: all` (a place, not a device called so), as
// Home Assistant's fan handler expects.
const FAN_NOUN = '(风扇|电扇|电风扇)';
const KINDS: ReadonlyArray<{ noun: string; slots: Slots; placed?: Slots }> = [
  { noun: '(灯|灯光|电灯|照明)', slots: { domain: 'light' } },
  { noun: FAN_NOUN, slots: { domain: 'fan' }, placed: { name: 'all' } },
  { noun: '开关', slots: { domain: 'switch' }, placed: { name: 'all' } },
  { noun: '(阀门|水阀)', slots: { domain: 'valve' }, placed: { name: 'all' } },
];

function kindGroups(intent: 'HassTurnOn' | 'HassTurnOff', before: string, after: string): IntentSentences[] {
  return KINDS.flatMap(({ noun, slots, placed }) => [
    zh(intent, switchTemplates(`${ALL}${AT}[的]${ALL}${noun}`, before, after), { ...slots, ...placed }),
    // No place: the satellite's room, or the whole home when "all" is said.
    zh(intent, switchTemplates(noun, before, after), slots),
    zh(intent, switchTemplates(`(所有|全部|所有的|全部的|全屋的|家里的|家里所有的)${noun}`, before, after), {
      ...slots,
      scope: 'home',
    }),
  ]);
}

// "客厅开灯", "关灯": the light verbs said without a noun phrase.
const lightVerbs = (intent: 'HassTurnOn' | 'HassTurnOff', verb: string): IntentSentences[] => [
  zh(intent, [`${PLEASE}${AT}[的]${PLEASE}${verb}${ONCE}(灯|电灯)${END}`], { domain: 'light' }),
  zh(intent, [`${PLEASE}${verb}${ONCE}(灯|电灯)${END}`], { domain: 'light' }),
];

const byName = (intent: 'HassTurnOn' | 'HassTurnOff', before: string, after: string): IntentSentences =>
  zh(intent, switchTemplates(`[{area}[的]]{name}`, before, after));

// Covers open and close (HassTurnOn/Off of the cover domain); the noun tells the device class.
const COVER_NOUNS: ReadonlyArray<{ noun: string; device_class: string }> = [
  { noun: '(窗帘|窗户帘|纱帘)', device_class: 'curtain' },
  { noun: '(百叶窗|百叶帘)', device_class: 'blind' },
  { noun: '(遮阳帘|遮光帘|卷帘)', device_class: 'shade' },
  { noun: '(卷帘门|卷闸门)', device_class: 'shutter' },
  { noun: '车库门', device_class: 'garage' },
  { noun: '(遮阳篷|雨棚)', device_class: 'awning' },
  { noun: '大门', device_class: 'gate' },
];
const COVER_OPEN_BEFORE = '(打开|拉开|开启|开|升起|卷起|收起)';
const COVER_OPEN_AFTER = '(打开|拉开|开开|开启|开|升起来|升起|升上去|拉起来|卷起来|收起来)';
const COVER_CLOSE_BEFORE = '(关闭|关上|关掉|关|拉上|合上|放下|降下)';
const COVER_CLOSE_AFTER = '(关闭|关上|关掉|关了|关|拉上|合上|放下来|放下|降下来|降下|拉下来)';

function coverGroups(intent: 'HassTurnOn' | 'HassTurnOff', before: string, after: string): IntentSentences[] {
  return [
    zh(intent, switchTemplates('[{area}[的]]{name}', before, after), { domain: 'cover' }),
    ...COVER_NOUNS.flatMap(({ noun, device_class }) => {
      const slots = { domain: 'cover', device_class };
      return [
        zh(intent, switchTemplates(`${ALL}${AT}[的]${ALL}${noun}`, before, after), { ...slots, name: 'all' }),
        zh(intent, switchTemplates(noun, before, after), slots),
        zh(intent, switchTemplates(`(所有|全部|所有的|全部的|家里的)${noun}`, before, after), { ...slots, scope: 'home' }),
      ];
    }),
  ];
}

// Locks: locking is HassTurnOn, unlocking HassTurnOff (Home Assistant's lock convention).
const LOCK_NOUN = '(门|门锁|锁)';
const UNLOCK_NOUN = '(门锁|锁)';
function lockGroups(intent: 'HassTurnOn' | 'HassTurnOff'): IntentSentences[] {
  const before = intent === 'HassTurnOn' ? '(锁上|锁好|锁住|锁)' : '(解锁|打开|开|解开)';
  const after = intent === 'HassTurnOn' ? '(锁上|锁好|锁住|锁起来)' : '(解锁|打开|开开|开|解开)';
  const named =
    intent === 'HassTurnOn'
      ? switchTemplates('[{area}[的]]{name}', before, after)
      : [
          ...switchTemplates('[{area}[的]]{name}', before, after),
          `${PLEASE}把{name}的锁${after}${END}`,
          `${PLEASE}给{name}(解锁|开锁)${END}`,
        ];
  // "打开车库的门" opens a door; only "锁" makes a place's door a lock to unlock.
  const noun = intent === 'HassTurnOn' ? LOCK_NOUN : UNLOCK_NOUN;
  return [
    zh(intent, named, { domain: 'lock' }),
    zh(intent, switchTemplates(`${ALL}${AT}[的]${ALL}${noun}`, before, after), { domain: 'lock', name: 'all' }),
    zh(intent, switchTemplates(noun, before, after), { domain: 'lock' }),
    zh(intent, switchTemplates(`(所有|全部|所有的|全部的|家里的)${noun}`, before, after), {
      domain: 'lock',
      name: 'all',
      scope: 'home',
    }),
  ];
}

const SCENE_VERB = '(激活|切换到|切换成|切到|换到|开启|启用|打开|启动|进入|开|执行|运行)';
const SCENES_AND_SCRIPTS: IntentSentences[] = [
  zh(
    'HassTurnOn',
    [
      `${PLEASE}[{area}]${SCENE_VERB}${ONCE}{name}[场景]${END}`,
      `${PLEASE}把[{area}[的]]{name}[场景](打开|开启|启动|开开|开|激活)${END}`,
      `[{area}[的]]{name}[场景](打开|开启|启动|开|激活)${END}`,
      '{name}[场景]',
    ],
    { domain: 'scene' },
  ),
  zh(
    'HassTurnOn',
    [
      `${PLEASE}(运行|执行|启动|开始|播放|开启|触发)${ONCE}{name}[脚本]${END}`,
      `${PLEASE}把{name}[脚本](运行|执行|启动)${END}`,
      // A script's bare name runs it ("晨间广播"); only names of scripts fit this domain.
      '{name}[脚本]',
    ],
    { domain: 'script' },
  ),
];

// ---------------------------------------------------------------------------------------------
// Light brightness and colour.

const SET_TO =
  '(设置为|设置到|设置成|设置|设为|设成|设到|调到|调成|调为|调节到|调节为|调节成|调整到|调整为|调整成|改成|改为|改到|变成|换成|变为|调暗到|调亮到|调低到|调高到|调)';
const BRIGHTNESS = '[的](亮度|灯光亮度|光线)';
const LIGHT_NOUN = '(灯|灯光|电灯)';
const BRIGHTEST = '(最大|最亮|最高|百分百|满)';
const DARKEST = '(最暗|最小|最低)';

/** Brightness forms for one target; `loose` allows "把X调到50%" without the word for brightness. */
function brightnessTemplates(target: string, level: string, loose: boolean): string[] {
  const forms = [
    `${PLEASE}[把]${target}${BRIGHTNESS}${SET_TO}${level}${END}`,
    `${PLEASE}(设置|调节|调整|调)${target}${BRIGHTNESS}(到|为|成)${level}${END}`,
  ];
  if (loose) forms.push(`${PLEASE}[把]${target}${SET_TO}${level}${END}`);
  return forms;
}

function colourTemplates(target: string): string[] {
  return [
    `${PLEASE}[把]${target}[的][(颜色|灯光颜色|光)]${SET_TO}{color}${END}`,
    `${PLEASE}(设置|调节|调整)${target}[的](颜色|灯光颜色)(到|为|成){color}${END}`,
    `${target}[的][颜色]{color}`,
  ];
}

const LIGHT_TARGETS: ReadonlyArray<{ target: string; slots: Slots; loose: boolean }> = [
  { target: '{name}', slots: { domain: 'light' }, loose: true },
  { target: `${AT}[的]${ALL}${LIGHT_NOUN}`, slots: { name: 'all' }, loose: true },
  { target: AT, slots: { name: 'all' }, loose: false },
  { target: `[${ALL}]${LIGHT_NOUN}`, slots: {}, loose: true },
  { target: '', slots: {}, loose: false },
];

const LIGHT_SET: IntentSentences[] = LIGHT_TARGETS.flatMap(({ target, slots, loose }) => [
  zh('HassLightSet', brightnessTemplates(target, '{brightness}', loose), slots),
  zh('HassLightSet', brightnessTemplates(target, BRIGHTEST, loose), { ...slots, brightness: 100 }),
  zh('HassLightSet', brightnessTemplates(target, DARKEST, loose), { ...slots, brightness: 1 }),
  ...(target === '' ? [] : [zh('HassLightSet', colourTemplates(target), slots)]),
]);

// ---------------------------------------------------------------------------------------------
// Cover and valve positions.

const POSITION_TO = `(${SET_TO.slice(1, -1)}|开到|打开到|拉到|拉开到|关到|升到|降到|放到)`;
const POSITION_TARGETS: ReadonlyArray<{ target: string; slots: Slots }> = [
  { target: '{name}', slots: { domain: 'cover' } },
  { target: '{name}', slots: { domain: 'valve' } },
  ...COVER_NOUNS.flatMap(({ noun, device_class }) => [
    { target: `${AT}[的]${ALL}${noun}`, slots: { domain: 'cover', device_class } },
    { target: noun, slots: { domain: 'cover', device_class } },
  ]),
];
const SET_POSITION: IntentSentences[] = POSITION_TARGETS.flatMap(({ target, slots }) => [
  zh(
    'HassSetPosition',
    [
      `${PLEASE}[把]${target}[的(位置|开度|开合度)]${POSITION_TO}{position}${END}`,
      `${PLEASE}(设置|调节|调整)${target}[的](位置|开度)(到|为){position}`,
    ],
    slots,
  ),
  zh('HassSetPosition', [`${PLEASE}[把]${target}[的(位置|开度)]${POSITION_TO}(最大|全开)${END}`], { ...slots, position: 100 }),
  zh('HassSetPosition', [`${PLEASE}[把]${target}(打开|拉开|开|关上|拉上|关)一半${END}`], { ...slots, position: 50 }),
]);

// ---------------------------------------------------------------------------------------------
// Temperatures.

const NOW = '[(现在|当前|目前)]';
const INDOOR = '[(室内|屋里|屋子里|房间里|家里|里面)]';
const HOW_WARM = '(是多少|多少|有多少|几度|多少度|是几度|是多少度|怎么样|如何)';
const CLIMATE: IntentSentences[] = [
  zh(
    'HassClimateGetTemperature',
    [
      `${NOW}[(${AT}|{name})[的]]${NOW}${INDOOR}[的](温度|室温|气温)${NOW}[${HOW_WARM}][(了|呢|啊)]`,
      `${NOW}[(${AT}|{name})]${NOW}${INDOOR}[是](多少度|几度)[(了|呢|啊)]`,
    ],
    { domain: 'climate' },
  ),
  zh(
    'HassClimateSetTemperature',
    [
      `${PLEASE}[把]{name}[的][温度]${SET_TO}{temperature}${END}`,
      `${PLEASE}[把][${AT}[的]](温度|室温|空调温度|空调|暖气|地暖)${SET_TO}{temperature}${END}`,
      `${PLEASE}(设置|调节|调整)[${AT}[的]](温度|室温)(到|为){temperature}${END}`,
    ],
    { domain: 'climate' },
  ),
];

// ---------------------------------------------------------------------------------------------
// States.

const IS = '[(是不是|是否|有没有|现在|还|都|已经|是)]';
const ON_WORDS = '(开着|开了|打开了|开启了|开着的|是开着的|是开的|是打开的|亮着|在运行|运行着)';
const OFF_WORDS = '(关着|关了|关掉了|关上了|关闭了|关好了|关着的|是关着的|是关的|是关闭的|灭了)';
const OPEN_WORDS = '(开着|开了|打开了|开着的|是开着的|是开的|是打开的|拉开了|没关|没有关)';
const CLOSED_WORDS = '(关着|关了|关上了|关好了|关闭了|关着的|是关着的|是关的|是关闭的|拉上了)';
const LOCKED_WORDS = '(锁了|锁上了|锁好了|锁住了|锁着|锁着的|是锁着的|上锁了)';
const UNLOCKED_WORDS = '(没锁|没有锁|没锁上|没锁好|没上锁|没有上锁|开着|是开着的|开了|解锁了)';

/** "X开着吗", "X是不是开着", "X开了没有": one named thing in one state. */
const namedState = (words: string): string[] => [`[{area}[的]]{name}${IS}${words}${Q}`];

/** "厨房有灯开着吗", "所有的灯都关了吗", "哪些灯开着": things of one kind in one state. */
const kindState = (noun: string, words: string): string[] => [
  `${AT}[的](有|有没有|还有)${noun}${IS}${words}${Q}`,
  `(有|有没有|还有)${noun}${IS}${words}${Q}`,
  `${ALL}[${AT}[的]]${noun}(都|是不是都|都是|是否都)${words}${Q}`,
  `(哪个|哪些|哪|有几个|几个|有哪些)[${AT}[的]]${noun}${IS}${words}[的][(呢|啊)]`,
  `${AT}[的]${noun}${IS}${words}${Q}`,
  `${noun}${IS}${words}${Q}`,
];

const STATE_KINDS: ReadonlyArray<{ noun: string; slots: Slots; on: string; off: string; onState: string; offState: string }> = [
  { noun: LIGHT_NOUN, slots: { domain: 'light' }, on: ON_WORDS, off: OFF_WORDS, onState: 'on', offState: 'off' },
  { noun: '开关', slots: { domain: 'switch' }, on: ON_WORDS, off: OFF_WORDS, onState: 'on', offState: 'off' },
  { noun: FAN_NOUN, slots: { domain: 'fan' }, on: ON_WORDS, off: OFF_WORDS, onState: 'on', offState: 'off' },
  { noun: LOCK_NOUN, slots: { domain: 'lock' }, on: LOCKED_WORDS, off: UNLOCKED_WORDS, onState: 'locked', offState: 'unlocked' },
  ...COVER_NOUNS.map(({ noun, device_class }) => ({
    noun,
    slots: { domain: 'cover', device_class },
    on: OPEN_WORDS,
    off: CLOSED_WORDS,
    onState: 'open',
    offState: 'closed',
  })),
  {
    noun: '(窗户|窗)',
    slots: { domain: 'binary_sensor', device_class: 'window' },
    on: OPEN_WORDS,
    off: CLOSED_WORDS,
    onState: 'on',
    offState: 'off',
  },
];

const WHAT_STATE = '[(是|是什么|的)](状态|什么状态|情况|什么情况)';
const HOW_MUCH = '[(还有|还剩|剩|一共)](是多少|有多少|多少|多少了|几度|多少度|怎么样|是什么|如何)';

const STATES: IntentSentences[] = [
  // A named device of a domain whose states have their own words first, then any named device.
  zh('HassGetState', namedState(OPEN_WORDS), { domain: 'cover', state: 'open' }),
  zh('HassGetState', namedState(CLOSED_WORDS), { domain: 'cover', state: 'closed' }),
  zh('HassGetState', namedState(LOCKED_WORDS), { domain: 'lock', state: 'locked' }),
  zh('HassGetState', namedState(UNLOCKED_WORDS), { domain: 'lock', state: 'unlocked' }),
  zh('HassGetState', namedState(OPEN_WORDS), { domain: 'binary_sensor', state: 'on' }),
  zh('HassGetState', namedState(CLOSED_WORDS), { domain: 'binary_sensor', state: 'off' }),
  zh('HassGetState', namedState(ON_WORDS), { state: 'on' }),
  zh('HassGetState', namedState(OFF_WORDS), { state: 'off' }),
  ...STATE_KINDS.flatMap(({ noun, slots, on, off, onState, offState }) => [
    zh('HassGetState', kindState(noun, on), { ...slots, state: onState }),
    zh('HassGetState', kindState(noun, off), { ...slots, state: offState }),
  ]),
  zh('HassGetState', [`${NOW}[{area}[的]]{name}${NOW}${WHAT_STATE}${Q}`, `${NOW}[{area}[的]]{name}${NOW}${HOW_MUCH}[(了|呢|啊)]`]),
];

// People: where someone is, and who is home.
const PEOPLE: IntentSentences[] = [
  zh('HassGetState', ['{name}[现在][(人)](在哪|在哪里|在哪儿|在什么地方|去哪了|去哪儿了|去哪里了)[(呢|啊|呀)]'], {
    domain: 'person',
  }),
  zh('HassGetState', ['{name}[(现在|是不是|是否|已经)](在家|在家里|到家了|回家了|回来了)[(吗|没|没有|呢)]'], {
    domain: 'person',
    state: 'home',
  }),
  zh('HassGetState', ['[家里](有人|有没有人)[在家][(吗|呢)]', '[(现在|家里)](谁|有谁)在家[(呢|啊)]', '[(现在|家里)]有几个人在家'], {
    domain: 'person',
    state: 'home',
  }),
];

// ---------------------------------------------------------------------------------------------
// Time, date and small talk.

const TELL = '[(告诉我|请问|你知道|问一下)]';
const SMALL_TALK: IntentSentences[] = [
  zh('HassGetCurrentTime', [
    `${TELL}[现在][是]几点[(了|钟|钟了)][(呢|啊|吗)]`,
    `${TELL}现在[的]时间[是][(多少|几点)][(呢|啊)]`,
    `${TELL}现在[是]什么时间[了][(呢|啊)]`,
  ]),
  zh('HassGetCurrentDate', [
    `${TELL}今天[是](几号|星期几|礼拜几|周几|几月几号|几月几日|什么日子|什么日期|哪天)[了][(呢|啊)]`,
    `${TELL}今天的日期[(是什么|是多少)][(呢|啊)]`,
  ]),
  zh('HassNevermind', ['(没关系|没事儿|没事了|没事|算了|不用了|取消|当我没说|没什么|再见|闭嘴|退下)[(吧|了)][(谢谢|谢谢你|谢了)]']),
  zh('HassRespond', [
    '(你好|嗨|哈喽|您好)[(呀|啊)][(小助手|助手)]',
    '你(能|会|可以)(做|干)(什么|啥)[(呢|呀)]',
    '我可以(说|问)(什么|啥)',
    '你是谁[(呀|啊)]',
    '谁(做|创造|开发|发明)了你',
  ]),
];

// ---------------------------------------------------------------------------------------------
// Timers: said by the words people use for them; a running timer by length, name or area.

const TIMER_WORD = '(计时器|定时器|倒计时)';
const THAT = '[(那个|这个)]';
const TIMER = `${THAT}[({duration:start_duration}[的]|{area}[的]|{timer_name:name}[的])]${THAT}${TIMER_WORD}`;
const CANCEL = '(取消|停止|关掉|删除|删掉|停掉|关了|取消掉)';

const TIMERS: IntentSentences[] = [
  zh('HassStartTimer', [
    `${PLEASE}(设置|设|定|开始|开|启动|来)[(一个|个)]{duration}[的]${TIMER_WORD}[(叫|叫做|名叫){timer_name:name}]`,
    `${PLEASE}(设置|设|定|开始|开|启动|来)[(一个|个)](叫|叫做|名叫){timer_name:name}的{duration}[的]${TIMER_WORD}`,
    `${PLEASE}(设置|设|定|开始)[(一个|个)]${TIMER_WORD}{duration}`,
    `{duration}[的]${TIMER_WORD}`,
    `${PLEASE}(计时|倒计时|定时){duration}`,
    '{duration}(后|以后|之后){message:conversation_command}',
  ]),
  zh('HassCancelTimer', [`${PLEASE}${CANCEL}${TIMER}${END}`, `${PLEASE}把${TIMER}${CANCEL}${END}`, `${TIMER}(不要了|取消|取消吧|取消掉)`]),
  zh('HassCancelAllTimers', [
    `${PLEASE}${CANCEL}[{area}[的]](所有|全部)[的]${TIMER_WORD}${END}`,
    `${PLEASE}[把][{area}[的]](所有|全部)[的]${TIMER_WORD}[都]${CANCEL}${END}`,
  ]),
  zh('HassPauseTimer', [`${PLEASE}暂停${TIMER}${END}`, `${PLEASE}[把]${TIMER}[先]暂停${END}`]),
  zh('HassUnpauseTimer', [`${PLEASE}(继续|恢复)${TIMER}${END}`, `${PLEASE}[把]${TIMER}(继续|恢复)${END}`]),
  zh('HassIncreaseTimer', [`${PLEASE}[(给|把)]${TIMER}[再](加|增加|延长|多加|加上)[上]{duration}${END}`]),
  zh('HassDecreaseTimer', [`${PLEASE}[(给|把)]${TIMER}(减|减少|缩短|减去|少|扣掉)[掉]{duration}${END}`]),
  zh('HassTimerStatus', [
    `${TIMER}(还剩|还有|剩)(多少时间|多久|多长时间|几分钟|多少)[了][(呢|啊)]`,
    `${TIMER}怎么样了`,
    '(还剩|还有)(多少时间|多久|多长时间|几分钟)[了][(呢|啊)]',
  ]),
];

// ---------------------------------------------------------------------------------------------
// Broadcast and lists.

const SHOPPING = '购物(清单|单|列表)';
const IN_LIST = '[(里|中|上|里面)]';
const ADD_TO = '(加到|加入|添加到|放到|放进|记到|写到|加进)';
// A to-do list is any text, so only the verbs of writing it down ("把书放到桌子上" is no list).
const WRITE_TO = '(加到|加入|添加到|记到|写到|加进)';
const WRITE = '(加|加上|添加|记上|写上)';
const REMOVE = '(删掉|删除|划掉|勾掉|去掉|移除|拿掉|删了)';
const ADD = '(加|加上|添加|记上|写上|放)';
const LIST_WORD = '[(清单|列表)]';

const LISTS: IntentSentences[] = [
  zh('HassBroadcast', [
    `${PLEASE}[(全屋|全家)]广播${ONCE}{message}`,
    `${PLEASE}(全屋|全家)通知${ONCE}{message}`,
    `${PLEASE}(通知|告诉)(大家|全家|所有人|家里人)${ONCE}{message}`,
  ]),
  zh('HassShoppingListAddItem', [
    `${PLEASE}把{item}${ADD_TO}${SHOPPING}${IN_LIST}${END}`,
    `${PLEASE}[在]${SHOPPING}${IN_LIST}${ADD}${ONCE}{item}`,
  ]),
  zh('HassShoppingListLastItems', [
    `[(我的|我们的|家里的)]${SHOPPING}${IN_LIST}[都](有什么|有哪些|有啥|还有什么|还有哪些)[东西][(呢|啊)]`,
    `${PLEASE}(读|念|看|查|说)[(一下|一读|一念|看|念|读)][(我的|我们的)]${SHOPPING}`,
    '[(我|我们|家里)][还](需要|要|该|得)买(什么|啥|哪些|些什么)[东西][(呢|啊)]',
  ]),
  zh('HassShoppingListCompleteItem', [
    `${PLEASE}把{item}从${SHOPPING}${IN_LIST}${REMOVE}${END}`,
    `${PLEASE}从${SHOPPING}${IN_LIST}${REMOVE}${ONCE}{item}`,
    `${PLEASE}[把]${SHOPPING}${IN_LIST}的{item}${REMOVE}${END}`,
    `{item}(已经买了|买好了|买到了|已经买好了)[(从${SHOPPING}${IN_LIST}${REMOVE}${END}|${REMOVE}${END})]`,
  ]),
  zh('HassListAddItem', [
    `${PLEASE}把{item}${WRITE_TO}{list_name:name}${LIST_WORD}${IN_LIST}${END}`,
    `${PLEASE}在{list_name:name}${LIST_WORD}${IN_LIST}${WRITE}${ONCE}{item}`,
    `${PLEASE}{list_name:name}(清单|列表)${IN_LIST}${WRITE}${ONCE}{item}`,
  ]),
  zh('HassListCompleteItem', [
    `${PLEASE}把{item}从{list_name:name}${LIST_WORD}${IN_LIST}${REMOVE}${END}`,
    `${PLEASE}从{list_name:name}${LIST_WORD}${IN_LIST}${REMOVE}${ONCE}{item}`,
    `${PLEASE}[把]{list_name:name}${LIST_WORD}(里|中|上|里面)的{item}${REMOVE}${END}`,
  ]),
];

// ---------------------------------------------------------------------------------------------
// Media players.

// Who plays: "客厅音箱暂停", "让客厅音箱继续放", "厨房继续播放"; optional everywhere.
const PLAYER = '[(让|叫|把|在|用)]({name}|{area}[的])';
const MUSIC = '[(播放|放|播|音乐|歌|播放音乐|一下)]';
const NEXT = '(下一首|下一曲|下一个|下一集|下首)[(歌|歌曲)]';
const PREVIOUS = '(上一首|上一曲|上一个|上一集|上首)[(歌|歌曲)]';
const WHERE = '[(在|用|让|到)({area}|{name})[(上|里)]]';
const MEASURE = '(一首|一个|一部|一集|一张|首|个|部|集|点|一下)';

// Home Assistant's media classes and the words that ask for one ("播放专辑范特西").
const MEDIA_CLASSES: ReadonlyArray<readonly [string, string]> = [
  ['album', '专辑'],
  ['playlist', '歌单'],
  ['movie', '电影'],
  ['podcast', '播客'],
  ['tv_show', '(电视剧|节目)'],
  ['track', '(歌曲|单曲)'],
];

const MEDIA: IntentSentences[] = [
  zh('HassMediaPause', [
    `${PLEASE}[${PLAYER}][先]暂停${MUSIC}${END}`,
    `${PLEASE}[把](音乐|歌|视频|节目|电影)[先]暂停${END}`,
    `${PLEASE}暂停${ONCE}({name}|{area}[的](音乐|播放|音箱|电视|声音))`,
  ]),
  zh('HassMediaUnpause', [
    `${PLEASE}[${PLAYER}](继续|恢复|接着)${MUSIC}${END}`,
    `${PLEASE}[把](音乐|歌|视频|节目|电影)(继续|恢复)[播放]${END}`,
  ]),
  zh('HassMediaNext', [
    `${PLEASE}[${PLAYER}][(播放|放|切到|换到|来|跳到)]${NEXT}${END}`,
    `${PLEASE}[${PLAYER}](切歌|换一首|换首歌|换一首歌|换歌|跳过这首歌|跳过这首|跳过)${END}`,
  ]),
  zh('HassMediaPrevious', [`${PLEASE}[${PLAYER}][(播放|放|回到|返回|切到|换到|跳到)]${PREVIOUS}${END}`]),
  zh('HassSetVolume', [
    `${PLEASE}[把][({area}|{name})[的]](音量|声音)${SET_TO}{volume:volume_level}${END}`,
    `${PLEASE}(设置|调节|调整)[({area}|{name})[的]](音量|声音)(到|为){volume:volume_level}`,
  ]),
  // "放", "来", "听", "看" mean much besides playing ("放假", "来杯水"): alone they need a player or
  // a measure word ("来一首稻香", "用音箱放新闻").
  zh('HassMediaSearchAndPlay', [
    `${PLEASE}${WHERE}(播放|播|我想听|我要听|想听|我想看|我要看)[${MEASURE}]{search_query}`,
    `${PLEASE}${WHERE}(放|来|听)${MEASURE}{search_query}`,
    // "看一下…" is a look, not a show to watch: 看 plays only with a measure word for a show.
    `${PLEASE}${WHERE}看(一部|一集|一个|部|集|个){search_query}`,
    `${PLEASE}(在|用|让|到)({area}|{name})[(上|里)](放|来|听|看)[${MEASURE}]{search_query}`,
  ]),
  zh('HassMediaSearchAndPlay', [`${PLEASE}${WHERE}(播放|放|来|听|我想听)[(点|一些|几首)]{search_query}的(歌|歌曲|音乐)`], {
    media_class: 'artist',
  }),
  ...MEDIA_CLASSES.map(([mediaClass, word]) =>
    zh('HassMediaSearchAndPlay', [`${PLEASE}${WHERE}(播放|放|来|听|看)[(一首|一个|一部|一张|一集)]${word}{search_query}`], {
      media_class: mediaClass,
    }),
  ),
];

// ---------------------------------------------------------------------------------------------
// Vacuums and weather.

const VACUUM_WORK = '[开始](打扫|扫地|清扫|吸尘|拖地|工作|干活|扫一下地|扫扫地|扫下地)[(一下|吧|了)]';
const VACUUM: IntentSentences[] = [
  zh('HassVacuumStart', [`${PLEASE}[(让|叫)]{name}${VACUUM_WORK}`, `${PLEASE}(启动|开启|打开)${ONCE}{name}`], { domain: 'vacuum' }),
  zh('HassVacuumStart', [`${PLEASE}(打扫|清扫|扫|拖|吸)${ONCE}${AT}[(吧|了)]`, `${PLEASE}把${AT}(打扫|扫|清扫|拖)${END}`]),
  zh(
    'HassVacuumReturnToBase',
    [`${PLEASE}[(让|叫)]{name}(回去充电|回充|回到基座|返回基座|回家|回去|回到充电座|返回充电座|去充电|回座充)[(吧|了)]`],
    { domain: 'vacuum' },
  ),
];

const WEATHER: IntentSentences[] = [
  zh('HassGetWeather', [
    '[(今天|现在|外面|今天外面)][{name}[的]][(今天|现在|外面)][的]天气(怎么样|如何|好吗|好不好|咋样|怎样)[(啊|呢|呀)]',
  ]),
];

export const ZH_SENTENCES: IntentSentences[] = [
  // Domain-bound forms first: on a tie the first declared wins ("打开前门锁" unlocks, "启动扫地机器人" cleans).
  ...WEATHER,
  ...PEOPLE,
  ...VACUUM,
  ...lockGroups('HassTurnOn'),
  ...lockGroups('HassTurnOff'),
  ...coverGroups('HassTurnOn', COVER_OPEN_BEFORE, COVER_OPEN_AFTER),
  ...coverGroups('HassTurnOff', COVER_CLOSE_BEFORE, COVER_CLOSE_AFTER),
  // Named devices before kinds: "卧室开关" is both a device's whole name and area + "开关"; the two
  // tie and the person who says a device's exact name means that device.
  byName('HassTurnOn', ON_BEFORE, ON_AFTER),
  byName('HassTurnOff', OFF_BEFORE, OFF_AFTER),
  ...kindGroups('HassTurnOn', ON_BEFORE, ON_AFTER),
  ...kindGroups('HassTurnOff', OFF_BEFORE, OFF_AFTER),
  ...lightVerbs('HassTurnOn', '(开|打开)'),
  ...lightVerbs('HassTurnOff', '(关|关掉|关上)'),
  ...SCENES_AND_SCRIPTS,
  ...LIGHT_SET,
  ...SET_POSITION,
  ...CLIMATE,
  ...STATES,
  ...SMALL_TALK,
  ...TIMERS,
  ...LISTS,
  ...MEDIA,
];
