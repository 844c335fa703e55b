/**
 * Issue 26's extensions of the intent test format and scorer: `intent: none`, `intent: ask`,
 * compounds (`intents:`), conversations, area and floor aliases in the fixtures; the wrong-action
 * and refusal counts; the seeded noise; and the CLI over several sets with noise levels.
 */
import t from 'tap';
import { runIntentEvalCommand } from '../../../../src/eval/intent/intent-eval-command.js';
import { type Recognise, scoreIntents } from '../../../../src/eval/intent/intent-score.js';
import { loadIntentTests, NONE_BUCKET } from '../../../../src/eval/intent/intent-tests.js';
import { addNoise, HOMOPHONE_COUNT } from '../../../../src/eval/intent/noise.js';

const FIXTURES = `language: en
floors:
  - { name: Upstairs, id: up, aliases: [top floor] }
areas:
  - { name: Kitchen, id: kitchen, floor: up, aliases: [cookhouse] }
entities:
  - { name: Kitchen Lamp, id: light.kitchen_lamp, area: kitchen, attributes: { supported_color_modes: [onoff] } }
  - { name: Front Door, id: lock.front_door, area: kitchen }
`;

const TESTS = `language: en
tests:
  - sentences: [turn on the kitchen lamp]
    intent: { name: HassTurnOn, slots: { name: Kitchen Lamp } }
  - sentences: [I turned off the lamp yesterday]
    intent: none
  - sentences: [turn on the light]
    intent: ask
  - sentences: [lock the front door and turn off the kitchen lamp]
    intents:
      - { name: HassTurnOn, slots: { name: Front Door } }
      - { name: HassTurnOff, slots: { name: Kitchen Lamp } }
  - conversation:
      - { sentence: is the front door locked, intent: { name: HassGetState, slots: { name: Front Door } } }
      - { sentence: lock it, intent: { name: HassTurnOn, slots: { name: Front Door } } }
`;

t.test('the loader reads none, ask, compounds, conversations and aliases', async (t) => {
  const dir = t.testdir({ '_fixtures.yaml': FIXTURES, 'x.yaml': TESTS });
  const set = loadIntentTests(dir);
  t.equal(set.cases.length, 6);
  t.same(set.cases[1]?.expect, { kind: 'none' });
  t.equal(set.cases[1]?.expected.name, NONE_BUCKET);
  t.same(set.cases[2]?.expect, { kind: 'ask' });
  t.equal(set.cases[3]?.expect?.kind === 'intents' && set.cases[3].expect.intents.length, 2);
  t.same(set.cases[4]?.conversation, { id: 'x.yaml#4', step: 0 });
  t.same(set.cases[5]?.conversation, { id: 'x.yaml#4', step: 1 });
  t.equal(set.cases[5]?.sentence, 'lock it');
  t.same(set.fixtures.areas[0]?.aliases, ['cookhouse']);
  t.same(set.fixtures.floors[0]?.aliases, ['top floor']);
});

t.test('bad extensions fail naming the place', async (t) => {
  const bad = (tests: string) => t.testdir({ '_fixtures.yaml': FIXTURES, 'x.yaml': `language: en\ntests:\n${tests}` });
  t.throws(() => loadIntentTests(bad('  - sentences: [a]\n    intent: maybe\n')), /x\.yaml tests\[0\]\.intent: must be a mapping/);
  t.throws(() => loadIntentTests(bad('  - sentences: [a]\n    intents: []\n')), /tests\[0\]\.intents: must be a non-empty list/);
  t.throws(
    () => loadIntentTests(bad('  - conversation: [{intent: none}]\n')),
    /tests\[0\]\.conversation\[0\]: must be a mapping with a non-empty sentence/,
  );
});

