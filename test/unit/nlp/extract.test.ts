import t from 'tap';
import type { Candidate } from '../../../src/nlp/candidate.js';
import { tagChinese } from '../../../src/nlp/chinese-tagger.js';
import type { DependencyArc, DependencyParse, DependencyParser } from '../../../src/nlp/dependency-parser.js';
import { RuleDependencyParser } from '../../../src/nlp/rule-dependency-parser.js';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';
import { TripleVerifier } from '../../../src/nlp/triple-verifier.js';
import type { TaggedWord, Triple } from '../../../src/nlp/types.js';
import { loadCases } from './fixtures/golden.js';

const analyzer = createTextAnalyzer();
const brief = (triples: Triple[]): string[] => triples.map((x) => `${x.subject} | ${x.relation} | ${x.object}`);

t.test('the speaker: 我 / I / my become options.speaker, or stay the literal token', async (t) => {
  t.same(brief(await analyzer.extract('我住在成都。', { speaker: '王芳' })), ['王芳 | lives_in | 成都']);
  t.same(brief(await analyzer.extract('我住在成都。')), ['我 | lives_in | 成都']);
  t.same(brief(await analyzer.extract('我女儿喜欢跳舞。', { speaker: '王芳' })), ['王芳的女儿 | likes | 跳舞']);
  t.same(brief(await analyzer.extract('我女儿喜欢跳舞。')), ['我的女儿 | likes | 跳舞']);
  t.same(brief(await analyzer.extract('My son plays soccer.', { speaker: 'Alice' })), ["Alice's son | play | soccer"]);
  t.same(brief(await analyzer.extract('My son plays soccer.')), ['my son | play | soccer']);
  t.same(brief(await analyzer.extract('I live in Austin.', { speaker: 'Alice' })), ['Alice | lives_in | Austin']);
  t.same(brief(await analyzer.extract('My favorite color is blue.', { speaker: 'Alice' })), ['Alice | favorite color | blue']);
  t.same(brief(await analyzer.extract('I live in Austin.', { speaker: '  ' })), ['I | lives_in | Austin'], 'a blank speaker is no speaker');
});

t.test('unresolved pronouns are rejected, the speaker is not', async (t) => {
  for (const text of [
    '他住在北京。',
    '她喜欢画画。',
    '他的车是一辆宝马。',
    '他们搬到了上海。',
    'He lives in Boston.',
    'They moved to Texas.',
    'His car is a Tesla.',
    'I love it.',
  ]) {
    t.same(await analyzer.extract(text), [], text);
  }
  t.same(brief(await analyzer.extract('我喜欢你的猫。')), [], '你的猫: owned by the addressee, unresolved');
  t.same(brief(await analyzer.extract('My wife loves me.')), ['my wife | likes | I'], '"me" is the speaker, resolved like "I"');
});

t.test('chat templates are stripped before extraction and system notices skipped', async (t) => {
  const triples = await analyzer.extract('2024-05-01 12:00:00 张三：我住在杭州。');
  t.same(brief(triples), ['我 | lives_in | 杭州']);
  t.equal(triples[0]?.sentence, '2024-05-01 12:00:00 张三：我住在杭州。', 'the sentence is the text as said');
  t.same(brief(await analyzer.extract('[12:03] Bob: I live in Denver.')), ['I | lives_in | Denver']);
  t.same(await analyzer.extract('李四撤回了一条消息'), []);
  t.same(await analyzer.extract('[图片][表情]'), []);
  t.same((await analyzer.extract('Messages and calls are end-to-end encrypted. I live in Oslo.')).length, 1, 'only the notice is skipped');
});

t.test('several sentences give triples with their own sentence; questions among them give none', async (t) => {
  const triples = await analyzer.extract('我叫李娜。你住在哪里？我在医院上班。\nMy son is 7 years old. Where do you live?');
  t.same(brief(triples), ['我 | name | 李娜', '我 | works_at | 医院', 'my son | age | 7']);
  t.same(
    triples.map((x) => x.sentence),
    ['我叫李娜。', '我在医院上班。', 'My son is 7 years old.'],
  );
});

t.test('types: personal facts mark the subject a person, canonical relations their object', async (t) => {
  const [age] = await analyzer.extract('我今年35岁。');
  t.equal(age?.subject_type, 'person');
  t.equal(age?.object_type, 'number');
  const [home] = await analyzer.extract('外婆住在乡下。');
  t.equal(home?.object_type, 'place');
  t.equal(home?.subject_type, undefined, 'the template path does not guess subject types');
});

