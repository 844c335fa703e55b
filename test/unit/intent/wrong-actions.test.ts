/**
 * The wrong-action guards of issue 26's third round, on the own tuning home: a name with a whole
 * word replaced is only a guess, a word too short to tell apart is never repaired into a command
 * word, stories about the home ("somebody left …", "谁把…", "一个小时前…") refuse even when a
 * template would match, and an unknown word before a kind of device refuses instead of asking
 * which of the others is meant. Each check is paired with the sentence that must still work.
 */
import t from 'tap';
import { homeFromFixtures } from '../../../src/eval/intent/intent-eval-command.js';
import { loadIntentTests } from '../../../src/eval/intent/intent-tests.js';
import { REPLACED_WORD_SIMILARITY, replacesAWord } from '../../../src/intent/near-name.js';
import { ALL_SENTENCES } from '../../../src/intent/sentences/index.js';
import { IntentUnderstander, type Understanding } from '../../../src/intent/understander.js';

const homeOf = (lang: string) => homeFromFixtures(loadIntentTests(`test/fixtures/intents/tuning/${lang}`).fixtures);
const en = new IntentUnderstander(ALL_SENTENCES, homeOf('en'));
const zh = new IntentUnderstander(ALL_SENTENCES, homeOf('zh'));

/** Whether the daemon would act at once (a sure reading; min_confidence is 0.85). */
const acts = (u: Understanding) => u.kind === 'intents' && Math.min(u.confidence, ...u.intents.map((i) => i.confidence)) >= 0.85;
const one = (u: Understanding) => (u.kind === 'intents' && u.intents.length === 1 ? u.intents[0] : undefined);

t.test('a replaced word is not a slip', async (t) => {
  t.ok(replacesAWord('dining room blinds', 'living room blinds'));
  t.notOk(replacesAWord('livng room blinds', 'living room blinds'), 'a dropped letter is a slip');
  t.notOk(replacesAWord('kitchen lihgt', 'kitchen light'), 'a swap is a slip');
  t.notOk(replacesAWord('desklamp', 'desk lamp'), 'joined words are compared whole elsewhere');
  t.notOk(replacesAWord('打开太灯', '台灯'), 'Chinese near-homophones are slips');
  const guess = en.understand('open the dining room blinds', 'en');
  t.notOk(acts(guess), 'another room is never acted on');
  t.ok(guess.kind !== 'intents' || guess.confidence <= REPLACED_WORD_SIMILARITY);
  t.ok(acts(en.understand('open the livng room blinds', 'en')), 'a misspelt room still is');
});

t.test('short words are not repaired into command words', async (t) => {
  t.equal(en.understand('stop the war', 'en').kind, 'none');
  t.match(one(en.understand('set the thermostat to 22 degrees', 'en')), { name: 'HassClimateSetTemperature' });
});

t.test('stories about the home refuse', async (t) => {
  for (const s of ['somebody left the kitchen light on all night', 'I already turned off the kettle'])
    t.equal(en.understand(s, 'en').kind, 'none', s);
  for (const s of ['谁把走廊灯打开的', '我一个小时前关了窗户', '暂停一下想一想', '我已经把水壶关了'])
    t.equal(zh.understand(s, 'zh').kind, 'none', s);
  t.match(
    one(zh.understand('定一个一小时的计时器', 'zh')),
    { name: 'HassStartTimer', slots: { hours: 1 } },
    'a duration without 前 is a timer',
  );
  t.match(
    one(en.understand('make the living room lamp red', 'en')),
    { name: 'HassLightSet', slots: { color: 'red' } },
    '"make" is not "makes"',
  );
  t.match(one(zh.understand('把走廊灯打开', 'zh')), { name: 'HassTurnOn', slots: { name: '走廊灯' } });
});

t.test('an unknown word before a kind of device refuses rather than asks', async (t) => {
  t.equal(en.understand('turn on the basement light', 'en').kind, 'none');
  t.equal(en.understand('switch off the attic fan', 'en').kind, 'none');
  t.equal(zh.understand('锁上侧门', 'zh').kind, 'none');
  t.equal(en.understand('turn on the light', 'en').kind, 'ask', 'with no word unknown it still asks');
  t.equal(zh.understand('开灯', 'zh').kind, 'ask');
});

t.test('conditions and exceptions are rules, not commands', async (t) => {
  for (const s of ['if it gets dark turn on the garden lights', 'turn off all the lights except the kitchen'])
    t.equal(en.understand(s, 'en').kind, 'none', s);
  for (const s of ['如果天黑了就打开阳台灯', '除了厨房把灯都关了', '等我回家再开水壶']) t.equal(zh.understand(s, 'zh').kind, 'none', s);
  t.match(one(en.understand('turn off all the lights in the kitchen', 'en')), { name: 'HassTurnOff', slots: { area: 'Kitchen' } });
  t.match(one(zh.understand('把厨房的灯都关了', 'zh')), { name: 'HassTurnOff', slots: { area: '厨房' } });
});
