import t from 'tap';
import { branchText, cleanChatText, type MemoryTextSource, memoryText } from '../../../src/memory/memory-text.js';

t.test('chat-app templates and timestamps are removed, content stays', async (t) => {
  const cases: Array<[string, string]> = [
    ['[12:01] Alice: 我明天去上海', '我明天去上海'],
    ['12:01:33 Bob：好的', '好的'],
    ['(12:01) carol: hi there', 'hi there'],
    ['【QQ】[CQ:at,qq=123] 帮我开灯', '帮我开灯'],
    ['「Alice：原来的消息」\n- - - - - - - - - - - - - - -\n我同意', '我同意'],
    ['> quoted line\nmy answer', 'my answer'],
    ['回复 @Alice：没问题', '没问题'],
    ['Replying to Bob: sounds good', 'sounds good'],
    ['2024-05-06 12:01:33 Alice(123456)\n今天天气不错', '今天天气不错'],
    ['sent 2024-05-06T12:01:33.123Z ok', 'sent ok'],
    ['See [图片] and [CQ:image,file=abc.jpg] here', 'See and here'],
    // Bare dates, times inside a sentence and versions are content.
    ['My flight is on 2024-05-06 at 12:30, version 1.2.3', 'My flight is on 2024-05-06 at 12:30, version 1.2.3'],
    ['  line one  \r\n\r\n\tline   two ', 'line one\nline two'],
  ];
  for (const [input, expected] of cases) t.equal(cleanChatText(input), expected, JSON.stringify(input));
});

const event = (over: Partial<MemoryTextSource> = {}): MemoryTextSource => ({
  channel: 'qq',
  branch: 'user',
  input: 'the input',
  response: 'the response',
  tool_results: [],
  ...over,
});

t.test('the similarity text depends on the branch', async (t) => {
  t.equal(branchText(event({ branch: 'agent' })), 'the response');
  t.equal(branchText(event({ branch: 'cold_storage' })), 'the input\nthe response');
  t.equal(branchText(event({ branch: 'user' })), 'the input');
  t.equal(branchText(event({ branch: 'timer' })), 'the input');
  t.equal(branchText(event({ branch: 'cold_storage', response: '' })), 'the input');
});

t.test('an answer built on a lookup that found nothing is no memory; the question is', async (t) => {
  const nothing = { tool: 'memory_recall', text: JSON.stringify({ items: [], no_record: true, say: 'I have no record of that.' }) };
  const found = { tool: 'memory_recall', text: JSON.stringify({ items: [{ text: 'the key is in the drawer' }] }) };
  const asked = { input: 'where is the key', response: 'I have no record of that.' };
  t.equal(branchText(event({ branch: 'cold_storage', ...asked, tool_results: [nothing] })), 'where is the key');
  t.equal(branchText(event({ branch: 'agent', ...asked, tool_results: [nothing] })), '');
  t.equal(
    branchText(event({ branch: 'cold_storage', input: 'where is the key', response: 'In the drawer.', tool_results: [found] })),
    'where is the key\nIn the drawer.',
    'an answer from what a lookup found stays',
  );
  const notJson = { tool: 'cmd_run', text: 'echo {"no_record":true} and more' };
  t.equal(
    branchText(event({ branch: 'agent', ...asked, tool_results: [notJson] })),
    'I have no record of that.',
    'only a result that is the marker',
  );
});

t.test('channel and tool policies: cleaners, no_memory, failing cleaners', async (t) => {
  const errors: string[] = [];
  const options = {
    channelPolicy: (name: string) =>
      name === 'secret'
        ? { no_memory: true }
        : name === 'shouty'
          ? { cleaner: (s: string) => s.toLowerCase() }
          : name === 'broken'
            ? {
                cleaner: () => {
                  throw new Error('boom');
                },
              }
            : undefined,
    toolPolicy: (name: string) =>
      name === 'camera' ? { no_memory: true } : name === 'weather' ? { cleaner: (s: string) => s.replace(/\{.*\}/, 'sunny') } : undefined,
    onCleanerError: (owner: string) => errors.push(owner),
  };
  const results = [
    { tool: 'weather', text: '{"sky":"clear"}' },
    { tool: 'camera', text: 'image bytes' },
    { tool: 'other', text: '[12:00] raw result' },
  ];
  t.equal(
    memoryText(event({ input: '[09:00] Al: What is THE weather', tool_results: results }), options),
    'What is THE weather\nsunny',
    'a tool without a cleaner (other) keeps its raw result out',
  );
  t.equal(memoryText(event({ channel: 'shouty', input: 'LOUD' }), options), 'loud');
  t.equal(memoryText(event({ channel: 'secret', tool_results: results }), options), '', 'a no_memory channel gives nothing');
  t.equal(
    memoryText(event({ channel: 'broken', input: 'private', tool_results: [results[0] as (typeof results)[number]] }), options),
    'sunny',
  );
  t.same(errors, ['channel:broken'], 'a throwing cleaner drops its text and is reported');
});

t.test('what a person said carries their name; the agent, the source itself and no peer carry none', async (t) => {
  t.equal(memoryText(event({ peer: 'Alice', source: 'qq' }), {}), 'Alice: the input');
  t.equal(memoryText(event({ peer: 'Alice', source: 'qq', branch: 'cold_storage' }), {}), 'Alice: the input\nthe response');
  t.equal(memoryText(event({ peer: 'Alice', source: 'qq', branch: 'agent' }), {}), 'the response', "the agent's answer");
  t.equal(memoryText(event({ peer: 'cli', source: 'cli' }), {}), 'the input', 'the peer is only the source');
  t.equal(memoryText(event({ peer: '', source: 'qq' }), {}), 'the input');
  t.equal(memoryText(event({ peer: 'Alice', source: 'qq', input: '[09:00] Alice: hi' }), {}), 'Alice: hi', 'the template goes first');
  t.equal(memoryText(event({ peer: 'Alice', source: 'qq', input: 'Alice: hi' }), {}), 'Alice: hi', 'never named twice');
  t.equal(memoryText(event({ peer: 'Alice', source: 'qq', input: '   ', response: '' }), {}), '', 'nothing said, no name');
});
