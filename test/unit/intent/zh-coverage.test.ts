/**
 * Chinese coverage of the local intent engine (issue 11): home-assistant/intents has zh-cn tests for
 * only nine intents, so test/fixtures/intents/zh holds our own Chinese test sentences for every
 * intent the English files know. This test scores the real recogniser on them and fails under 95 %,
 * and fails when an intent of the English sentence files has no Chinese templates or no Chinese
 * test — a new English intent must come with its Chinese sentences and tests.
 */
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { homeFromFixtures, homeWithExtras, scoreWithFileEntities } from '../../../src/eval/intent/intent-eval-command.js';
import { loadIntentTests } from '../../../src/eval/intent/intent-tests.js';
import { type IntentHome, IntentRecognizer } from '../../../src/intent/recognizer.js';
import { EN_ASSIST } from '../../../src/intent/sentences/en-assist.js';
import { EN_CONTROL } from '../../../src/intent/sentences/en-control.js';
import { ALL_SENTENCES } from '../../../src/intent/sentences/index.js';
import { ZH_SENTENCES } from '../../../src/intent/sentences/zh.js';

const DIR = fileURLToPath(new URL('../../fixtures/intents/zh', import.meta.url));
const MIN_ACCURACY = 0.95;

/** Our fixture home; its entities' aliases ("水阀" for 总水阀) reach the recogniser as the registry's would. */
function fixtureHome(): IntentHome {
  return homeFromFixtures(loadIntentTests(DIR).fixtures);
}

const intentsOf = (families: ReadonlyArray<{ intent: string }>): string[] => [...new Set(families.map((f) => f.intent))].sort();

t.test(`our Chinese tests score at least ${MIN_ACCURACY * 100} %`, async (t) => {
  const set = loadIntentTests(DIR);
  t.equal(set.language, 'zh-cn');
  t.ok(set.cases.length >= 300, `${set.cases.length} sentences in ${set.files.length} files`);
  const home = fixtureHome();
  t.ok(
    home.entities.some((e) => (e.aliases ?? []).length > 0),
    'the aliases of _fixtures.yaml reach the home',
  );
  const score = scoreWithFileEntities(set.cases, (extras) => {
    const recognizer = new IntentRecognizer(ALL_SENTENCES, homeWithExtras(home, extras));
    return (sentence, language, context) =>
      recognizer.recognise(sentence, language, context.area === undefined ? {} : { area: context.area });
  });
  const failures = score.failures.map((f) => `${f.file}: ${f.sentence} → ${f.got === null ? 'nothing' : JSON.stringify(f.got)}`);
  t.ok(score.accuracy >= MIN_ACCURACY, `${score.correct}/${score.total} = ${(100 * score.accuracy).toFixed(1)} %`, {
    failures,
  });
  const weak = Object.entries(score.per_intent).filter(([, v]) => v.correct / v.total < 0.75);
  t.same(weak, [], 'no intent is recognised in fewer than 3 of 4 of its sentences');
});

t.test('every intent of the English sentence files has Chinese templates and Chinese tests', async (t) => {
  const english = intentsOf([...EN_CONTROL, ...EN_ASSIST]);
  t.ok(english.length >= 30, `${english.length} English intents`);
  const chinese = new Set(intentsOf(ZH_SENTENCES));
  t.same(
    english.filter((intent) => !chinese.has(intent)),
    [],
    'English intents without Chinese templates',
  );
  const tested = new Set(loadIntentTests(DIR).cases.map((c) => c.expected.name));
  t.same(
    english.filter((intent) => !tested.has(intent)),
    [],
    'English intents without Chinese test sentences',
  );
});
