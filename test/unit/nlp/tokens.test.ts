import t from 'tap';
import { stemEnglish } from '../../../src/nlp/english-stemmer.js';
import { createTextAnalyzer } from '../../../src/nlp/text-analyzer.js';

const analyzer = createTextAnalyzer();

t.test('Chinese tokens: jieba search mode, stop words removed, lower-cased', async (t) => {
  t.same(analyzer.tokens('我家的智能家居系统用的是树莓派'), ['我家', '智能', '家居', '智能家居', '系统', '用', '树莓', '树莓派']);
  t.notOk(
    analyzer.tokens('我的猫是白色的').some((w) => ['我', '的', '是'].includes(w)),
    'no 我 / 的 / 是',
  );
  t.same(analyzer.tokens('WiFi密码'), ['wifi', '密码'], 'Latin words inside Chinese text are lower-cased');
});

t.test('English tokens: lower-cased stems, stop words removed', async (t) => {
  t.same(analyzer.tokens('The kids are playing with their new toys in the living room.'), ['kid', 'play', 'new', 'toy', 'live', 'room']);
  t.same(analyzer.tokens("Emma's batteries don't last"), ['emma', 'battery', 'last'], "possessive 's and contractions handled");
});

t.test('numbers, versions, identifiers, emails and URLs stay whole, in both languages', async (t) => {
  const symbols = ['v1.2.3', '3.5', 'sensor_01', '555-0123', 'dan@example.com', '192.168.1.10', 'https://example.com/a'];
  const english = analyzer.tokens(
    `Update to v1.2.3 or 3.5, sensor_01 on 555-0123, mail dan@example.com, host 192.168.1.10, see https://example.com/a.`,
  );
  for (const symbol of symbols) t.ok(english.includes(symbol), `${symbol} in English text`);
  const chinese = analyzer.tokens('固件升级到v1.2.3，温度3.5度，传感器sensor_01，电话555-0123');
  for (const symbol of ['v1.2.3', '3.5', 'sensor_01', '555-0123']) t.ok(chinese.includes(symbol), `${symbol} in Chinese text`);
});

t.test('indexText is the tokens joined by spaces', async (t) => {
  for (const text of ['我住在杭州市西湖区', 'My wife works at the hospital.', '固件v1.2.3 works fine']) {
    t.equal(analyzer.indexText(text), analyzer.tokens(text).join(' '));
  }
  t.equal(analyzer.indexText(''), '');
});

t.test('keywords: up to k, by TF-IDF, no stop words', async (t) => {
  const keywords = analyzer.keywords('我家的智能家居系统用的是树莓派，客厅的灯光由智能家居控制', 3);
  t.equal(keywords.length, 3);
  t.equal(keywords[0], '智能家居', 'the repeated, rare word ranks first');
  t.notOk(keywords.some((w) => ['的', '是', '我家的'].includes(w)));
  t.same(analyzer.keywords('智能家居', 0), []);
  const english = analyzer.keywords('The thermostat in the hallway controls the heating; the thermostat is new.', 2);
  t.equal(english[0], 'thermostat', 'English keywords by frequency (no IDF table for English)');
  t.notOk(english.includes('the'));
});

t.test('tag: jieba tags for Chinese (names repaired), a small Penn-style set for English', async (t) => {
  t.same(analyzer.tag('我叫张伟'), [
    { word: '我', tag: 'r' },
    { word: '叫', tag: 'v' },
    { word: '张伟', tag: 'nr' },
  ]);
  t.same(analyzer.tag('I live in Portland.'), [
    { word: 'I', tag: 'PRP' },
    { word: 'live', tag: 'VB' },
    { word: 'in', tag: 'IN' },
    { word: 'Portland', tag: 'NNP' },
    { word: '.', tag: '.' },
  ]);
  const tags = analyzer.tag("Emma's dog doesn't like the living room.").map((w) => `${w.word}/${w.tag}`);
  t.same(tags, ['Emma/NNP', "'s/POS", 'dog/NN', 'does/VBZ', "n't/RB", 'like/VB', 'the/DT', 'living/JJ', 'room/NN', './.']);
});

t.test('the English stemmer is light and consistent', async (t) => {
  const cases: Array<[string, string]> = [
    ['toys', 'toy'],
    ['batteries', 'battery'],
    ['boxes', 'box'],
    ['playing', 'play'],
    ['making', 'make'],
    ['running', 'run'],
    ['moved', 'move'],
    ['stopped', 'stop'],
    ['studied', 'study'],
    ['glass', 'glass'],
    ['status', 'status'],
    ['news', 'new'],
    ['cat', 'cat'],
  ];
  for (const [word, stem] of cases) t.equal(stemEnglish(word), stem, word);
});
