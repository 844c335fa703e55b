// The model parser: the tree decoder on hand-made scores, parser.json checks, a synthetic ONNX
// model with the real interface run in the worker (known tree, model-range scores), load errors
// that name the file and fall back to rules with one warning, and the worker's lifecycle.
import { join } from 'node:path';
import t from 'tap';
import { tagChinese } from '../../../src/nlp/chinese-tagger.js';
import { createDependencyParser } from '../../../src/nlp/create-dependency-parser.js';
import type { DependencyLabel } from '../../../src/nlp/dependency-parser.js';
import { OnnxDependencyParser } from '../../../src/nlp/onnx-dependency-parser.js';
import { readParserManifest, validateParserManifest } from '../../../src/nlp/parser-manifest.js';
import { RuleDependencyParser } from '../../../src/nlp/rule-dependency-parser.js';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';
import { decodeArcs, maximumSpanningTree } from '../../../src/nlp/tree-decoder.js';
import type { ErrorCode } from '../../../src/shared/errors.js';
import { captureLogs, expectErrorAsync } from '../fixtures/support.js';
import { type ParserModelOptions, PREFERRED, parserManifest, writeParserModel } from './fixtures/parser-model.js';

/** Softmax probability of `score` among the other candidates, written independently of the decoder. */
const probability = (score: number, others: readonly number[]): number =>
  Math.exp(score) / [score, ...others].reduce((s, x) => s + Math.exp(x), 0);
const round2 = (x: number): number => Math.round(x * 100) / 100;

function treeScore(scores: number[][], heads: readonly number[]): number {
  return heads.reduce((sum, h, i) => sum + (scores[i + 1]?.[h] as number), 0);
}

/** Exactly one word on the root, no word its own head, every word reaches the root. */
function isTree(heads: readonly number[]): boolean {
  const n = heads.length;
  if (heads.filter((h) => h === 0).length !== 1) return false;
  return heads.every((_, i) => {
    let node = i + 1;
    for (let steps = 0; steps <= n; steps++) {
      const head = heads[node - 1] as number;
      if (head === node || head < 0 || head > n) return false;
      if (head === 0) return true;
      node = head;
    }
    return false;
  });
}

/** Deterministic pseudo-random numbers in [-4, 4) (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return (((x ^ (x >>> 14)) >>> 0) / 4294967296) * 8 - 4;
  };
}

/** The best single-root tree by trying every head assignment (small n only). */
function bruteForceBest(scores: number[][]): number {
  const n = scores.length - 1;
  let best = Number.NEGATIVE_INFINITY;
  const heads = new Array<number>(n).fill(0);
  const visit = (i: number): void => {
    if (i === n) {
      if (isTree(heads)) best = Math.max(best, treeScore(scores, heads));
      return;
    }
    for (let h = 0; h <= n; h++) {
      if (h === i + 1) continue;
      heads[i] = h;
      visit(i + 1);
    }
  };
  visit(0);
  return best;
}

t.test('the tree decoder: cycles are broken, one root, the best tree wins', async (t) => {
  // Greedy heads: 1 ↔ 2 is a cycle and 3 hangs from the root. Breaking it through 1 → 3 costs least.
  const cycle = [[], [1, 0, 10, 5], [1, 10, 0, 2], [10, 0, 0, 0]];
  t.same(maximumSpanningTree(cycle), [3, 1, 0], 'the cycle is entered where it loses least (25 beats 22 and 17)');

  // Greedy heads: both words on the root. One of them has to move, the cheaper one does.
  const twoRoots = [[], [10, 0, 9], [10, 1, 0]];
  t.same(maximumSpanningTree(twoRoots), [2, 0], 'a single root: word 1 moves under word 2 (19 beats 11)');
  t.same(maximumSpanningTree(twoRoots, false), [0, 0], 'without the constraint both stay on the root');

  t.same(maximumSpanningTree([[]]), [], 'no words, no arcs');
  t.same(maximumSpanningTree([[], [3, 0]]), [0], 'one word hangs from the root');
  t.throws(() => maximumSpanningTree([[], [Number.NaN, 0]]), RangeError, 'non-finite scores are refused');

  const next = random(7);
  const wrong: Array<{ scores: number[][]; heads: number[]; score: number; best: number }> = [];
  for (let round = 0; round < 150; round++) {
    const n = 1 + (round % 5);
    const scores = [[], ...Array.from({ length: n }, () => Array.from({ length: n + 1 }, () => next()))];
    const heads = maximumSpanningTree(scores);
    const best = bruteForceBest(scores);
    const score = treeScore(scores, heads);
    if (!isTree(heads) || Math.abs(score - best) > 1e-9) wrong.push({ scores, heads, score, best });
  }
  t.same(
    wrong.slice(0, 3),
    [],
    `150 random score matrices of 1–5 words: always a tree as good as the best by brute force (${wrong.length} wrong)`,
  );
});

