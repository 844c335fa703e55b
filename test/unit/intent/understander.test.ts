/**
 * The compositional recogniser and its combination with the templates (issue 26), on the own
 * tuning home: the schema never yields a forbidden combination, list names lose politeness, a
 * relay is refused a brightness, compounds and follow-ups, ambiguity asks, talk refuses, and
 * misspelt or misheard names still resolve while two equally close names do not.
 */
import t from 'tap';
import { homeFromFixtures } from '../../../src/eval/intent/intent-eval-command.js';
import { loadIntentTests } from '../../../src/eval/intent/intent-tests.js';
import { ALL_SENTENCES } from '../../../src/intent/sentences/index.js';
import { IntentUnderstander, type Understanding } from '../../../src/intent/understander.js';

const homeOf = (lang: string) => homeFromFixtures(loadIntentTests(`test/fixtures/intents/tuning/${lang}`).fixtures);
const en = new IntentUnderstander(ALL_SENTENCES, homeOf('en'));
const zh = new IntentUnderstander(ALL_SENTENCES, homeOf('zh'));

const one = (u: Understanding) => (u.kind === 'intents' && u.intents.length === 1 ? u.intents[0] : undefined);

t.test('the schema decides what an action means on a device', async (t) => {
  t.match(
    one(en.understand('start the ceiling fan', 'en')),
    { name: 'HassTurnOn', slots: { name: 'Ceiling Fan' } },
    'never a vacuum start on a fan',
  );
  t.match(one(en.understand('start the robot vacuum', 'en')), { name: 'HassVacuumStart', slots: { name: 'Robot Vacuum' } });
  t.match(one(en.understand('add eggs to the shopping list please', 'en')), { name: 'HassShoppingListAddItem', slots: { item: 'eggs' } });
  t.notOk(
    'name' in (one(en.understand('add eggs to the shopping list please', 'en'))?.slots ?? {}),
    'no list called "shopping list please"',
  );
  t.match(one(en.understand('add eggs to the chores list please', 'en')), {
    name: 'HassListAddItem',
    slots: { item: 'eggs', name: 'Chores' },
  });
  t.same(en.understand('set the kitchen light to 50%', 'en'), { kind: 'unsupported', why: 'brightness', names: ['Kitchen Light'] });
  t.same(zh.understand('把厨房的灯调到50%', 'zh'), { kind: 'unsupported', why: 'brightness', names: ['厨房灯'] });
  t.match(one(zh.understand('把台灯调到50%', 'zh')), { name: 'HassLightSet', slots: { brightness: 50 } }, 'a dimmable one is set');
  t.equal(en.understand('lock the garage door', 'en').kind, 'unsupported', 'a garage door opens and closes, it does not lock');
});

t.test('compounds, follow-ups and their quiet time', async (t) => {
  const compound = zh.understand('关掉厨房的灯然后打开卧室窗帘', 'zh');
  t.match(compound, {
    kind: 'intents',
    intents: [
      { name: 'HassTurnOff', slots: { area: '厨房', domain: 'light' } },
      { name: 'HassTurnOn', slots: { name: '卧室窗帘' } },
    ],
  });
  t.match(en.understand('turn off the desk lamp and the ceiling fan', 'en'), {
    intents: [
      { name: 'HassTurnOff', slots: { name: 'Desk Lamp' } },
      { name: 'HassTurnOff', slots: { name: 'Ceiling Fan' } },
    ],
  });
  const c = { conversation: 'a', now: 1_000 };
  en.understand('is the front door locked?', 'en', c);
  t.match(one(en.understand('lock it', 'en', { ...c, now: 2_000 })), { name: 'HassTurnOn', slots: { name: 'Front Door', domain: 'lock' } });
  t.equal(en.understand('lock it', 'en', { conversation: 'b' }).kind, 'none', 'another conversation has no referent');
  t.equal(en.understand('unlock it', 'en', { ...c, now: 2_000 + 121_000 }).kind, 'none', 'forgotten after the quiet time');
  zh.understand('打开客厅的灯', 'zh', { conversation: 'z', now: 0 });
  t.match(one(zh.understand('还有卧室的', 'zh', { conversation: 'z', now: 1 })), {
    name: 'HassTurnOn',
    slots: { area: '卧室', domain: 'light' },
  });
});

t.test('ambiguity asks, talk refuses', async (t) => {
  t.equal(en.understand('turn on the light', 'en').kind, 'ask');
  t.equal(zh.understand('开灯', 'zh').kind, 'ask');
  t.match(
    one(zh.understand('开灯', 'zh', { area: '书房' })),
    { name: 'HassTurnOn', slots: { area: '书房', domain: 'light' } },
    'the satellite’s room decides',
  );
  for (const [text, lang] of [
    ['I turned off the kitchen light yesterday', 'en'],
    ['why is the kitchen light always on?', 'en'],
    ['do you think smart locks are safe', 'en'],
    ['我昨天把厨房的灯关了', 'zh'],
    ['你觉得智能门锁安全吗', 'zh'],
    ['不要开厨房的灯', 'zh'],
  ] as const) {
    t.equal((lang === 'en' ? en : zh).understand(text, lang).kind, 'none', text);
  }
});

