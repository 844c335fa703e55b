import t from 'tap';
import { PERSONAL_CONFIDENCE } from '../../../src/nlp/personal-facts.js';
import { SINGLE_VALUED_RELATIONS } from '../../../src/nlp/relation-lexicon.js';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';

const analyzer = createTextAnalyzer();

/** The personal triples of a sentence as "relation object". */
async function personal(text: string, speaker?: string): Promise<string[]> {
  return (await analyzer.extract(text, speaker === undefined ? undefined : { speaker }))
    .filter((x) => x.method === 'personal')
    .map((x) => `${x.subject} ${x.relation} ${x.object}`);
}

t.test('Chinese phrasings, each with its canonical relation', async (t) => {
  const cases: Array<[string, string]> = [
    ['我叫张伟。', '我 name 张伟'],
    ['我的名字是李娜。', '我 name 李娜'],
    ['我住在北京市朝阳区。', '我 lives_in 北京市朝阳区'],
    ['我搬到了上海。', '我 lives_in 上海'],
    ['我喜欢喝绿茶。', '我 likes 喝绿茶'],
    ['我不喜欢吃香菜。', '我 dislikes 吃香菜'],
    ['我28岁。', '我 age 28'],
    ['我今年三十五岁了。', '我 age 35'],
    ['我的工作是软件工程师。', '我 occupation 软件工程师'],
    ['我是一名护士。', '我 occupation 护士'],
    ['我在一家银行上班。', '我 works_at 银行'],
  ];
  for (const [text, triple] of cases) t.same(await personal(text), [triple], text);
});

t.test('English phrasings, each with its canonical relation', async (t) => {
  const cases: Array<[string, string]> = [
    ['My name is Alice.', 'I name Alice'],
    ["I'm called Bob.", 'I name Bob'],
    ['I live in Portland.', 'I lives_in Portland'],
    ['I moved to Seattle last year.', 'I lives_in Seattle'],
    ['I like jazz music.', 'I likes jazz music'],
    ['I love hiking.', 'I likes hiking'],
    ["I don't like spicy food.", 'I dislikes spicy food'],
    ['I am 42 years old.', 'I age 42'],
    ["I'm 29.", 'I age 29'],
    ['I work as a nurse.', 'I occupation nurse'],
    ['I am a teacher.', 'I occupation teacher'],
    ['I work at Google.', 'I works_at Google'],
  ];
  for (const [text, triple] of cases) t.same(await personal(text), [triple], text);
});

t.test('the speaker name replaces the literal token; scores are the personal score', async (t) => {
  t.same(
    await personal('我叫王芳，今年32岁。', 'user-42'),
    ['user-42 name 王芳', 'user-42 age 32'],
    'a clause without 我 continues about the speaker',
  );
  t.same(await personal('My name is Carol and I am 35 years old.', 'user-7'), ['user-7 name Carol', 'user-7 age 35']);
  t.same(await personal('我叫王芳。', '王芳'), [], 'naming the speaker by the name it already has is a self-loop');
  for (const triple of await analyzer.extract('我叫张伟。I live in Portland.')) {
    t.equal(triple.confidence, PERSONAL_CONFIDENCE);
    t.equal(triple.subject_type, 'person');
  }
});

t.test('lists split into one like each', async (t) => {
  t.same(await personal('我喜欢游泳和跑步。'), ['我 likes 游泳', '我 likes 跑步']);
  t.same(await personal('I love hiking and swimming.'), ['I likes hiking', 'I likes swimming']);
});

t.test('look-alikes that are not personal facts', async (t) => {
  t.same(await personal('我叫了外卖。'), [], '叫了 is ordering, not a name');
  t.same(await personal('妈妈叫我吃饭。'), [], 'someone else calls me');
  t.same(await personal('我是一个好人。'), [], '一个好人 is no job');
  t.same(await personal("I'm a vegetarian."), [], 'no job either');
  t.same(await personal('我最喜欢的颜色是蓝色。'), [], '最喜欢的 is an attribute, not a like');
  t.same(await personal('我们住在杭州。'), [], '我们 is not the speaker alone');
  t.same(await personal('I love you.'), [], 'an unresolved object');
});

t.test('moving supersedes living: both give lives_in, which is single-valued, like age', async (t) => {
  const [before] = await analyzer.extract('I live in Beijing.');
  const [after] = await analyzer.extract('I moved to Shanghai.');
  t.equal(before?.relation, 'lives_in');
  t.equal(after?.relation, before?.relation);
  t.equal((await analyzer.extract('我搬到了上海。'))[0]?.relation, 'lives_in');
  t.ok(SINGLE_VALUED_RELATIONS.has('lives_in'));
  t.ok(SINGLE_VALUED_RELATIONS.has('age'));
  t.notOk(SINGLE_VALUED_RELATIONS.has('likes'));
});