t.test('decodeArcs: softmax confidences, HED only on the root, arcs from a row-major score block', async (t) => {
  const labels: DependencyLabel[] = ['HED', 'SBV', 'VOB'];
  // Two words; rows are heads 0..2. Word 1 prefers word 2, word 2 the root.
  const arcScores = [0, 0, 2, 3, 1, 0];
  // The root's best label says SBV and word 1's says HED: both are overruled by the tree.
  const labelScores = [5, 1, 2, 0, 4, 1];
  const arcs = decodeArcs(arcScores, labelScores, 2, labels);
  t.same(
    arcs.map((a) => [a.head, a.label]),
    [
      [2, 'VOB'],
      [0, 'HED'],
    ],
  );
  t.ok(Math.abs((arcs[0]?.confidence ?? 0) - probability(2, [0])) < 1e-9, 'the own position is no candidate');
  t.ok(Math.abs((arcs[1]?.confidence ?? 0) - probability(3, [1])) < 1e-9, 'the root arc probability');
  await expectErrorAsync(t, () => decodeArcs([0, 1], labelScores, 2, labels), 'HA_ERR_EMBED_FAILED');
  await expectErrorAsync(t, () => decodeArcs([0, 0, 2, 3, Number.POSITIVE_INFINITY, 0], labelScores, 2, labels), 'HA_ERR_EMBED_FAILED');
});

t.test('parser.json: every problem names the file and the field', async (t) => {
  const file = '/models/zh-parser/parser.json';
  const expectBad = async (patch: Record<string, unknown>, pattern: RegExp) => {
    const error = await expectErrorAsync(
      t,
      () => validateParserManifest(parserManifest({ manifest: patch }), file),
      'HA_ERR_EMBED_MANIFEST',
    );
    t.match(error.message, pattern);
    t.match(error.message, file);
  };
  t.equal(validateParserManifest(parserManifest(), file).maxWords, 8, 'the synthetic manifest is valid');
  await expectBad({ format: 'conllu' }, /format must be "homeagent-dep-parser-v1", got "conllu"/);
  await expectBad({ words: undefined }, /words must be a list of words or an object/);
  await expectBad({ words: { 住: -1 } }, /words\.住 must be an id/);
  await expectBad({ tags: [] }, /tags must be a non-empty list of strings/);
  await expectBad({ labels: ['HED', 'SUBJ'] }, /labels\[1\] "SUBJ" is not a dependency label/);
  await expectBad({ labels: ['HED'] }, /labels must name at least one label besides HED/);
  await expectBad({ max_words: 0 }, /max_words must be an integer from 1 to 1024, got 0/);
  await expectBad({ vocab: [] }, /vocab is not a manifest field/);
  await expectErrorAsync(t, () => validateParserManifest([], file), 'HA_ERR_EMBED_MANIFEST');

  const byMap = validateParserManifest(parserManifest({ manifest: { words: { 外婆: 1, 住: 2 } } }), file);
  t.equal(byMap.wordIds.get('住'), 2, 'words may be an object of word → id');
  t.equal(byMap.tagIds.get('<unk>'), undefined, 'entry 0 of a list is the unknown id, not a word');

  const dir = t.testdir({ empty: {}, 'bad-json': { 'model.onnx': '', 'parser.json': '{"format":' } });
  const missing = await expectErrorAsync(t, () => readParserManifest(join(dir, 'nowhere')), 'HA_ERR_EMBED_MODEL_MISSING');
  t.match(missing.message, /nowhere does not exist/);
  const noFiles = await expectErrorAsync(t, () => readParserManifest(join(dir, 'empty')), 'HA_ERR_EMBED_MODEL_MISSING');
  t.match(noFiles.message, /has no model\.onnx/);
  const badJson = await expectErrorAsync(t, () => readParserManifest(join(dir, 'bad-json')), 'HA_ERR_EMBED_MANIFEST');
  t.match(badJson.message, /bad-json\/parser\.json: not valid JSON/);
});

