import t from 'tap';
import type { IntentSentences } from '../../../src/intent/intent-sentences.js';
import { EN_ASSIST } from '../../../src/intent/sentences/en-assist.js';
import { ZH_SENTENCES } from '../../../src/intent/sentences/zh.js';
import { type CompiledTemplate, compileTemplate, matchTemplate, type SlotList } from '../../../src/intent/template-grammar.js';

// The standard list names of src/intent/intent-sentences.ts, with a few entries each.
const values = (entries: Array<[string, ...string[]]>): SlotList => ({
  type: 'values',
  values: entries.map(([value, ...phrases]) => ({ value, phrases })),
});
const lists: Record<string, SlotList> = {
  name: values([
    ['TV', 'TV'],
    ['Rover', 'Rover'],
    ['London', 'London'],
    ['卧室灯', '卧室灯'],
    ['空调', '空调'],
    ['派对模式', '派对模式'],
    ['前门锁', '前门锁'],
    ['客厅窗帘', '客厅窗帘'],
    ['爸爸', '爸爸'],
  ]),
  area: values([
    ['Kitchen', 'kitchen', '厨房'],
    ['Living Room', 'living room', '客厅'],
    ['卧室', '卧室'],
  ]),
  floor: values([['First Floor', 'first floor', '一楼']]),
  brightness: { type: 'range', from: 0, to: 100, percent: true },
  position: { type: 'range', from: 0, to: 100, percent: true },
  temperature: { type: 'range', from: 5, to: 35, step: 0.5, units: ['度', 'degrees'] },
  volume: { type: 'range', from: 0, to: 100, percent: true },
  color: values([['red', 'red', '红色']]),
  duration: { type: 'duration' },
  item: { type: 'wildcard' },
  list_name: values([['Chores', 'chores', '家务']]),
  timer_name: { type: 'wildcard' },
  search_query: { type: 'wildcard' },
  message: { type: 'wildcard' },
};

// The domain of each named thing above: like the recogniser, a family bound to one domain
// ("{name}开着吗" for covers) must not take a thing of another.
const DOMAINS: Record<string, string> = {
  TV: 'media_player',
  Rover: 'vacuum',
  London: 'weather',
  卧室灯: 'light',
  空调: 'climate',
  派对模式: 'scene',
  前门锁: 'lock',
  客厅窗帘: 'cover',
  爸爸: 'person',
};

const compileAll = (families: readonly IntentSentences[]) =>
  families.flatMap((family) => family.templates.map((source) => ({ family, compiled: compileTemplate(source, lists) })));

/** The best-scoring intent and slots (fixed ones included) over every template of `families`. */
function recognise(
  compiled: ReadonlyArray<{ family: IntentSentences; compiled: CompiledTemplate }>,
  sentence: string,
): { intent: string; slots: Record<string, string | number> } | undefined {
  let best: { intent: string; slots: Record<string, string | number>; score: number } | undefined;
  for (const { family, compiled: template } of compiled) {
    const match = matchTemplate(template, sentence)[0];
    if (!match || (best && best.score >= match.score)) continue;
    const matched = Object.fromEntries(Object.entries(match.slots).map(([slot, m]) => [slot, m.value]));
    const fixedDomain = family.slots?.domain;
    if (fixedDomain !== undefined && typeof matched.name === 'string' && DOMAINS[matched.name] !== fixedDomain) continue;
    best = { intent: family.intent, slots: { ...family.slots, ...matched }, score: match.score };
  }
  return best && { intent: best.intent, slots: best.slots };
}

const EN = compileAll(EN_ASSIST);
const ZH = compileAll(ZH_SENTENCES);

t.test('every template of both files compiles with the standard lists and has the right language', async (t) => {
  t.ok(EN.length > 40, `${EN.length} English templates`);
  t.ok(ZH.length > 40, `${ZH.length} Chinese templates`);
  t.ok(
    EN_ASSIST.every((f) => f.language === 'en'),
    'English families say en',
  );
  t.ok(
    ZH_SENTENCES.every((f) => f.language === 'zh'),
    'Chinese families say zh',
  );
});

t.test('a template naming a list outside the standard set is refused', async (t) => {
  t.throws(() => compileTemplate('start {gadget}', lists), { code: 'HA_ERR_INTENT_TEMPLATE' });
});