t.test('Verify rejects names outside 2–50 characters, objects not in the sentence, template text, self-loops', async (t) => {
  const verifier = new TripleVerifier({ speaker: undefined });
  const base: Candidate = { subject: '妈妈', relation: '买', object: '电视', objectSurface: '电视', confidence: 0.7, method: 'template' };
  const sentence = '妈妈买了电视和猫。';
  const reasons = (c: Partial<Candidate>, s = sentence): string | undefined => verifier.rejection({ ...base, ...c }, s);
  t.equal(reasons({}), undefined, 'the base candidate passes');
  t.equal(reasons({ object: '猫', objectSurface: '猫' }), 'object', 'a one-character name is rejected');
  t.equal(reasons({ subject: '我' }), undefined, 'the speaker token is exempt');
  t.equal(reasons({ object: '7', objectSurface: '7' }, '儿子7岁'), undefined, 'a number is a value, not a name');
  t.equal(reasons({ object: 'x'.repeat(51), objectSurface: 'x'.repeat(51) }, 'x'.repeat(51)), 'object', '51 characters is too long');
  t.equal(reasons({ object: 'x'.repeat(50), objectSurface: 'x'.repeat(50) }, 'x'.repeat(50)), undefined, '50 characters is fine');
  t.equal(reasons({ object: '冰箱', objectSurface: '冰箱' }), 'object not in sentence');
  t.equal(reasons({ object: '[图片]', objectSurface: '[图片]' }, '妈妈买了[图片]'), 'object');
  t.equal(reasons({ object: '妈妈', objectSurface: '妈妈' }), 'self-reference');
  t.equal(reasons({ subject: '这个' }), 'subject', 'a demonstrative is unresolved');
  t.equal(reasons({ relation: '' }), 'relation');

  const kept = verifier.verify(
    [
      { ...base, confidence: 0.5 },
      { ...base, confidence: 0.7 },
      { ...base, object: '猫', objectSurface: '猫' },
    ],
    sentence,
  );
  t.same(
    kept.map((x) => [x.object, x.confidence]),
    [['电视', 0.7]],
    'duplicates keep their best score, rejected candidates are gone',
  );
});

t.test('the rule parser gives one arc per word, one head, and no cycles', async (t) => {
  const parser = new RuleDependencyParser();
  t.equal(parser.source, 'rules');
  let sentences = 0;
  for (const file of ['zh-golden.json', 'zh-holdout.json']) {
    for (const c of loadCases(file)) {
      const parse = parser.parse(tagChinese(c.text));
      const n = parse.words.length;
      const heads = parse.arcs.filter((a) => a.head === 0);
      if (parse.arcs.length !== n || heads.length !== 1 || heads[0]?.label !== 'HED') t.fail(`bad arcs for ${c.text}`);
      for (let i = 0; i < n; i++) {
        let node = i;
        let steps = 0;
        while (node >= 0 && steps <= n) {
          const head = parse.arcs[node]?.head ?? 0;
          if (head < 0 || head > n || head === node + 1) t.fail(`bad head in ${c.text}`);
          node = head - 1;
          steps++;
        }
        if (steps > n) t.fail(`cycle in ${c.text}`);
      }
      sentences++;
    }
  }
  t.ok(sentences >= 60, `${sentences} sentences parsed`);
  t.same(parser.parse([]), { words: [], arcs: [], source: 'rules' });
});

t.test('rule-parser arcs score in the template range: VOB 0.7, POB 0.51, coordinated 0.45', async (t) => {
  const scores = async (text: string) => (await analyzer.extract(text)).map((x) => [x.object, x.confidence, x.method]);
  t.same(await scores('妈妈喜欢游泳和跑步。'), [
    ['游泳', 0.7, 'template'],
    ['跑步', 0.45, 'template'],
  ]);
  t.same(await scores('外婆住在乡下。'), [['乡下', 0.51, 'template']]);
  t.same(await scores('我住在乡下。'), [['乡下', 0.95, 'personal']], 'a personal fact outranks the same template triple');
});

/** A parser with the same interface as the coming ONNX parser: it returns arcs a model would. */
class FixedArcsParser implements DependencyParser {
  readonly source = 'model' as const;
  constructor(private readonly arcs: Record<string, DependencyArc[]>) {}

  parse(words: readonly TaggedWord[]): DependencyParse {
    const key = words.map((w) => w.word).join(' ');
    const arcs = this.arcs[key];
    if (arcs === undefined) throw new Error(`no arcs for ${key}`);
    return { words: [...words], arcs, source: this.source };
  }
}