t.test('a synthetic model in the worker: a known tree, the root constraint, model-range scores', async (t) => {
  const dir = writeParserModel(join(t.testdir(), 'parser'));
  const captured = captureLogs('debug');
  const parser = new OnnxDependencyParser({ dir, log: captured.logs.child('nlp') });
  t.teardown(() => parser.close());
  t.equal(parser.status.state, 'idle', 'nothing is loaded before the first sentence');

  const parse = await parser.parse(tagChinese('外婆住在乡下。'));
  t.equal(parser.status.state, 'ready');
  t.equal(parse.source, 'model');
  t.same(
    parse.arcs.map((a) => `${a.head} ${a.label}`),
    ['2 SBV', '0 HED', '2 CMP', '3 POB', '2 WP'],
    '外婆 ←SBV 住 →CMP 在 →POB 乡下, as the tables say',
  );
  const sure = probability(PREFERRED, [0, 0, 0, 0]);
  t.ok(
    parse.arcs.every((a) => Math.abs((a.confidence ?? 0) - sure) < 1e-6),
    `each arc carries the softmax of its head (${sure.toFixed(4)})`,
  );

  // 游泳 scores the root (3) above 喜欢 (2.5): only the single-root decoder makes it the object.
  const liking = await parser.parse(tagChinese('妈妈喜欢游泳。'));
  t.same(
    liking.arcs.map((a) => `${a.head} ${a.label}`),
    ['2 SBV', '0 HED', '2 VOB', '2 WP'],
  );
  const doubtful = probability(2.5, [3, 0, 0]);
  t.ok(
    Math.abs((liking.arcs[2]?.confidence ?? 0) - doubtful) < 1e-6,
    `the second-best head keeps its low probability ${doubtful.toFixed(4)}`,
  );

  const [a, b] = await Promise.all([parser.parse(tagChinese('外婆住在乡下。')), parser.parse(tagChinese('妈妈喜欢游泳。'))]);
  t.same([a.arcs, b.arcs], [parse.arcs, liking.arcs], 'two sentences at once each get their own tree');

  const long = tagChinese('我们全家人都住在乡下的老房子里面。');
  t.ok(long.length > 8, `${long.length} words`);
  t.equal((await parser.parse(long)).source, 'rules', 'a sentence longer than max_words goes to the rule parser');
  t.same(
    captured.records().filter((r) => r.level === 'warn'),
    [],
    'no warnings on the way',
  );

  // Through the analyzer: method dependency and a 0.75–0.9 score where the rules give a template score.
  const modelTriples = await createTextAnalyzer({ parser }).extract('外婆住在乡下。');
  const ruleTriples = await createTextAnalyzer({ parser: new RuleDependencyParser() }).extract('外婆住在乡下。');
  const facts = (triples: typeof modelTriples) =>
    triples.map((x) => `${x.subject} | ${x.relation} | ${x.object} | ${x.method} | ${x.confidence}`);
  // POB ceiling 0.825; the fact rests on three arcs (外婆, 在, 乡下).
  const expected = round2(0.75 + (0.825 - 0.75) * sure ** 3);
  t.same(facts(modelTriples), [`外婆 | lives_in | 乡下 | dependency | ${expected}`]);
  t.same(facts(ruleTriples), ['外婆 | lives_in | 乡下 | template | 0.51'], 'the rule parser: the same fact at a template score');
  const [liked] = await createTextAnalyzer({ parser }).extract('妈妈喜欢游泳。');
  t.equal(liked?.confidence, round2(0.75 + 0.15 * sure4() * doubtful), 'a doubtful object arc lowers the score towards 0.75');
  t.ok((liked?.confidence ?? 0) >= 0.75 && (liked?.confidence ?? 1) <= 0.9, 'still in the model range');
});