const cases: Array<[string, typeof EN, string, string, Record<string, string | number>]> = [
  ['en timers', EN, 'set a timer for 5 minutes', 'HassStartTimer', { duration: 300 }],
  ['en timers', EN, 'start a 5 minute timer named pizza', 'HassStartTimer', { duration: 300, name: 'pizza' }],
  ['en timers', EN, 'cancel all timers in the kitchen', 'HassCancelAllTimers', { area: 'Kitchen' }],
  ['en timers', EN, 'stop my pizza timer', 'HassCancelTimer', { name: 'pizza' }],
  ['en timers', EN, 'add 5 minutes to the kitchen timer', 'HassIncreaseTimer', { duration: 300, area: 'Kitchen' }],
  ['en timers', EN, 'take 5 minutes off 1 hour timer', 'HassDecreaseTimer', { duration: 300, start_duration: 3600 }],
  ['en timers', EN, 'how long is left on the pizza timer', 'HassTimerStatus', { name: 'pizza' }],
  ['en time', EN, "what's the time", 'HassGetCurrentTime', {}],
  ['en date', EN, "what is today's date", 'HassGetCurrentDate', {}],
  ['en lists', EN, 'add apples to my shopping list', 'HassShoppingListAddItem', { item: 'apples' }],
  ['en lists', EN, 'check take out the trash off my chores list', 'HassListCompleteItem', { item: 'take out the trash', name: 'Chores' }],
  ['en media', EN, 'turn up the volume to 90 on the TV', 'HassSetVolume', { volume_level: 90, name: 'TV' }],
  [
    'en media',
    EN,
    'play the Queen album in the kitchen',
    'HassMediaSearchAndPlay',
    { search_query: 'queen', media_class: 'album', area: 'Kitchen' },
  ],
  ['en media', EN, 'skip this song on the TV', 'HassMediaNext', { name: 'TV' }],
  ['en vacuum', EN, 'clean the first floor', 'HassVacuumStart', { floor: 'First Floor' }],
  ['en weather', EN, "what's the weather like in London", 'HassGetWeather', { name: 'London' }],
  ['zh device', ZH, '打开卧室的灯', 'HassTurnOn', { area: '卧室', domain: 'light' }],
  ['zh device', ZH, '把厨房的风扇关掉', 'HassTurnOff', { area: 'Kitchen', domain: 'fan', name: 'all' }],
  ['zh device', ZH, '激活派对模式', 'HassTurnOn', { name: '派对模式', domain: 'scene' }],
  ['zh light', ZH, '把卧室灯的亮度设置为50%', 'HassLightSet', { name: '卧室灯', domain: 'light', brightness: 50 }],
  ['zh light', ZH, '卧室灯亮度调到最暗', 'HassLightSet', { name: '卧室灯', domain: 'light', brightness: 1 }],
  ['zh light', ZH, '卧室的灯调节为红色', 'HassLightSet', { area: '卧室', name: 'all', color: 'red' }],
  ['zh climate', ZH, '把空调设置到18度', 'HassClimateSetTemperature', { name: '空调', domain: 'climate', temperature: 18 }],
  ['zh climate', ZH, '客厅现在多少度', 'HassClimateGetTemperature', { area: 'Living Room', domain: 'climate' }],
  ['zh state', ZH, '卧室灯是不是开着', 'HassGetState', { name: '卧室灯', state: 'on' }],
  ['zh time', ZH, '现在几点了', 'HassGetCurrentTime', {}],
  ['zh date', ZH, '今天几号', 'HassGetCurrentDate', {}],
  ['zh timers', ZH, '设置十分钟的计时器', 'HassStartTimer', { duration: 600 }],
  ['zh timers', ZH, '取消所有计时器', 'HassCancelAllTimers', {}],
  ['zh lists', ZH, '把牛奶加到购物清单里', 'HassShoppingListAddItem', { item: '牛奶' }],
  ['zh media', ZH, '把音量调到五十', 'HassSetVolume', { volume_level: 50 }],
  ['zh small talk', ZH, '算了', 'HassNevermind', {}],
  ['zh lock', ZH, '锁上前门锁', 'HassTurnOn', { name: '前门锁', domain: 'lock' }],
  ['zh lock', ZH, '把前门锁打开', 'HassTurnOff', { name: '前门锁', domain: 'lock' }],
  ['zh cover', ZH, '把客厅窗帘开到一半', 'HassSetPosition', { name: '客厅窗帘', domain: 'cover', position: 50 }],
  ['zh cover', ZH, '拉上卧室的窗帘', 'HassTurnOff', { area: '卧室', domain: 'cover', device_class: 'curtain', name: 'all' }],
  ['zh person', ZH, '爸爸在哪儿', 'HassGetState', { name: '爸爸', domain: 'person' }],
  ['zh vacuum', ZH, '扫一下客厅', 'HassVacuumStart', { area: 'Living Room' }],
  ['zh media', ZH, '下一首', 'HassMediaNext', {}],
  ['zh timers', ZH, '给煮饭计时器加五分钟', 'HassIncreaseTimer', { name: '煮饭', duration: 300 }],
  ['zh lists', ZH, '把倒垃圾加到家务清单', 'HassListAddItem', { item: '倒垃圾', name: 'Chores' }],
];

t.test('sentences of each family reach the right intent with the right slots', async (t) => {
  for (const [family, compiled, sentence, intent, slots] of cases) {
    t.same(recognise(compiled, sentence), { intent, slots }, `${family}: ${sentence}`);
  }
});

t.test('sentences outside every family match nothing', async (t) => {
  t.equal(recognise(EN, 'the quick brown fox'), undefined);
  t.equal(recognise(ZH, '今天吃什么'), undefined);
  t.equal(recognise(ZH, '打开车库的灯'), undefined, 'an area not in the list is not guessed');
});
