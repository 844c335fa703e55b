/**
 * The intent test loader and scorer: hand-written YAML folders check the shapes the loader accepts
 * and the errors it names, the scorer is checked on each matching rule, and a read-only smoke test
 * loads the real home-assistant/intents data (skipped when /work/shared/data is absent) and scores
 * an oracle recogniser at 100% and a silent one at 0%, so loader and scorer agree on every case.
 */
import { existsSync } from 'node:fs';
import t, { type Test } from 'tap';
import { formatReport, type Recognise, scoreIntents, slotMatches } from '../../../../src/eval/intent/intent-score.js';
import { type IntentCase, loadIntentTests } from '../../../../src/eval/intent/intent-tests.js';
import { isHomeAgentError } from '../../../../src/shared/errors.js';

const FIXTURES = `language: en
floors:
  - name: Upstairs
    id: upstairs_id
areas:
  - name: Kitchen
    id: kitchen_id
    floor: upstairs_id
entities:
  - name: Kitchen Lamp
    id: light.kitchen_lamp
    area: kitchen_id
    state: "on"
    attributes:
      brightness: 100
  - name: Phone Battery
    id: binary_sensor.phone_battery
    state:
      in: normal
      out: "off"
timers:
  - is_active: true
`;

const LIGHTS = `language: en
tests:
  - sentences:
      - turn on the kitchen lamp
      - kitchen lamp on
    intent:
      name: HassTurnOn
      slots:
        name: [Kitchen Lamp, kitchen lamp]
  - sentences:
      - lights on in here
    intent:
      name: HassTurnOn
      slots:
        area: Kitchen
        domain: light
      context:
        area: Kitchen
    response: Turned on the lights
`;

const HEADER_ONLY = `---
# HassLightSet - name_brightness
# example: set the lamp to 50%

language: en
entities:
  - name: Lamp
    domain: light
tests:
  - sentences:
      - set Lamp to 50%
    slots:
      name: Lamp
      brightness: 50
    response: Brightness set
`;

function expectEvalError(t: Test, fn: () => unknown, pattern: RegExp, what: string): void {
  try {
    fn();
    t.fail(`${what}: no error`);
  } catch (error) {
    t.ok(isHomeAgentError(error, 'HA_ERR_EVAL_DATA'), `${what}: HA_ERR_EVAL_DATA`);
    t.match((error as Error).message, pattern, `${what}: message`);
  }
}

t.test('loads cases, fixtures and header-only files; ignores other _ files', async (t) => {
  const dir = t.testdir({
    '_fixtures.yaml': FIXTURES,
    '_test_failures.yaml': 'language: en\nsentences:\n  - nonsense\n',
    'light_HassTurnOn.yaml': LIGHTS,
    'name_brightness.yaml': HEADER_ONLY,
    'notes.txt': 'not yaml data',
  });
  const set = loadIntentTests(dir);
  t.equal(set.language, 'en');
  t.same(set.files, ['light_HassTurnOn.yaml', 'name_brightness.yaml']);
  t.equal(set.cases.length, 4);
  t.match(set.cases[0], {
    file: 'light_HassTurnOn.yaml',
    index: 0,
    language: 'en',
    sentence: 'turn on the kitchen lamp',
    expected: { name: 'HassTurnOn', slots: { name: ['Kitchen Lamp', 'kitchen lamp'] } },
    context: {},
  });
  t.same(set.cases[2]?.context, { area: 'Kitchen' });
  t.equal(set.cases[2]?.index, 1);
  t.same(set.cases[3]?.expected, { name: 'HassLightSet', slots: { name: 'Lamp', brightness: 50 } });
  t.same(set.cases[3]?.extra_entities, [{ name: 'Lamp', domain: 'light' }], "the file's own entities ride on its cases");
  t.notOk('extra_entities' in (set.cases[0] as IntentCase), 'a file without entities adds none');
  t.same(set.fixtures.floors, [{ id: 'upstairs_id', name: 'Upstairs' }]);
  t.same(set.fixtures.areas, [{ id: 'kitchen_id', name: 'Kitchen', floor: 'upstairs_id' }]);
  t.same(set.fixtures.entities, [
    { id: 'light.kitchen_lamp', name: 'Kitchen Lamp', area: 'kitchen_id', state: 'on', attributes: { brightness: 100 } },
    { id: 'binary_sensor.phone_battery', name: 'Phone Battery', state: { in: 'normal', out: 'off' } },
  ]);
});