t.test('wrong actions, refusals, asks and compounds are scored as the issue defines them', async (t) => {
  const dir = t.testdir({ '_fixtures.yaml': FIXTURES, 'x.yaml': TESTS });
  const { cases } = loadIntentTests(dir);
  const seen: Array<string | undefined> = [];
  // Acts on everything, asks nothing: the none and ask cases become wrong actions.
  const eager: Recognise = (sentence, _language, context) => {
    seen.push(context.conversation);
    if (sentence.includes(' and ')) {
      return {
        kind: 'intents',
        intents: [
          { name: 'HassTurnOn', slots: { name: 'Front Door' } },
          { name: 'HassTurnOff', slots: { name: 'Kitchen Lamp' } },
        ],
      };
    }
    if (sentence.startsWith('is ')) return { name: 'HassGetState', slots: { name: 'Front Door' } };
    return { name: 'HassTurnOn', slots: { name: sentence === 'lock it' ? 'Front Door' : 'Kitchen Lamp' } };
  };
  const score = scoreIntents(cases, eager);
  t.equal(score.correct, 4, 'the command, the compound and both steps');
  t.equal(score.wrong_actions, 2, 'acting on the statement and on the ambiguous command');
  t.equal(score.refused, 0);
  t.same(seen.slice(4), ['x.yaml#4', 'x.yaml#4'], 'conversation steps carry their conversation');
  // Careful: refuses the statement, asks on the ambiguity, does only half the compound.
  const careful: Recognise = (sentence) => {
    if (sentence.startsWith('I ')) return undefined;
    if (sentence === 'turn on the light') return { kind: 'ask' };
    if (sentence.includes(' and ')) return { name: 'HassTurnOn', slots: { name: 'Front Door' } };
    if (sentence === 'lock it') return { kind: 'none' };
    if (sentence.startsWith('is ')) return { name: 'HassGetState', slots: { name: 'Kitchen Lamp' } };
    return { name: 'HassTurnOn', slots: { name: 'Kitchen Lamp' } };
  };
  const second = scoreIntents(cases, careful);
  t.equal(second.correct, 3, 'command, none, ask');
  t.equal(second.wrong_actions, 0, 'half a compound is a miss but not a wrong action; a wrong query changes nothing');
  t.equal(second.refused, 2);
  t.equal(second.refusal_rate, 2 / 6);
});

t.test('noise is seeded, at the rate asked, and uses the homophone table for Chinese', async (t) => {
  const text = 'turn off the kitchen ceiling light in the living room please';
  t.equal(addNoise(text, 0.1, 7), addNoise(text, 0.1, 7), 'same seed, same text');
  t.not(addNoise(text, 0.1, 7), addNoise(text, 0.1, 8), 'another seed, other edits');
  t.equal(addNoise(text, 0), text);
  let changed = 0;
  for (let seed = 0; seed < 200; seed++) if (addNoise('ab', 0.05, seed) !== 'ab') changed += 1;
  t.ok(changed > 5 && changed < 45, `about 10% of two-letter texts changed at 5% (${changed}/200)`);
  t.ok(HOMOPHONE_COUNT > 100);
  const zh = '把客厅的灯打开然后关上卧室窗帘';
  const noisy = Array.from({ length: 50 }, (_, seed) => addNoise(zh, 0.2, seed));
  t.ok(
    noisy.some((n) => n.length === zh.length && n !== zh && [...n].some((ch, i) => ch !== zh[i])),
    'some edits keep the length: a homophone took a character’s place',
  );
});

t.test('intent-eval reports several sets, the two rates and each noise level', async (t) => {
  const dir = t.testdir({ a: { '_fixtures.yaml': FIXTURES, 'x.yaml': TESTS }, b: { '_fixtures.yaml': FIXTURES, 'x.yaml': TESTS } });
  let out = '';
  const engineFor = () => (() => undefined) as Recognise;
  const code = await runIntentEvalCommand(['--tests', `${dir}/a`, '--tests', `${dir}/b`, '--noise', '0,0.05', '--json'], {
    engineFor,
    stdout: (text) => {
      out += text;
    },
  });
  t.equal(code, 0);
  const report = JSON.parse(out) as { sets: Array<{ set: string; score: { refusal_rate: number }; noise: Array<{ level: number }> }> };
  t.equal(report.sets.length, 2);
  t.equal(report.sets[0]?.score.refusal_rate, 1, 'a silent engine refuses everything');
  t.same(
    report.sets[1]?.noise.map((n) => n.level),
    [0, 0.05],
  );
  out = '';
  await runIntentEvalCommand(['--sets', `${dir}/a,${dir}/b`, '--noise', '0.1'], {
    engineFor,
    stdout: (text) => {
      out += text;
    },
  });
  t.match(out, /wrong-action rate 0\.0% \(0\), refusal rate 100\.0% \(6\)/);
  t.match(out, /set\s+n\s+accuracy\s+wrong\s+refused\s+noise 0\.1/);
  let err = '';
  t.equal(
    await runIntentEvalCommand(['--tests', `${dir}/a`, '--noise', 'lots'], {
      engineFor,
      stderr: (text) => {
        err += text;
      },
    }),
    64,
  );
  t.match(err, /--noise is a comma-separated list/);
});
