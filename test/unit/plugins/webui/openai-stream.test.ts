import t from 'tap';
import { StreamedAnswer } from '../../../../plugins/webui/openai-stream.js';

const delta = (turn: number, text: string, restart = false) => ({ turn, delta: text, restart });

t.test('nothing streamed: the whole answer is still to send', async (t) => {
  const answer = new StreamedAnswer();
  t.equal(answer.rest('You are offline.'), 'You are offline.');
  t.equal(answer.rest(''), '');
});

t.test('the streamed text is the answer: nothing more to send', async (t) => {
  const answer = new StreamedAnswer();
  t.equal(answer.add(delta(1, 'The light ')), 'The light ');
  t.equal(answer.add(delta(1, 'is on.')), 'is on.');
  t.equal(answer.rest('The light is on.'), '');
});

t.test('a confirmation request appended by the kernel is sent as the missing tail', async (t) => {
  const answer = new StreamedAnswer();
  answer.add(delta(1, 'I will unlock the door.'));
  t.equal(answer.rest('I will unlock the door.\n\nReply "confirm 4821" to go ahead.'), '\n\nReply "confirm 4821" to go ahead.');
});

t.test('a new round after tools is set apart; the tail is measured from the last round', async (t) => {
  const answer = new StreamedAnswer();
  t.equal(answer.add(delta(1, 'Let me check.')), 'Let me check.');
  t.equal(answer.add(delta(2, 'It is ')), '\n\nIt is ');
  t.equal(answer.add(delta(2, 'on.')), 'on.');
  t.equal(answer.rest('It is on.'), '');
});

t.test('a pre-empted request starts over: nothing special is sent, the restart is the round', async (t) => {
  const answer = new StreamedAnswer();
  answer.add(delta(1, 'The li'));
  t.equal(answer.add(delta(1, 'The light is on.', true)), 'The light is on.', 'the restart goes out as is');
  t.equal(answer.rest('The light is on.'), '');
});

t.test('a round that streamed nothing after one that did: the answer follows, set apart', async (t) => {
  const answer = new StreamedAnswer();
  answer.add(delta(1, 'Checking the timers.'));
  t.equal(answer.rest('Done: the timer is set.'), '\n\nDone: the timer is set.', 'a short-circuit or stage answer');
});

t.test('an answer a stage replaced is given whole after the streamed text', async (t) => {
  const answer = new StreamedAnswer();
  answer.add(delta(1, 'Secret code is 1234.'));
  t.equal(answer.rest('[redacted]'), '\n\n[redacted]');
  t.equal(answer.rest(''), '', 'an empty final answer adds nothing');
});