t.test('misspelt and misheard names resolve only when one name is closest', async (t) => {
  t.match(one(en.understand('turn off the kitchn celing', 'en')), { name: 'HassTurnOff', slots: { name: 'Kitchen Ceiling' } });
  t.match(one(en.understand('trun off the desklamp', 'en')), { name: 'HassTurnOff', slots: { name: 'Desk Lamp' } });
  t.match(one(zh.understand('把客厅吊登关了', 'zh')), { name: 'HassTurnOff', slots: { name: '客厅吊灯' } });
  t.match(one(zh.understand('打打开卧室窗帘', 'zh')), { name: 'HassTurnOn', slots: { name: '卧室窗帘' } }, 'a doubled character');
  t.not(one(zh.understand('打开太灯', 'zh'))?.slots.name, '台灯', '太灯 is as close to 吊灯 as to 台灯: no guess');
});

t.test('English spelling is repaired only to a unique closest known word', async (t) => {
  const { SpellingRepair } = await import('../../../src/intent/compose/spelling.js');
  const repair = new SpellingRepair(ALL_SENTENCES, homeOf('en'));
  t.equal(repair.repair('swtich off the bedoom lamp'), 'switch off the bedroom lamp');
  t.equal(repair.repair('tunr off'), 'tunr off', '"turn" and "tune" are both one slip away: no choice is made');
  t.equal(repair.repair('turn off the desk lamp'), 'turn off the desk lamp', 'known words stay');
  t.equal(repair.repair('add kiwi to the list'), 'add kiwi to the list', 'short words are never changed');
  t.match(one(en.understand('swtich off the kitchen celing', 'en')), { name: 'HassTurnOff', slots: { name: 'Kitchen Ceiling' } });
  t.match(one(en.understand('add apples to the shopping list', 'en')), { slots: { item: 'apples' } }, 'a sure match keeps its free text');
});

t.test('second round: items, particles across targets, positions, timer names, unknown places, players', async (t) => {
  const names = (u: Understanding) => (u.kind === 'intents' ? u.intents.map((i) => [i.name, i.slots]) : u.kind);
  t.same(names(en.understand('add flour, sugar and salt to the shopping list', 'en')), [
    ['HassShoppingListAddItem', { item: 'flour' }],
    ['HassShoppingListAddItem', { item: 'sugar' }],
    ['HassShoppingListAddItem', { item: 'salt' }],
  ]);
  t.same(names(zh.understand('把黄油和果酱加到购物清单', 'zh')), [
    ['HassShoppingListAddItem', { item: '黄油' }],
    ['HassShoppingListAddItem', { item: '果酱' }],
  ]);
  t.match(names(en.understand('switch the desk lamp and the kettle off', 'en')), [
    ['HassTurnOff', { name: 'Desk Lamp' }],
    ['HassTurnOff', { name: 'Kettle' }],
  ]);
  t.match(one(en.understand('flip the hall light off', 'en')), { name: 'HassTurnOff', slots: { name: 'Hall Light' } }, 'not a toggle');
  t.match(one(en.understand('turn the thermostat up to 23 degrees', 'en')), {
    name: 'HassClimateSetTemperature',
    slots: { temperature: 23 },
  });
  t.match(one(en.understand('open the bedroom curtains halfway', 'en')), { name: 'HassSetPosition', slots: { position: 50 } });
  t.not(one(en.understand('close the bedroom curtains 30 percent', 'en'))?.name, 'HassTurnOff', 'a share is never a full close');
  t.match(one(en.understand('start a tea timer for 4 minutes', 'en')), { name: 'HassStartTimer', slots: { name: 'tea', minutes: 4 } });
  t.match(one(zh.understand('设一个四分钟的泡茶计时器', 'zh')), { name: 'HassStartTimer', slots: { name: '泡茶', minutes: 4 } });
  t.match(one(en.understand('set a timer for an hour and a half', 'en')), { name: 'HassStartTimer', slots: { hours: 1, minutes: 30 } });
  // A place the home does not have: every light of the house must not be switched.
  t.equal(en.understand('turn on the lights in the cellar', 'en').kind, 'none');
  t.not(zh.understand('关掉阁楼的灯', 'zh').kind, 'intents');
  t.match(one(en.understand('hey, is the back door locked', 'en')), {
    name: 'HassGetState',
    slots: { name: 'Back Door', state: 'locked' },
  });
  t.match(one(en.understand('make sure the back door is locked', 'en')), { name: 'HassTurnOn', slots: { name: 'Back Door' } });
  t.match(one(en.understand('would you mind switching off the night light', 'en')), {
    name: 'HassTurnOff',
    slots: { name: 'Night Light' },
  });
  t.match(one(en.understand('send the robot vacuum back to its charger', 'en')), { name: 'HassVacuumReturnToBase' });
  // No player said: whatever plays (the executor picks it); "it" is the conversation's player.
  t.same(one(en.understand('skip to the next song', 'en'))?.slots, {});
  en.understand('pause the kitchen speaker', 'en', { conversation: 'round-two' });
  t.match(one(en.understand('resume it', 'en', { conversation: 'round-two' })), {
    name: 'HassMediaUnpause',
    slots: { name: 'Kitchen Speaker' },
  });
});

t.test('a plural in several rooms asks which room unless "all" or a room was said or heard from', async (t) => {
  t.equal(en.understand('turn off the lamps', 'en').kind, 'ask');
  t.match(one(en.understand('turn off all the lamps', 'en')), { name: 'HassTurnOff', slots: { domain: 'light' } });
  t.match(one(en.understand('turn off the lamps', 'en', { area: 'Bedroom' })), { name: 'HassTurnOff', slots: { area: 'Bedroom' } });
  // Only a setting said ("set the temperature to 21"): the devices it fits, as before.
  t.equal(one(en.understand('set the temperature to 21 degrees', 'en'))?.name, 'HassClimateSetTemperature');
});