t.test("a test file's entities list must name each entity and its domain", async (t) => {
  const withEntities = (entities: string) => ({
    '_fixtures.yaml': FIXTURES,
    'name_only.yaml': HEADER_ONLY.replace('entities:\n  - name: Lamp\n    domain: light\n', entities),
  });
  expectEvalError(
    t,
    () => loadIntentTests(t.testdir(withEntities('entities:\n  - name: Lamp\n'))),
    /name_only\.yaml entities\[0\]\.domain: must be a non-empty string/,
    'missing domain',
  );
  expectEvalError(
    t,
    () => loadIntentTests(t.testdir(withEntities('entities: Lamp\n'))),
    /name_only\.yaml entities: must be a list/,
    'not a list',
  );
  expectEvalError(
    t,
    () => loadIntentTests(t.testdir(withEntities('entities:\n  - Lamp\n'))),
    /name_only\.yaml entities\[0\]: must be a mapping/,
    'entry not a mapping',
  );
});

t.test('bad data fails with HA_ERR_EVAL_DATA naming file and index', async (t) => {
  const withFixtures = (file: string) => ({ '_fixtures.yaml': FIXTURES, 'x.yaml': file });
  const root = t.testdir({
    noFixtures: { 'a.yaml': LIGHTS },
    emptySentences: withFixtures(
      'language: en\ntests:\n  - sentences: [a]\n    intent: {name: A}\n  - sentences: []\n    intent: {name: A}\n',
    ),
    noIntent: withFixtures('language: en\ntests:\n  - sentences: [a]\n'),
    objectSlot: withFixtures('language: en\ntests:\n  - sentences: [a]\n    intent: {name: A, slots: {area: {x: 1}}}\n'),
    otherLanguage: withFixtures('language: de\ntests: []\n'),
    badYaml: withFixtures('language: en\ntests: [\n'),
    entityWithoutId: { '_fixtures.yaml': 'language: en\nentities:\n  - name: Lamp\n' },
    halfState: { '_fixtures.yaml': 'language: en\nentities:\n  - {name: L, id: light.l, state: {in: x}}\n' },
  });
  const load = (name: string) => () => loadIntentTests(`${root}/${name}`);
  expectEvalError(t, load('noFixtures'), /no _fixtures\.yaml/, 'no fixtures');
  expectEvalError(t, load('missing'), /cannot be read/, 'missing folder');
  expectEvalError(t, load('emptySentences'), /^x\.yaml tests\[1\]: sentences must be a non-empty list/, 'empty sentences');
  expectEvalError(t, load('noIntent'), /^x\.yaml tests\[0\]: has no intent/, 'no intent and no header');
  expectEvalError(t, load('objectSlot'), /^x\.yaml tests\[0\]\.intent slot area: must be/, 'object slot value');
  expectEvalError(t, load('otherLanguage'), /^x\.yaml: language de differs/, 'language mismatch');
  expectEvalError(t, load('badYaml'), /^x\.yaml: not valid YAML/, 'bad YAML');
  expectEvalError(t, load('entityWithoutId'), /^_fixtures\.yaml entities\[0\]\.id: must be a non-empty string/, 'entity id');
  expectEvalError(t, load('halfState'), /entities\[0\]\.state: must be a string or \{in, out\}/, 'half state pair');
});

const kase = (sentence: string, name: string, slots: IntentCase['expected']['slots']): IntentCase => ({
  file: 'f.yaml',
  index: 0,
  language: 'en',
  sentence,
  expected: { name, slots },
  context: {},
});

t.test('slot values compare without case, as numbers, and against alternatives', async (t) => {
  t.ok(slotMatches('Living Room', 'living room '));
  t.ok(slotMatches(50, '50'));
  t.ok(slotMatches('50', 50));
  t.ok(slotMatches(['Kitchen Lamp', 'lamp'], 'LAMP'));
  t.ok(slotMatches('Lamp', ['lamp', 'other']));
  t.notOk(slotMatches('Lamp', 'Lamps'));
  t.notOk(slotMatches(50, 51));
  t.notOk(slotMatches('Lamp', undefined));
  t.notOk(slotMatches('Lamp', { value: 'Lamp' }));
});

