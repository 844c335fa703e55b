/**
 * Streaming speech: sentences of the model's answer go to the speaker while it writes, in order,
 * each once; the final answer adds only what was not said; barge-in cancels the turn.
 */
import t from 'tap';
import { MAX_SENTENCE_CHARS, SpokenStream, takeSentences } from '../../../../plugins/voice/spoken-stream.js';
import { spokenLanguage } from '../../../../plugins/voice/spoken-text.js';

function setup() {
  const said: Array<{ text: string; language?: string }> = [];
  const cancelled: string[] = [];
  let interrupts = 0;
  const stream = new SpokenStream({
    speaker: {
      say: async (text, language) => {
        said.push({ text, ...(language ? { language } : {}) });
      },
      interrupt: () => {
        interrupts++;
        return true;
      },
    },
    cancel: (id) => {
      cancelled.push(id);
      return true;
    },
    language: spokenLanguage,
  });
  const delta = (input_id: string, delta: string, turn = 0, restart = false) => stream.delta({ input_id, delta, turn, restart });
  return { stream, said, cancelled, delta, interrupts: () => interrupts };
}

t.test('sentences are cut where a sentence mark meets white space, CJK marks need none', async (t) => {
  t.same(takeSentences('It is 3.5 degrees. The door'), { sentences: ['It is 3.5 degrees.'], rest: ' The door' });
  t.same(takeSentences('客厅的灯开了。卧室'), { sentences: ['客厅的灯开了。'], rest: '卧室' });
  t.same(takeSentences('Done!'), { sentences: [], rest: 'Done!' }, 'the end is known only when more follows');
  const long = `${'word '.repeat(60)}and on`;
  const cut = takeSentences(long);
  t.equal(cut.sentences.length, 1, 'an over-long run is spoken at a space');
  t.ok((cut.sentences[0]?.length ?? 0) <= MAX_SENTENCE_CHARS);
});

t.test('each complete sentence is spoken as it arrives; the final answer adds only the rest', async (t) => {
  const { stream, said, delta } = setup();
  stream.begin('in1');
  delta('in1', 'The kitchen light ');
  t.same(said, [], 'half a sentence waits');
  delta('in1', 'is on. The oven');
  t.same(said, [{ text: 'The kitchen light is on.', language: 'en' }]);
  delta('in1', ' is at 180 degrees. 还有');
  t.equal(said.length, 2);
  delta('in1', '十分钟。');
  t.same(
    said.map((s) => s.text),
    ['The kitchen light is on.', 'The oven is at 180 degrees.', '还有十分钟。'],
  );
  t.equal(said[2]?.language, 'zh');
  const rest = stream.final('in1', 'The kitchen light is on. The oven is at 180 degrees. 还有十分钟。Enjoy!');
  t.equal(rest, 'Enjoy!', 'only the unsaid end');
  t.equal(stream.follows('in1'), false, 'the turn is forgotten');
  t.equal(stream.final('other', 'Not streamed.'), 'Not streamed.', 'an answer of another input is said whole');
});

t.test('a restarted request does not repeat itself; a replaced answer is said whole; a new round flushes', async (t) => {
  const { stream, said, delta } = setup();
  stream.begin('in2');
  delta('in2', 'Let me check. The');
  delta('in2', 'Let me check. The weather', 0, true);
  delta('in2', ' is sunny. ');
  t.same(
    said.map((s) => s.text),
    ['Let me check.', 'The weather is sunny.'],
  );
  delta('in2', 'Now the door', 1);
  t.equal(stream.final('in2', 'A stage said this instead.'), 'A stage said this instead.');
  stream.begin('in3');
  delta('in3', 'Looking it up', 0);
  delta('in3', 'It is 20 degrees', 1);
  t.equal(said.at(-1)?.text, 'Looking it up', "a round's unfinished text is said when the next round begins");
});

t.test('barge-in cancels the turn being written and drops its later text', async (t) => {
  const { stream, said, cancelled, delta } = setup();
  stream.begin('in4');
  delta('in4', 'First sentence. Second');
  t.equal(stream.bargeIn(), true);
  t.same(cancelled, ['in4']);
  delta('in4', ' sentence. Third. ');
  t.same(
    said.map((s) => s.text),
    ['First sentence.'],
  );
  t.equal(stream.final('in4', 'First sentence. Second sentence. Third.'), undefined, 'nothing more is said');
  t.equal(stream.bargeIn(), false, 'nothing left to stop');
});
