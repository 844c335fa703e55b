import t from 'tap';
import { HashEmbedder } from '../../../src/embed/hash-embedder.js';
import { subjectCoverage, subjectWords } from '../../../src/memory/query-subject.js';
import { asksAboutThePast, MemoryRecall } from '../../../src/memory/recall.js';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';
import { tempDir } from '../fixtures/support.js';
import { openStores, T0 } from './fixtures/memory-fixture.js';

const analyzer = createTextAnalyzer();
const tag = (text: string) => analyzer.tag(text);
const tokens = (text: string) => analyzer.tokens(text);
const subject = (query: string) => subjectWords(query, tag, tokens, asksAboutThePast);

t.test("a question's subject is its nouns, grouped into phrases; question and time words are not", async (t) => {
  t.same(
    subject('Where is the car charger?').map((s) => [s.word, s.phrase]),
    [
      ['car', 0],
      ['charger', 0],
    ],
  );
  t.same(
    subject('What does Jack like to eat?').map((s) => s.word),
    ['jack'],
    'the verbs of the question frame are not its subject',
  );
  t.same(
    subject('Where was the torch before?').map((s) => s.word),
    ['torch'],
  );
  t.same(
    subject('车载充电器在哪里？').map((s) => [s.word, s.phrase]),
    [
      ['车载', 0],
      ['充电器', 0],
    ],
  );
  t.same(
    subject('家长会是什么时候？').map((s) => s.word),
    ['家长会'],
    '"什么时候" asks for a time: 时候 is the kind of answer, not the subject',
  );
  t.same(
    subject('小雨喜欢吃什么？').map((s) => s.word),
    ['小雨'],
  );
});

t.test('coverage: named in speech, by a speaker label, and whole phrases', async (t) => {
  const car = subject('Where is the car charger?');
  t.same(subjectCoverage('The car charger is in the attic box.', car, tokens), { said: 1, named: 1, phrases: 1 });
  t.same(
    subjectCoverage('The phone charger is in the cellar.', car, tokens),
    { said: 0.5, named: 0.5, phrases: 0 },
    'part of a phrase names none of it',
  );
  const emma = subject('What does Emma like to eat?');
  t.same(
    subjectCoverage('Emma: I love spicy noodles, I have them every week.', emma, tokens),
    { said: 0, named: 1, phrases: 1 },
    'a speaker speaking of themselves is what the line is about',
  );
  t.same(
    subjectCoverage('Emma: What is the weather like?', emma, tokens),
    { said: 0, named: 0, phrases: 0 },
    'asking says nothing of the one who asks',
  );
  t.same(subjectCoverage('Emma: Turn on the kitchen fan.', emma, tokens), { said: 0, named: 0, phrases: 0 }, 'nor does a command');
  t.same(
    subjectCoverage('Emma: Did I leave my keys here? I think so.', emma, tokens).named,
    1,
    'a question beside a statement about oneself still speaks of oneself',
  );
  const wang = subject('王芳的车停在哪里？');
  t.equal(subjectCoverage('王芳: 我的车停在车库。', wang, tokens).named, 1, '我 speaks of the speaker');
  t.equal(subjectCoverage('王芳: 李明喜欢吃面。', wang, tokens).named, 0, 'telling of someone else says nothing of 王芳');
  t.same(
    subjectCoverage('王芳特别喜欢吃扁豆汤。', subject('王芳喜欢吃什么？'), tokens).said,
    1,
    'a name the segmenter splits is still named',
  );
  t.same(subjectCoverage('anything', [], tokens), { said: 1, named: 1, phrases: 1 }, 'no subject: nothing to miss');
});

t.test('recall ranks the item naming the whole subject first, and abstains when nothing names it', async (t) => {
  const s = openStores(t, tempDir(t), { maxSize: 3, embedder: new HashEmbedder() as never });
  const said = [
    'Anna: The phone charger is in the cellar.',
    'Anna: Set a timer for 10 minutes.',
    'Anna: The phone charger cable is long, the phone charger is white.',
    'Anna: The car charger is in the attic box.',
    'Anna: The torch is in the car boot.',
    'Anna: Set a timer for 5 minutes.',
    'Anna: What is the weather like?',
    'Anna: Good morning!',
    'Anna: Thanks, that is all.',
  ];
  for (const [i, text] of said.entries()) {
    s.window.append({ id: `ev-${i}`, timestamp: T0 + i * 3_600_000, source: 'chat', channel: 'family', peer: 'Anna', input: text });
  }
  await s.window.prune('weather');
  const withSubject = new MemoryRecall({
    window: s.window,
    documents: s.documents,
    graph: s.graph,
    embedder: s.embedder,
    tokens,
    tag,
    neighbours: 0,
  });
  const car = await withSubject.recall('Where is the car charger?', 3);
  t.equal(car.abstain, false);
  t.match(car.items[0]?.text, /car charger is in the attic box/, 'the whole subject outranks a turn repeating half of it');

  const screwdriver = await withSubject.recall('Where is the screwdriver set?', 3);
  t.same(screwdriver, { items: [], abstain: true }, '"Set a timer" shares a word, not the subject: no record');
  const batteries = await withSubject.recall('Where is the car battery?', 3);
  t.equal(batteries.abstain, true, 'half a phrase ("car" of "car boot") is not the subject');

  // Without the tagger the same store answers with the loosely related turns (the check is what abstains).
  const plain = new MemoryRecall({ window: s.window, documents: s.documents, graph: s.graph, embedder: s.embedder, tokens, neighbours: 0 });
  t.equal((await plain.recall('Where is the screwdriver set?', 3)).abstain, false);
});
