import t from 'tap';
import { contentText, parseChatRequest } from '../../../../plugins/webui/openai-request.js';
import { HomeAgentError } from '../../../../src/shared/errors.js';

/** The refusal `fn` throws: HA_ERR_RPC_INVALID_PARAMS naming the field. */
function refusal(fn: () => unknown): { message: string; param: unknown } {
  try {
    fn();
  } catch (error) {
    if (error instanceof HomeAgentError && error.code === 'HA_ERR_RPC_INVALID_PARAMS') {
      return { message: error.message, param: error.details?.param };
    }
    throw error;
  }
  throw new Error('expected a refusal');
}

t.test('the last user message is the input, the messages before it the history', async (t) => {
  const parsed = parseChatRequest({
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Is the kitchen light on?' },
      { role: 'assistant', content: 'Yes, it is.' },
      { role: 'user', content: 'Turn it off.' },
    ],
  });
  t.same(parsed, {
    text: 'Turn it off.',
    history: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Is the kitchen light on?' },
      { role: 'assistant', content: 'Yes, it is.' },
    ],
    stream: false,
    include_usage: false,
  });
});

t.test('tool messages and assistant turns without text stay out of the history', async (t) => {
  const parsed = parseChatRequest({
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'function', name: 'w', content: 'sunny' },
      { role: 'assistant', content: 'Sunny.' },
      { role: 'developer', content: 'Answer in English.' },
      { role: 'user', content: 'thanks' },
    ],
  });
  t.same(parsed.history, [
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: 'Sunny.' },
    { role: 'system', content: 'Answer in English.' },
  ]);
  t.equal(parsed.text, 'thanks');
});

t.test('text parts are joined; stream options are read', async (t) => {
  const parsed = parseChatRequest({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first line' },
          { type: 'text', text: 'second line' },
        ],
      },
    ],
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0.2,
    max_tokens: 10,
    tools: [],
    tool_choice: 'auto',
    n: 1,
  });
  t.equal(parsed.text, 'first line\nsecond line');
  t.equal(parsed.stream, true);
  t.equal(parsed.include_usage, true);
  t.same(parsed.history, []);
});

t.test('contentText: strings, null, parts', async (t) => {
  t.equal(contentText('a', 'c'), 'a');
  t.equal(contentText(null, 'c'), '');
  t.equal(contentText(undefined, 'c'), '');
  t.equal(contentText([], 'c'), '');
  t.match(
    refusal(() => contentText(42, 'messages[0].content')),
    { message: /messages\[0\]\.content must be a string or an array/ },
  );
});

t.test('refusals name the field', async (t) => {
  const user = { role: 'user', content: 'hi' };
  const cases: Array<[string, unknown, RegExp, string]> = [
    ['not an object', [user], /body must be a JSON object/, 'body'],
    ['no messages', {}, /messages must be a non-empty array/, 'messages'],
    ['empty messages', { messages: [] }, /messages must be a non-empty array/, 'messages'],
    ['a message that is not an object', { messages: ['hi'] }, /messages\[0\] must be an object/, 'messages[0]'],
    ['unknown role', { messages: [{ role: 'robot', content: 'x' }, user] }, /messages\[0\]\.role must be one of/, 'messages[0].role'],
    ['missing role', { messages: [{ content: 'x' }] }, /messages\[0\]\.role must be one of/, 'messages[0].role'],
    ['user without content', { messages: [{ role: 'user' }] }, /messages\[0\]\.content is required/, 'messages[0].content'],
    [
      'system with null content',
      { messages: [{ role: 'system', content: null }, user] },
      /messages\[0\]\.content is required/,
      'messages[0].content',
    ],
    [
      'an image part',
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] },
      /image content is not supported/,
      'messages[0].content[0]',
    ],
    [
      'an audio part',
      { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }] },
      /"input_audio" are not supported/,
      'messages[0].content[0]',
    ],
    [
      'a text part without text',
      { messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      /content\[0\]\.text must be a string/,
      'messages[0].content[0].text',
    ],
    [
      'last message from the assistant',
      { messages: [user, { role: 'assistant', content: 'ok' }] },
      /last message must be from the user/,
      'messages',
    ],
    ['last message blank', { messages: [{ role: 'user', content: '  ' }] }, /messages\[0\]\.content is empty/, 'messages[0].content'],
    ['model not a string', { model: 4, messages: [user] }, /model must be a string/, 'model'],
    ['stream not a boolean', { stream: 'yes', messages: [user] }, /stream must be true or false/, 'stream'],
    ['stream_options not an object', { stream_options: true, messages: [user] }, /stream_options must be an object/, 'stream_options'],
    [
      'include_usage not a boolean',
      { stream_options: { include_usage: 1 }, messages: [user] },
      /stream_options\.include_usage must be true or false/,
      'stream_options.include_usage',
    ],
    ['more than one choice', { n: 2, messages: [user] }, /n must be 1/, 'n'],
    ['tools not an array', { tools: {}, messages: [user] }, /tools must be an array/, 'tools'],
  ];
  for (const [what, body, message, param] of cases) {
    t.match(
      refusal(() => parseChatRequest(body)),
      { message, param },
      what,
    );
  }
});

t.test('client tools are refused with the exact reason; an empty list is fine', async (t) => {
  const messages = [{ role: 'user', content: 'hi' }];
  const tool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } };
  t.same(
    refusal(() => parseChatRequest({ messages, tools: [tool] })),
    {
      message: 'client-side tools are not supported: HomeAgent runs its own tools on the server',
      param: 'tools',
    },
  );
  t.same(
    refusal(() => parseChatRequest({ messages, functions: [tool.function] })),
    {
      message: 'client-side tools are not supported: HomeAgent runs its own tools on the server',
      param: 'functions',
    },
  );
  t.equal(parseChatRequest({ messages, tools: [], functions: [], tool_choice: 'none' }).text, 'hi');
});