/** The synthetic model's certainty for a preferred head in a four-word sentence. */
function sure4(): number {
  return probability(PREFERRED, [0, 0, 0]);
}

const LOAD_FAILURES: Array<{ name: string; options: ParserModelOptions; code: ErrorCode; message: RegExp }> = [
  {
    // Only the probe run can tell: the declared width is symbolic.
    name: 'no root column in arc_scores',
    options: { arcWidth: 'n' },
    code: 'HA_ERR_EMBED_OUTPUT_SHAPE',
    message: /model\.onnx: output arc_scores is float32 \[1, 2, 2\] for 2 words; the parser interface expects float32 \[1, 2, 3\]/,
  },
  {
    name: 'more label columns declared than parser.json lists',
    options: { labelColumns: 12 },
    code: 'HA_ERR_EMBED_OUTPUT_SHAPE',
    message: /model\.onnx: output label_scores is declared with 12 labels; parser\.json lists 11/,
  },
  {
    name: 'other input names',
    options: { inputNames: ['input_ids', 'tag_ids'] },
    code: 'HA_ERR_EMBED_MANIFEST',
    message: /model\.onnx: the model's inputs are input_ids, tag_ids; a parser model takes tag_ids and word_ids/,
  },
  {
    name: 'a word table smaller than the vocabulary',
    options: { wordRows: 4 },
    code: 'HA_ERR_EMBED_MODEL_LOAD',
    message: /model\.onnx: a probe sentence with word id 8 and tag id 10 \(the largest in parser\.json\) failed/,
  },
  {
    name: 'a parser.json of another format',
    options: { manifest: { format: 'v0' } },
    code: 'HA_ERR_EMBED_MANIFEST',
    message: /parser\.json: format must be "homeagent-dep-parser-v1", got "v0"/,
  },
  { name: 'no parser.json', options: { files: ['model.onnx'] }, code: 'HA_ERR_EMBED_MODEL_MISSING', message: /has no parser\.json/ },
  {
    name: 'a model file that is not ONNX',
    options: { modelText: 'not a protobuf' },
    code: 'HA_ERR_EMBED_MODEL_LOAD',
    message: /model\.onnx: ONNX Runtime cannot load it/,
  },
];

t.test('load failures: a clear error naming the file, then rules with one warning', async (t) => {
  for (const failure of LOAD_FAILURES) {
    await t.test(failure.name, async (t) => {
      const dir = writeParserModel(join(t.testdir(), 'parser'), failure.options);
      const captured = captureLogs();
      const parser = new OnnxDependencyParser({ dir, log: captured.logs.child('nlp') });
      t.teardown(() => parser.close());
      const error = await expectErrorAsync(t, () => parser.load(), failure.code);
      t.match(error.message, failure.message);
      t.equal(parser.status.state, 'failed');

      const analyzer = createTextAnalyzer({ parser });
      const first = await analyzer.extract('外婆住在乡下。');
      const second = await analyzer.extract('妈妈喜欢游泳。');
      t.same(
        [...first, ...second].map((x) => `${x.object} ${x.method} ${x.confidence}`),
        ['乡下 template 0.51', '游泳 template 0.7'],
        'the rule parser took over',
      );
      const warnings = captured.records().filter((r) => r.level === 'warn');
      t.equal(warnings.length, 1, 'one warning, however many sentences follow');
      t.match(warnings[0], { code: failure.code, error: failure.message, msg: /rule parser is used instead/ });
      await expectErrorAsync(t, () => parser.load(), failure.code);
    });
  }
  // A missing directory is found the same way, lazily.
  const captured = captureLogs();
  const parser = createDependencyParser({ modelPath: join(t.testdir(), 'not-installed'), log: captured.logs.child('nlp') });
  t.teardown(() => parser.close?.());
  t.equal((await parser.parse(tagChinese('外婆住在乡下。'))).source, 'rules');
  t.match(captured.records(), [{ level: 'warn', code: 'HA_ERR_EMBED_MODEL_MISSING', error: /not-installed does not exist/ }]);
});