t.test('scoreIntents: name and every stated slot must match; extra slots are fine', async (t) => {
  const cases = [
    kase('right', 'HassTurnOn', { name: 'Lamp' }),
    kase('extra slot', 'HassTurnOn', { name: 'Lamp' }),
    kase('wrong name', 'HassTurnOff', { name: 'Lamp' }),
    kase('missing slot', 'HassLightSet', { name: 'Lamp', brightness: 50 }),
    kase('nothing', 'HassLightSet', {}),
    kase('throws', 'HassLightSet', {}),
  ];
  const seen: string[] = [];
  const recognise: Recognise = (sentence, language) => {
    seen.push(`${language}:${sentence}`);
    if (sentence === 'right') return { name: 'HassTurnOn', slots: { name: 'lamp' } };
    if (sentence === 'extra slot') return { name: 'HassTurnOn', slots: { name: 'Lamp', domain: 'light' } };
    if (sentence === 'wrong name') return { name: 'HassTurnOn', slots: { name: 'Lamp' } };
    if (sentence === 'missing slot') return { name: 'HassLightSet', slots: { name: 'Lamp' } };
    if (sentence === 'throws') throw new Error('engine bug');
    return undefined;
  };
  const score = scoreIntents(cases, recognise);
  t.equal(seen.length, 6);
  t.equal(seen[0], 'en:right');
  t.equal(score.total, 6);
  t.equal(score.correct, 2);
  t.equal(score.accuracy, 2 / 6);
  t.same(score.per_intent, {
    HassTurnOn: { total: 2, correct: 2 },
    HassTurnOff: { total: 1, correct: 0 },
    HassLightSet: { total: 3, correct: 0 },
  });
  t.same(
    score.failures.map((f) => [f.sentence, (f.got as { name: string } | null)?.name ?? null]),
    [
      ['wrong name', 'HassTurnOn'],
      ['missing slot', 'HassLightSet'],
      ['nothing', null],
      ['throws', null],
    ],
  );
  t.same(score.failures[1]?.expected, { name: 'HassLightSet', slots: { name: 'Lamp', brightness: 50 } });
  t.equal(score.failures[0]?.file, 'f.yaml');

  const report = formatReport(score);
  t.match(report, /HassLightSet\s+0\/3\s+0\.0%/);
  t.match(report, /HassTurnOn\s+2\/2\s+100\.0%/);
  t.match(report, /total\s+2\/6\s+33\.3%/);
  t.ok(report.indexOf('HassLightSet') < report.indexOf('HassTurnOff'), 'intents in name order');

  const empty = scoreIntents([], recognise);
  t.same(empty, {
    total: 0,
    correct: 0,
    accuracy: 0,
    wrong_actions: 0,
    wrong_action_rate: 0,
    refused: 0,
    refusal_rate: 0,
    per_intent: {},
    failures: [],
  });
  t.match(formatReport(empty), /total\s+0\/0\s+-/);
});

const DATA = '/work/shared/data/ha-intents';
for (const language of ['en', 'zh-cn']) {
  t.test(`smoke: the real ${language} test files load and score`, async (t) => {
    const dir = `${DATA}/${language}`;
    if (!existsSync(dir)) {
      t.pass('data absent', { skip: `${dir} is absent; the intent evaluation data lives outside the repository` });
      return;
    }
    const set = loadIntentTests(dir);
    t.equal(set.language, language);
    t.ok(set.cases.length > 50, `${set.cases.length} cases from ${set.files.length} files`);
    t.ok(set.fixtures.areas.length > 0 && set.fixtures.entities.length > 0, 'fixtures have areas and entities');
    t.notOk(
      set.files.some((f) => f.startsWith('_')),
      'no _ file is read as tests',
    );
    const areaIds = new Set(set.fixtures.areas.map((a) => a.id));
    t.same(
      set.fixtures.entities.filter((e) => e.area !== undefined && !areaIds.has(e.area)).map((e) => e.id),
      [],
      'every entity area is a declared area',
    );
    const oracle: Recognise = (sentence) => {
      const c = set.cases.find((x) => x.sentence === sentence);
      if (c === undefined) return undefined;
      const slots = Object.fromEntries(Object.entries(c.expected.slots).map(([k, v]) => [k, Array.isArray(v) ? v[v.length - 1] : v]));
      return { name: c.expected.name, slots };
    };
    // The same sentence can appear twice with different expectations; score those against themselves.
    const unique = set.cases.filter((c) => set.cases.find((x) => x.sentence === c.sentence) === c);
    const perfect = scoreIntents(unique, oracle);
    t.equal(perfect.accuracy, 1, 'the expected answer scores 100%');
    const silent = scoreIntents(set.cases, () => undefined);
    t.equal(silent.correct, 0);
    t.equal(silent.failures.length, set.cases.length);
    t.ok(Object.keys(silent.per_intent).length > 3, 'several intents');
  });
}