t.test('a model parser behind the same interface: method dependency, arc scores 0.75–0.9', async (t) => {
  const parser = new FixedArcsParser({
    // 妈妈 喜欢 游泳 和 跑步 。
    '妈妈 喜欢 游泳 和 跑步 。': [
      { head: 2, label: 'SBV' },
      { head: 0, label: 'HED' },
      { head: 2, label: 'VOB' },
      { head: 5, label: 'LAD' },
      { head: 3, label: 'COO' },
      { head: 2, label: 'WP' },
    ],
    // 外婆 住 在 乡下 。
    '外婆 住 在 乡下 。': [
      { head: 2, label: 'SBV' },
      { head: 0, label: 'HED' },
      { head: 2, label: 'CMP' },
      { head: 3, label: 'POB' },
      { head: 2, label: 'WP' },
    ],
    // 妈妈 把 钥匙 放在 鞋柜 上 。 (LTP convention: 把 is an adverbial, 钥匙 its object)
    '妈妈 把 钥匙 放在 鞋柜 上 。': [
      { head: 4, label: 'SBV' },
      { head: 4, label: 'ADV' },
      { head: 2, label: 'POB' },
      { head: 0, label: 'HED' },
      { head: 4, label: 'VOB' },
      { head: 5, label: 'RAD' },
      { head: 4, label: 'WP' },
    ],
    // 晚饭 我 吃 了 。 (a fronted object)
    '晚饭 我 吃 了 。': [
      { head: 3, label: 'FOB' },
      { head: 3, label: 'SBV' },
      { head: 0, label: 'HED' },
      { head: 3, label: 'RAD' },
      { head: 3, label: 'WP' },
    ],
  });
  const model = createTextAnalyzer({ parser });
  const scores = async (text: string) =>
    (await model.extract(text)).map((x) => `${x.subject} | ${x.relation} | ${x.object} | ${x.confidence} | ${x.method}`);
  // Arcs without a model probability count as certain: each arc kind gets its ceiling.
  t.same(await scores('妈妈喜欢游泳和跑步。'), ['妈妈 | likes | 游泳 | 0.9 | dependency', '妈妈 | likes | 跑步 | 0.8 | dependency']);
  t.same(await scores('外婆住在乡下。'), ['外婆 | lives_in | 乡下 | 0.83 | dependency']);
  t.same(await scores('妈妈把钥匙放在鞋柜上。'), ['钥匙 | 放在 | 鞋柜 | 0.9 | dependency'], 'what 把 moves is the subject of the place');
  t.same(await scores('晚饭我吃了。'), ['我 | 吃 | 晚饭 | 0.88 | dependency']);
});

t.test('model scores: the head probabilities of the arcs a fact rests on pull it from its ceiling towards 0.75', async (t) => {
  const arcs = (subject: number, object: number, punctuation: number): DependencyArc[] => [
    { head: 2, label: 'SBV', confidence: subject },
    { head: 0, label: 'HED', confidence: 0.99 },
    { head: 2, label: 'VOB', confidence: object },
    { head: 2, label: 'WP', confidence: punctuation },
  ];
  const scoreOf = async (subject: number, object: number, punctuation = 1): Promise<number | undefined> => {
    const parser = new FixedArcsParser({ '妈妈 喜欢 游泳 。': arcs(subject, object, punctuation) });
    const [triple] = await createTextAnalyzer({ parser }).extract('妈妈喜欢游泳。');
    return triple?.confidence;
  };
  t.equal(await scoreOf(1, 1), 0.9, 'certain arcs: the VOB ceiling');
  t.equal(await scoreOf(0.5, 1), 0.83, '0.75 + 0.15 × 0.5, rounded');
  t.equal(await scoreOf(0.5, 0.5), 0.79, 'both arcs count: 0.75 + 0.15 × 0.25');
  t.equal(await scoreOf(0, 1), 0.75, 'never below the model floor');
  t.equal(await scoreOf(1, 1, 0.1), 0.9, 'arcs the fact does not rest on do not count');
});

t.test('arcs with a cycle (a model can be wrong) end extraction quietly, without hanging', async (t) => {
  const parser = new FixedArcsParser({
    '外婆 住 在 乡下 。': [
      { head: 2, label: 'SBV' },
      { head: 0, label: 'HED' },
      { head: 4, label: 'CMP' },
      { head: 3, label: 'POB' },
      { head: 2, label: 'COO' },
    ],
  });
  t.same(await createTextAnalyzer({ parser }).extract('外婆住在乡下。'), []);
});
