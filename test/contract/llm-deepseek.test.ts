import { API_KEY, languageModelContract, type OpenAiMessage, usage } from './language-model.contract.js';

const TEXT = 'The kitchen light is on and the living room is 21.5 °C.';
const CALLS = [
  { name: 'set_light', args: { room: 'kitchen', on: true }, id: 'call_0_8d3f5a1c-9e7b-4c2d-a6f8-3b1e5d7c9a2f' },
  { name: 'get_temperature', args: { room: 'living_room' }, id: 'call_1_2b4d6f8a-0c2e-4a6c-8e0a-2c4e6a8c0e2a' },
];

languageModelContract({
  adapter: 'deepseek',
  provider: 'lua:deepseek',
  fixtures: 'deepseek',
  model: 'deepseek-chat',
  plain: { file: 'plain.json', text: TEXT, usage: usage(348, 16, 364, 320), model: 'deepseek-chat' },
  stream: { file: 'stream.sse', text: TEXT, reasoning: 'The user asks about the lights.', usage: usage(348, 61, 409, 320, 45) },
  tools: { file: 'tools.json', calls: CALLS, text: '', usage: usage(455, 44, 499, 448) },
  tools_stream: { file: 'tools-stream.sse', calls: CALLS },
  errors: [
    { status: 401, file: 'error-401.json', kind: 'auth' },
    { status: 429, file: 'error-429.json', kind: 'rate_limit', retry_after: '5' },
    { status: 503, file: 'error-503.json', kind: 'server' },
    {
      status: 402,
      body: '{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}',
      kind: 'bad_request',
    },
  ],
  request(t, sent, body) {
    t.equal(sent.path, '/chat/completions');
    t.equal(sent.headers.authorization, `Bearer ${API_KEY}`);
    t.equal(body.model, 'deepseek-chat');
    const messages = body.messages as OpenAiMessage[];
    t.same(
      messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    t.notOk(
      messages.some((m) => 'reasoning_content' in m),
      'reasoning_content is never sent back (DeepSeek answers 400)',
    );
    t.equal((messages[2]?.tool_calls?.[0]?.function as { arguments?: string } | undefined)?.arguments, '{"room":"kitchen"}');
    t.equal(body.tool_choice, 'auto');
    t.equal(body.stream, false);
  },
  stream_request(t, _sent, body) {
    t.equal(body.stream, true);
    t.same(body.stream_options, { include_usage: true });
  },
});
