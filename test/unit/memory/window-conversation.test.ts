import t from 'tap';
import { WindowConversation } from '../../../src/memory/window-conversation.js';
import { tempDir } from '../fixtures/support.js';
import { openStores, T0 } from './fixtures/memory-fixture.js';

function setup(t: Parameters<typeof tempDir>[0], options: { maxExchanges?: number; maxChars?: number } = {}) {
  const stores = openStores(t, tempDir(t), { maxSize: 100 });
  const conversation = new WindowConversation({ ...options, events: () => stores.window.events() });
  return { stores, conversation };
}

t.test('exchanges of the channel, by timestamp, as user/assistant pairs', async (t) => {
  const { stores, conversation } = setup(t);
  // Appended out of order: the timeline, not arrival, decides.
  stores.window.append({
    id: 'b',
    timestamp: T0 + 2000,
    source: 'cli',
    channel: 'cli',
    input: 'second question',
    response: 'second answer',
  });
  stores.window.append({ id: 'a', timestamp: T0 + 1000, source: 'cli', channel: 'cli', input: 'first question', response: 'first answer' });
  stores.window.append({ id: 'x', timestamp: T0 + 1500, source: 'qq', channel: 'qq:42', input: 'other chat', response: 'other answer' });
  t.same(conversation.messages('cli'), [
    { role: 'user', content: 'first question' },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'second question' },
    { role: 'assistant', content: 'second answer' },
  ]);
  t.same(conversation.messages('qq:42'), [
    { role: 'user', content: 'other chat' },
    { role: 'assistant', content: 'other answer' },
  ]);
  t.same(conversation.messages('nobody'), []);
});

t.test('the current input and events still waiting for their answer are left out', async (t) => {
  const { stores, conversation } = setup(t);
  stores.window.append({ id: 'done', timestamp: T0, source: 'cli', channel: 'cli', input: 'lights on', response: 'Done.' });
  stores.window.append({ id: 'waiting', timestamp: T0 + 1, source: 'cli', channel: 'cli', input: 'still thinking' });
  stores.window.append({ id: 'now', timestamp: T0 + 2, source: 'cli', channel: 'cli', input: 'what now', response: 'answered elsewhere' });
  const messages = conversation.messages('cli', { exclude: 'now' });
  t.same(
    messages.map((m) => m.content),
    ['lights on', 'Done.'],
  );
  stores.window.complete('waiting', { response: 'finished thinking' });
  t.same(
    conversation.messages('cli', { exclude: 'now' }).map((m) => m.content),
    ['lights on', 'Done.', 'still thinking', 'finished thinking'],
    'once answered, it joins the history',
  );
});

t.test('at most N exchanges, newest kept', async (t) => {
  const { stores, conversation } = setup(t, { maxExchanges: 3 });
  for (let i = 1; i <= 7; i++) {
    stores.window.append({ id: `e${i}`, timestamp: T0 + i, source: 'cli', channel: 'cli', input: `q${i}`, response: `a${i}` });
  }
  t.same(
    conversation.messages('cli').map((m) => m.content),
    ['q5', 'a5', 'q6', 'a6', 'q7', 'a7'],
  );
});

t.test('the default is 10 exchanges', async (t) => {
  const { stores, conversation } = setup(t);
  for (let i = 1; i <= 14; i++) {
    stores.window.append({ id: `e${i}`, timestamp: T0 + i, source: 'cli', channel: 'cli', input: `q${i}`, response: `a${i}` });
  }
  const messages = conversation.messages('cli');
  t.equal(messages.length, 20);
  t.equal(messages[0]?.content, 'q5');
});

t.test('within the character budget, newest kept; a too-long newest exchange is cut, not lost', async (t) => {
  const { stores, conversation } = setup(t, { maxChars: 100 });
  const text = (c: string) => c.repeat(20);
  stores.window.append({ id: 'old', timestamp: T0, source: 'cli', channel: 'cli', input: text('a'), response: text('b') });
  stores.window.append({ id: 'mid', timestamp: T0 + 1, source: 'cli', channel: 'cli', input: text('c'), response: text('d') });
  stores.window.append({ id: 'new', timestamp: T0 + 2, source: 'cli', channel: 'cli', input: text('e'), response: text('f') });
  const messages = conversation.messages('cli');
  t.same(
    messages.map((m) => m.content),
    [text('c'), text('d'), text('e'), text('f')],
    'the oldest exchange no longer fits',
  );
  t.ok(messages.reduce((n, m) => n + m.content.length, 0) <= 100);

  stores.window.append({ id: 'huge', timestamp: T0 + 3, source: 'cli', channel: 'cli', input: 'x'.repeat(30), response: 'y'.repeat(500) });
  const cut = conversation.messages('cli');
  t.equal(cut.length, 2, 'only the newest exchange');
  t.equal(cut[0]?.content, 'x'.repeat(30), 'a short input stays whole');
  t.equal(cut[1]?.content.length, 70, 'the answer takes the rest of the budget');
  t.ok(String(cut[1]?.content).endsWith('…'), 'marked as cut');
});

t.test('history survives a restart: it is read from the database', async (t) => {
  const dir = tempDir(t);
  const first = openStores(t, dir);
  first.window.append({ id: 'e1', timestamp: T0, source: 'cli', channel: 'cli', input: 'remember the code 4711', response: 'Noted.' });
  first.managed.close();
  const second = openStores(t, dir);
  const conversation = new WindowConversation({ events: () => second.window.events() });
  t.same(
    conversation.messages('cli').map((m) => m.content),
    ['remember the code 4711', 'Noted.'],
  );
});
