// The local intent engine of issue 11 on a realistic home: 200 entities (lights, switches, fans,
// covers, sensors, locks, thermostats, speakers) in 15 areas, each with an English name and a
// Chinese alias ("Kitchen Light 3" / "厨房灯3"), the sentence files the daemon ships.
// intent_compile_ms: `new IntentRecognizer(ALL_SENTENCES, home)` once — what a changed home costs.
// intent_recognise_{en,zh,all}_p95: one recognise() of a sentence from a fixed mix of English and
//   Chinese requests (on/off by name and by area, brightness, state questions, timers, time); the
//   mix is checked first so a sentence that stopped matching fails the bench instead of timing a
//   cheap miss. Goal p95 <= 5 ms: recognising runs before every agent turn, so it must stay small.
// intent_near_{en,zh}_ms: recognise() of a sentence with a misheard or misspelt name ("turn on the
//   kitchen lihgt 1", "打开厨房等1"): no template matches exactly, so the near pass runs (names and
//   areas opened and resolved by similarity). Checked first like the mix; goal p95 <= 10 ms.
// intent_no_match_ms: recognise() of requests no template covers (weather, stories, reminders):
//   both passes run and find nothing, which every request handed on to the model pays first.
// intent_understand_compile_ms: `new IntentUnderstander(...)` plus both languages' compositional
//   parts (mention tries, fuzzy name lists) for the same home; goal <= 300 ms (issue 26).
// intent_understand_{en,zh}_p95: one understand() — templates, composition, schema check — of the
//   mix above plus issue 26's phrasings (paraphrases, compounds, follow-ups, misspellings,
//   statements that must refuse). Checked first; goal p95 <= 5 ms.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';
import { round, spread, watchGc } from './stats.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(join(dist, path));

const WARMUP_ROUNDS = size(20, 1);
const TIMED_ROUNDS = size(100, 2);
const GOAL_P95_MS = 5;
const GOAL_NEAR_P95_MS = 10;

const AREAS = [
  ['Kitchen', '厨房'],
  ['Living Room', '客厅'],
  ['Master Bedroom', '主卧'],
  ['Guest Bedroom', '客卧'],
  ['Kids Room', '儿童房'],
  ['Study', '书房'],
  ['Dining Room', '餐厅'],
  ['Bathroom', '浴室'],
  ['Guest Bathroom', '客卫'],
  ['Hallway', '走廊'],
  ['Garage', '车库'],
  ['Balcony', '阳台'],
  ['Laundry', '洗衣房'],
  ['Basement', '地下室'],
  ['Garden', '花园'],
];

// Kinds cycled through to fill each area: [domain, English noun, Chinese noun, device_class].
const KINDS = [
  ['light', 'Light', '灯'],
  ['light', 'Lamp', '台灯'],
  ['switch', 'Switch', '开关'],
  ['fan', 'Fan', '风扇'],
  ['cover', 'Curtain', '窗帘', 'curtain'],
  ['sensor', 'Temperature', '温度传感器', 'temperature'],
  ['sensor', 'Humidity', '湿度', 'humidity'],
  ['binary_sensor', 'Motion', '人体传感器', 'motion'],
  ['lock', 'Lock', '门锁'],
  ['climate', 'Thermostat', '空调'],
  ['media_player', 'Speaker', '音箱'],
  ['light', 'Strip', '灯带'],
  ['switch', 'Socket', '插座'],
];
const ENTITIES = 200;