t.test('a sentence the model fails on is parsed by rules; only the first failure warns', async (t) => {
  // A fixed arc width of 3 fits the two-word probe but no longer sentence.
  const dir = writeParserModel(join(t.testdir(), 'parser'), { arcWidth: 3 });
  const captured = captureLogs();
  const parser = new OnnxDependencyParser({ dir, log: captured.logs.child('nlp') });
  t.teardown(() => parser.close());
  await parser.load();
  const first = await parser.parse(tagChinese('外婆住在乡下。'));
  const second = await parser.parse(tagChinese('妈妈喜欢游泳。'));
  t.same([first.source, second.source], ['rules', 'rules']);
  t.equal(parser.status.state, 'ready', 'the model stays loaded for sentences it can parse');
  const warnings = captured.records().filter((r) => r.level === 'warn');
  t.equal(warnings.length, 1);
  t.match(warnings[0]?.error, /HA_ERR_EMBED_OUTPUT_SHAPE: .*arc_scores is float32 \[1, 5, 3\]/);
});

t.test('createDependencyParser: rules without a model path, the lazy model parser with one', async (t) => {
  const log = captureLogs().logs.child('nlp');
  t.ok(createDependencyParser({ modelPath: '', log }) instanceof RuleDependencyParser);
  t.ok(createDependencyParser({ modelPath: '   ', log }) instanceof RuleDependencyParser, 'blank is empty');
  const dir = writeParserModel(join(t.testdir(), 'parser'));
  const parser = createDependencyParser({ modelPath: dir, log });
  t.ok(parser instanceof OnnxDependencyParser);
  t.equal(parser.source, 'model');
  t.equal((parser as OnnxDependencyParser).status.state, 'idle', 'created, not loaded');
  await parser.close?.();
  t.same((parser as OnnxDependencyParser).status, { state: 'closed' }, 'closing an unloaded parser starts nothing');
});

t.test('close(): the worker releases the model and exits; later sentences are parsed by rules', async (t) => {
  const dir = writeParserModel(join(t.testdir(), 'parser'));
  const captured = captureLogs();
  const parser = new OnnxDependencyParser({ dir, log: captured.logs.child('nlp') });
  t.equal((await parser.parse(tagChinese('外婆住在乡下。'))).source, 'model');
  const closing = parser.close();
  t.equal(parser.close(), closing, 'close() twice is one close');
  await closing;
  t.same(parser.status, { state: 'closed', exitCode: 0 }, 'the worker exited on its own (code 0), not terminated');
  t.equal((await parser.parse(tagChinese('外婆住在乡下。'))).source, 'rules');
  await expectErrorAsync(t, () => parser.load(), 'HA_ERR_EMBED_CLOSED');
  t.same(
    captured.records().filter((r) => r.level === 'warn'),
    [],
    'closing is no failure',
  );

  // Closing while the model loads stops the worker; the waiting sentence is parsed by rules.
  const loading = new OnnxDependencyParser({ dir, log: captured.logs.child('nlp') });
  const waiting = loading.parse(tagChinese('外婆住在乡下。'));
  t.equal(loading.status.state, 'loading');
  await loading.close();
  t.equal((await waiting).source, 'rules');
  t.equal(loading.status.state, 'closed');
  t.type(loading.status.exitCode, 'number', 'the worker has exited');
});
