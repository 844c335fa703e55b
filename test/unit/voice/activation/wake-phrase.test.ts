import t from 'tap';
import { checkWakePhrases, DEFAULT_WAKE_PHRASES, matchWakePhrase } from '../../../../plugins/voice/activation/wake-phrase.js';

const PHRASES = DEFAULT_WAKE_PHRASES;

function command(transcript: string): string | undefined {
  return matchWakePhrase(transcript, PHRASES)?.command;
}

t.test('exact phrases: the command is what follows, leading punctuation removed', async (t) => {
  t.match(matchWakePhrase('小宅，打开客厅的灯', PHRASES), { phrase: '小宅', heard: '小宅', command: '打开客厅的灯', similarity: 1 });
  t.match(matchWakePhrase('你好小宅，今天天气怎么样？', PHRASES), { phrase: '你好小宅', heard: '你好小宅', command: '今天天气怎么样？' });
  t.match(matchWakePhrase('Hey home, turn on the kitchen light.', PHRASES), {
    phrase: 'hey home',
    heard: 'Hey home',
    command: 'turn on the kitchen light.',
  });
  t.match(matchWakePhrase('ok home what time is it', PHRASES), { phrase: 'ok home', command: 'what time is it' });
  t.match(matchWakePhrase('Hello home.', PHRASES), { phrase: 'hello home', command: '' }, 'only the phrase: empty command');
  t.match(matchWakePhrase('嘿，小宅！', PHRASES), { phrase: '嘿小宅', heard: '嘿，小宅', command: '' });
});

t.test('case, punctuation, spaces and full-width characters are ignored', async (t) => {
  t.equal(command('Hey, Home! lights off'), 'lights off');
  t.equal(command('hey-home lights off'), 'lights off');
  t.equal(command('HEYHOME lights off'), 'lights off');
  t.equal(command('ＨＥＹ　ＨＯＭＥ，关灯'), '关灯');
  t.equal(command('  …小 宅。开灯'), '开灯');
  t.equal(command('Okay home, stop'), 'stop', '"okay" is the same word as "ok"');
});

t.test('a repeated phrase belongs to the call, not to the command', async (t) => {
  t.match(matchWakePhrase('小宅小宅，开灯', PHRASES), { phrase: '小宅', heard: '小宅小宅', command: '开灯' });
  t.match(matchWakePhrase('hey home, hey home! lights on', PHRASES), { heard: 'hey home, hey home', command: 'lights on' });
});

t.test('fillers before the phrase are skipped; elsewhere the phrase does not count', async (t) => {
  t.match(matchWakePhrase('嗯，小宅，开灯', PHRASES), { heard: '小宅', command: '开灯' });
  t.match(matchWakePhrase('呃呃 你好小宅 关窗帘', PHRASES), { phrase: '你好小宅', command: '关窗帘' });
  t.match(matchWakePhrase('Um, uh, hey home, play music', PHRASES), { heard: 'hey home', command: 'play music' });
  t.match(matchWakePhrase('Oh hi home', PHRASES), { phrase: 'hi home', command: '' });
  t.equal(matchWakePhrase('我跟小宅说开灯', PHRASES), undefined, 'in the middle');
  t.equal(matchWakePhrase('turn on the light hey home', PHRASES), undefined, 'at the end');
  t.equal(matchWakePhrase('嗯嗯嗯', PHRASES), undefined, 'fillers only');
  t.equal(matchWakePhrase('', PHRASES), undefined);
});

t.test('Chinese homophones of 宅 that recognisers write are accepted', async (t) => {
  for (const heard of ['小寨', '小窄', '小摘', '小斋', '小翟']) {
    t.match(matchWakePhrase(`${heard}，开灯`, PHRASES), { phrase: '小宅', heard, command: '开灯', similarity: 1 }, heard);
  }
  t.match(matchWakePhrase('你好小寨，关灯', PHRASES), { phrase: '你好小宅', command: '关灯' });
});

t.test('English near forms above the similarity threshold match, ordinary speech does not', async (t) => {
  const near = matchWakePhrase('hey hom, lights on', PHRASES);
  t.match(near, { phrase: 'hey home', heard: 'hey hom', command: 'lights on' });
  t.ok(near && near.similarity < 1 && near.similarity >= 0.8, `similarity ${near?.similarity}`);
  t.match(matchWakePhrase('hello hone what is the weather', PHRASES), { phrase: 'hello home', command: 'what is the weather' });

  for (const ordinary of [
    'home is where the heart is',
    'hey hon, dinner is ready',
    'hey holm',
    'a home for the cat',
    'hey homeowners are here',
    'hello everyone',
    'okay so',
    'hi mom',
    '小张，开灯',
    '你好小张',
    '小区门口',
    '宅在家里',
    '好的',
  ]) {
    t.equal(matchWakePhrase(ordinary, PHRASES), undefined, ordinary);
  }
});

t.test('the threshold is configurable', async (t) => {
  t.equal(matchWakePhrase('hey hom', PHRASES, { minSimilarity: 1 }), undefined, 'exact only');
  t.match(matchWakePhrase('hey holm', PHRASES, { minSimilarity: 0.7 }), { phrase: 'hey home' }, 'looser');
});

t.test('checkWakePhrases normalises, drops duplicates and names a bad phrase', async (t) => {
  t.same(checkWakePhrases(['Hey  Home ', 'hey home', 'ＯＫ Home', '小宅']), ['hey home', 'ok home', '小宅']);
  t.same(checkWakePhrases(DEFAULT_WAKE_PHRASES), DEFAULT_WAKE_PHRASES);
  t.same(checkWakePhrases([]), []);
  for (const [bad, why] of [
    ['', /is empty/],
    ['   ', /is empty/],
    ['!!!，。', /no letters or digits/],
    ['宅', /too short/],
    ['x'.repeat(65), /longer than 64/],
  ] as const) {
    t.throws(() => checkWakePhrases(['小宅', bad]), { code: 'HA_ERR_CONFIG_INVALID', message: why }, JSON.stringify(bad));
  }
  t.throws(() => checkWakePhrases(['?']), { message: /plugin\.voice\.activation\.wake_phrases: "\?"/ });
});
