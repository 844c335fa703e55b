/**
 * Extraction golden sets. Thresholds: the sets the rules were written against must keep
 * precision ≥ 0.95 and recall ≥ 0.90; the held-out sets (written before the rules, used once to
 * find bugs) precision ≥ 0.90 and recall ≥ 0.85. Sentences that state nothing must yield nothing.
 */
import t from 'tap';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';
import { loadCases, loadNoFacts, score } from './fixtures/golden.js';

const analyzer = createTextAnalyzer();

const SETS = [
  { file: 'zh-golden.json', minPrecision: 0.95, minRecall: 0.9, minCases: 40 },
  { file: 'en-golden.json', minPrecision: 0.95, minRecall: 0.9, minCases: 40 },
  { file: 'zh-holdout.json', minPrecision: 0.9, minRecall: 0.85, minCases: 20 },
  { file: 'en-holdout.json', minPrecision: 0.9, minRecall: 0.85, minCases: 20 },
];

for (const set of SETS) {
  t.test(`${set.file}: precision and recall`, async (t) => {
    const cases = loadCases(set.file);
    t.ok(cases.length >= set.minCases, `${cases.length} sentences (at least ${set.minCases})`);
    t.ok(cases.reduce((n, c) => n + c.expected.length, 0) >= set.minCases * 0.9, 'enough expected triples to measure');
    const result = await score(analyzer, cases);
    t.comment(
      `${set.file}: P ${result.precision.toFixed(3)} R ${result.recall.toFixed(3)} (${result.truePositives}/${result.produced} produced, ${result.expected} expected)`,
    );
    const detail = { misses: result.misses };
    t.ok(result.precision >= set.minPrecision, `precision ${result.precision.toFixed(3)} ≥ ${set.minPrecision}`, detail);
    t.ok(result.recall >= set.minRecall, `recall ${result.recall.toFixed(3)} ≥ ${set.minRecall}`, detail);
  });
}

t.test('questions, greetings, commands, unresolved pronouns and template text yield nothing', async (t) => {
  const { zh, en } = loadNoFacts();
  t.ok(zh.length >= 20 && en.length >= 20, 'at least 20 sentences per language');
  for (const sentence of [...zh, ...en]) t.same(await analyzer.extract(sentence), [], sentence);
});

t.test('every triple carries its exact sentence, a known method and a score in its range', async (t) => {
  const ranges: Record<string, [number, number]> = { template: [0.45, 0.7], english: [0.45, 0.7], personal: [0.95, 0.95] };
  for (const file of ['zh-golden.json', 'en-golden.json']) {
    for (const c of loadCases(file)) {
      for (const triple of await analyzer.extract(c.text, c.speaker === undefined ? undefined : { speaker: c.speaker })) {
        const range = ranges[triple.method];
        if (range === undefined) {
          t.fail(`unknown method ${triple.method}`);
          continue;
        }
        if (triple.confidence < range[0] || triple.confidence > range[1])
          t.fail(`${triple.method} score ${triple.confidence} in ${c.text}`);
        if (!c.text.includes(triple.sentence)) t.fail(`sentence ${triple.sentence} not from ${c.text}`);
      }
    }
  }
  t.pass('checked all golden triples');
});