/** 200 entities spread over the areas; the n-th of a kind in an area gets a number ("Kitchen Light 3"). */
export function buildHome() {
  const entities = [];
  const seen = new Map();
  for (let i = 0; i < ENTITIES; i++) {
    const [area, areaZh] = AREAS[i % AREAS.length];
    const [domain, noun, nounZh, deviceClass] = KINDS[Math.floor(i / AREAS.length) % KINDS.length];
    const key = `${area}/${noun}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    entities.push({
      name: `${area} ${noun} ${n}`,
      aliases: [`${areaZh}${nounZh}${n}`],
      domain,
      area,
      ...(deviceClass !== undefined && { device_class: deviceClass }),
    });
  }
  return {
    areas: AREAS.map(([name, zh]) => ({ name, aliases: [zh], floor: 'Ground Floor' })),
    floors: [{ name: 'Ground Floor', aliases: ['一楼'] }],
    entities,
  };
}

// [sentence, language, the intent it must give]: what people say to a home assistant most.
const MIX = [
  ['turn on the kitchen light 1', 'en', 'HassTurnOn'],
  ['turn off living room lamp 1', 'en', 'HassTurnOff'],
  ['switch on the study fan 1', 'en', 'HassTurnOn'],
  ['turn off the garage switch 1', 'en', 'HassTurnOff'],
  ['turn on the lights in the kitchen', 'en', 'HassTurnOn'],
  ['turn off all the lights in the living room', 'en', 'HassTurnOff'],
  ['turn off the lights', 'en', 'HassTurnOff'],
  ['set the master bedroom light 1 brightness to 40%', 'en', 'HassLightSet'],
  ['set the kitchen lights to 70%', 'en', 'HassLightSet'],
  ['make the dining room lights red', 'en', 'HassLightSet'],
  ['is the hallway lock 1 locked', 'en', 'HassGetState'],
  ['is any light on in the kitchen', 'en', 'HassGetState'],
  ['what is the basement humidity 1', 'en', 'HassGetState'],
  ['open the study curtain 1', 'en', 'HassTurnOn'],
  ['set a timer for 10 minutes', 'en', 'HassStartTimer'],
  ['set a timer for an hour and a half', 'en', 'HassStartTimer'],
  ['cancel the timer', 'en', 'HassCancelTimer'],
  ['what time is it', 'en', 'HassGetCurrentTime'],
  ['what is the date today', 'en', 'HassGetCurrentDate'],
  ['set the study thermostat 1 to 21 degrees', 'en', 'HassClimateSetTemperature'],
  ['打开厨房灯1', 'zh', 'HassTurnOn'],
  ['关闭客厅台灯1', 'zh', 'HassTurnOff'],
  ['请打开书房风扇1', 'zh', 'HassTurnOn'],
  ['把车库开关1关掉', 'zh', 'HassTurnOff'],
  ['打开厨房的灯', 'zh', 'HassTurnOn'],
  ['把客厅的灯关掉', 'zh', 'HassTurnOff'],
  ['关掉所有的灯', 'zh', 'HassTurnOff'],
  ['把主卧灯1的亮度调到40%', 'zh', 'HassLightSet'],
  ['把厨房的灯亮度调到百分之七十', 'zh', 'HassLightSet'],
  ['把餐厅灯1调成红色', 'zh', 'HassLightSet'],
  ['走廊门锁1开着吗', 'zh', 'HassGetState'],
  ['厨房有灯开着吗', 'zh', 'HassGetState'],
  ['地下室湿度1是多少', 'zh', 'HassGetState'],
  ['客厅温度是多少', 'zh', 'HassClimateGetTemperature'],
  ['设置一个十分钟的计时器', 'zh', 'HassStartTimer'],
  ['倒计时五分钟', 'zh', 'HassStartTimer'],
  ['取消计时器', 'zh', 'HassCancelTimer'],
  ['现在几点了', 'zh', 'HassGetCurrentTime'],
  ['今天几号', 'zh', 'HassGetCurrentDate'],
  ['把书房空调1温度调到二十一度', 'zh', 'HassClimateSetTemperature'],
];

// [sentence, language, the intent and the name or area it must give]: one slip each, of the kinds
// speech recognition and typing make (swapped, missing, wrong character; a homophone in Chinese),
// plus a sentence naming nothing registered, which must stay unmatched.
const NEAR_MIX = [
  ['turn on the kitchen lihgt 1', 'en', 'HassTurnOn', 'Kitchen Light 1'],
  ['turn off the livng room lamp 1', 'en', 'HassTurnOff', 'Living Room Lamp 1'],
  ['switch on the stduy fan 1', 'en', 'HassTurnOn', 'Study Fan 1'],
  ['turn off the lights in the kitchn', 'en', 'HassTurnOff', 'Kitchen'],
  ['is the hallway lcok 1 locked', 'en', 'HassGetState', 'Hallway Lock 1'],
  ['set the master bedrom light 1 brightness to 40%', 'en', 'HassLightSet', 'Master Bedroom Light 1'],
  ['turn on the attic heater', 'en', undefined, undefined],
  ['打开厨房等1', 'zh', 'HassTurnOn', 'Kitchen Light 1'],
  ['关闭客厅台等1', 'zh', 'HassTurnOff', 'Living Room Lamp 1'],
  ['把车库开官1关掉', 'zh', 'HassTurnOff', 'Garage Switch 1'],
  ['打开书房风山1', 'zh', 'HassTurnOn', 'Study Fan 1'],
  ['打开洗衣方的灯', 'zh', 'HassTurnOn', 'Laundry'],
  ['把主卧等1的亮度调到40%', 'zh', 'HassLightSet', 'Master Bedroom Light 1'],
  ['打开阁楼暖气', 'zh', undefined, undefined],
];

// Requests for the model, in both languages: no exact and no near match may come out of them.
const NO_MATCH_MIX = [
  ['what is the weather going to be like in paris tomorrow afternoon', 'en'],
  ['can you tell me a story about a dragon who lives in the kitchen', 'en'],
  ['remind me to call my mother when i get home from work tonight', 'en'],
  ['明天下午巴黎的天气怎么样', 'zh'],
  ['给我讲一个关于住在厨房里的龙的故事', 'zh'],
  ['提醒我今晚下班回家后给妈妈打电话', 'zh'],
];

// [sentence, language, the first intent (undefined: refused or asked)]: what composition adds.
const COMPOSED_MIX = [
  ['could you power down the kitchen light 1', 'en', 'HassTurnOff'],
  ['please start a five minute timer', 'en', 'HassStartTimer'],
  ['turn off the kitchen light 1 and open the study curtain 1', 'en', 'HassTurnOff'],
  ['trun off the livng room lamp 1', 'en', 'HassTurnOff'],
  ['did i lock the hallway lock 1', 'en', 'HassGetState'],
  ['I turned off the kitchen light 1 yesterday', 'en', undefined],
  ['why is the garage fan 1 always on', 'en', undefined],
  ['关掉厨房灯1然后打开书房窗帘1', 'zh', 'HassTurnOff'],
  ['把客厅台等1关了', 'zh', 'HassTurnOff'],
  ['计时器10分钟', 'zh', 'HassStartTimer'],
  ['我昨天把厨房的灯关了', 'zh', undefined],
  ['你觉得智能门锁安全吗', 'zh', undefined],
];

function checkComposedMix(understander) {
  const wrong = [];
  for (const [text, language, intent] of COMPOSED_MIX) {
    const got = understander.understand(text, language);
    const name = got.kind === 'intents' ? got.intents[0].name : undefined;
    if (name !== intent) wrong.push(`${language} "${text}": expected ${intent ?? 'no intent'}, got ${name ?? got.kind}`);
  }
  if (wrong.length > 0) throw new Error(`intent bench composed mix does not match:\n  ${wrong.join('\n  ')}`);
}

/** Every near sentence must give its intent and name by a near match (or nothing when it names nothing). */
function checkNearMix(recognizer) {
  const wrong = [];
  for (const [text, language, intent, value] of NEAR_MIX) {
    const got = recognizer.recognise(text, language);
    const said = got === undefined ? 'no match' : `${got.name} ${got.slots.name ?? got.slots.area} confidence ${got.confidence}`;
    const right =
      intent === undefined ? got === undefined : got?.name === intent && got.confidence < 1 && (got.slots.name ?? got.slots.area) === value;
    if (!right)
      wrong.push(
        `${language} "${text}": expected ${intent === undefined ? 'no match' : `${intent} ${value} by a near match`}, got ${said}`,
      );
  }
  if (wrong.length > 0) throw new Error(`intent bench near mix does not match:\n  ${wrong.join('\n  ')}`);
}

/** Every sentence of the mix must give its intent: a miss would time the cheap path instead. */
function checkMix(recognizer) {
  const wrong = [];
  for (const [text, language, intent] of MIX) {
    const got = recognizer.recognise(text, language)?.name;
    if (got !== intent) wrong.push(`${language} "${text}": expected ${intent}, got ${got ?? 'no match'}`);
  }
  if (wrong.length > 0) throw new Error(`intent bench mix does not match:\n  ${wrong.join('\n  ')}`);
}

export async function run(emit) {
  const [{ IntentRecognizer }, { ALL_SENTENCES }] = await Promise.all([
    load('src/intent/recognizer.js'),
    load('src/intent/sentences/index.js'),
  ]);
  const home = buildHome();
  const compileStarted = performance.now();
  const recognizer = new IntentRecognizer(ALL_SENTENCES, home);
  const compileMs = performance.now() - compileStarted;
  emit({
    name: 'intent_compile_ms',
    unit: 'ms',
    value: round(compileMs),
    n: 1,
    entities: home.entities.length,
    areas: home.areas.length,
    templates: ALL_SENTENCES.reduce((sum, group) => sum + group.templates.length, 0),
    what: 'new IntentRecognizer(ALL_SENTENCES, home) once, cold: every template of every language compiled against a home of 200 entities in 15 areas with English names and Chinese aliases (what setHome costs when the home changes)',
  });

  checkMix(recognizer);
  for (let i = 0; i < WARMUP_ROUNDS; i++) for (const [text, language] of MIX) recognizer.recognise(text, language);
  const times = { en: [], zh: [] };
  const bySentence = MIX.map(() => []);
  const gc = watchGc();
  for (let i = 0; i < TIMED_ROUNDS; i++) {
    MIX.forEach(([text, language], index) => {
      const started = performance.now();
      recognizer.recognise(text, language);
      const ms = performance.now() - started;
      times[language].push(ms);
      bySentence[index].push(ms);
    });
  }
  // Node hands GC entries to observers from a timer, not within the turn (a setImmediate saw none):
  // nothing to await, so give the timers a moment before reading them.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const gcSeen = gc();
  // Where the time goes: the sentences with the highest median, for whoever makes it faster.
  const slowest = MIX.map(([text], index) => ({ text, p50: spread(bySentence[index], [50, 95, 99]).p50 }))
    .sort((a, b) => b.p50 - a.p50)
    .slice(0, 5);
  const rows = [
    ['en', times.en, 'English'],
    ['zh', times.zh, 'Chinese'],
    ['all', [...times.en, ...times.zh], 'English and Chinese'],
  ];
  for (const [tag, list, said] of rows) {
    const s = spread(list, [50, 95, 99]);
    emit({
      name: `intent_recognise_${tag}_p95`,
      unit: 'ms',
      value: s.p95,
      ...s,
      ...(tag === 'all' && { ...gcSeen, slowest_p50: slowest }),
      n: list.length,
      sentences: tag === 'all' ? MIX.length : MIX.filter(([, language]) => language === tag).length,
      what: `IntentRecognizer.recognise() of ${said} sentences (on/off by name and area, brightness, colour, state questions, temperature, timers, time, date), home of 200 entities, after ${WARMUP_ROUNDS} warm-up rounds of the whole mix; value is p95`,
      goal: `p95 <= ${GOAL_P95_MS}`,
      goal_met: s.p95 <= GOAL_P95_MS,
    });
  }
  checkNearMix(recognizer);
  for (let i = 0; i < WARMUP_ROUNDS; i++) for (const [text, language] of NEAR_MIX) recognizer.recognise(text, language);
  const near = { en: [], zh: [] };
  for (let i = 0; i < TIMED_ROUNDS; i++) {
    for (const [text, language] of NEAR_MIX) {
      const started = performance.now();
      recognizer.recognise(text, language);
      near[language].push(performance.now() - started);
    }
  }
  for (const [tag, list, said] of [
    ['en', near.en, 'English'],
    ['zh', near.zh, 'Chinese'],
  ]) {
    const s = spread(list, [50, 95, 99]);
    emit({
      name: `intent_near_${tag}_ms`,
      unit: 'ms',
      value: s.p95,
      ...s,
      n: list.length,
      sentences: NEAR_MIX.filter(([, language]) => language === tag).length,
      what: `IntentRecognizer.recognise() of ${said} sentences with one misheard or misspelt name or area (and one naming nothing registered): the exact pass finds nothing, then the near pass resolves the names by similarity; home of 200 entities; value is p95`,
      goal: `p95 <= ${GOAL_NEAR_P95_MS}`,
      goal_met: s.p95 <= GOAL_NEAR_P95_MS,
    });
  }
  const matched = NO_MATCH_MIX.filter(([text, language]) => recognizer.recognise(text, language) !== undefined);
  if (matched.length > 0) throw new Error(`intent bench: requests for the model matched: ${matched.map(([text]) => text).join('; ')}`);
  for (let i = 0; i < WARMUP_ROUNDS; i++) for (const [text, language] of NO_MATCH_MIX) recognizer.recognise(text, language);
  const misses = [];
  for (let i = 0; i < TIMED_ROUNDS; i++) {
    for (const [text, language] of NO_MATCH_MIX) {
      const started = performance.now();
      recognizer.recognise(text, language);
      misses.push(performance.now() - started);
    }
  }
  const missSpread = spread(misses, [50, 95, 99]);
  emit({
    name: 'intent_no_match_ms',
    unit: 'ms',
    value: missSpread.p95,
    ...missSpread,
    n: misses.length,
    sentences: NO_MATCH_MIX.length,
    what: 'IntentRecognizer.recognise() of English and Chinese requests no template covers (weather, a story, a reminder): the exact and the near pass both run and find nothing, the cost every request handed to the model pays first; value is p95',
    goal: `p95 <= ${GOAL_NEAR_P95_MS}`,
    goal_met: missSpread.p95 <= GOAL_NEAR_P95_MS,
  });

  const { IntentUnderstander } = await load('src/intent/understander.js');
  const buildStarted = performance.now();
  const understander = new IntentUnderstander(ALL_SENTENCES, home);
  understander.warm();
  const buildMs = performance.now() - buildStarted;
  emit({
    name: 'intent_understand_compile_ms',
    unit: 'ms',
    value: round(buildMs),
    n: 1,
    entities: home.entities.length,
    what: "new IntentUnderstander(ALL_SENTENCES, home) and both languages' compositional parts, cold: the templates compiled and the mention tries and fuzzy name lists built for 200 entities",
    goal: 'value <= 300',
    goal_met: buildMs <= 300,
  });
  checkComposedMix(understander);
  const mix = [...MIX.map(([text, language]) => [text, language]), ...COMPOSED_MIX.map(([text, language]) => [text, language])];
  for (let i = 0; i < WARMUP_ROUNDS; i++) for (const [text, language] of mix) understander.understand(text, language);
  const understood = { en: [], zh: [] };
  for (let i = 0; i < TIMED_ROUNDS; i++) {
    for (const [text, language] of mix) {
      const started = performance.now();
      understander.understand(text, language);
      understood[language].push(performance.now() - started);
    }
  }
  for (const [tag, list, said] of [
    ['en', understood.en, 'English'],
    ['zh', understood.zh, 'Chinese'],
  ]) {
    const s = spread(list, [50, 95, 99]);
    emit({
      name: `intent_understand_${tag}_p95`,
      unit: 'ms',
      value: s.p95,
      ...s,
      n: list.length,
      sentences: mix.filter(([, language]) => language === tag).length,
      what: `IntentUnderstander.understand() of ${said} sentences: the template mix plus paraphrases, compounds, misspellings and statements that must refuse (templates, composition and the schema check), home of 200 entities; value is p95`,
      goal: `p95 <= ${GOAL_P95_MS}`,
      goal_met: s.p95 <= GOAL_P95_MS,
    });
  }
}
