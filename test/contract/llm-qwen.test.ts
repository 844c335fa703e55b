import { API_KEY, languageModelContract, type OpenAiMessage, usage } from './language-model.contract.js';

const TEXT = 'The kitchen light is on and the living room is 21.5 °C.';
const CALLS = [
  { name: 'set_light', args: { room: 'kitchen', on: true }, id: 'call_b0a7c3e5f1d94e2a8c6b17' },
  { name: 'get_temperature', args: { room: 'living_room' }, id: 'call_4f9e2d1c8b7a46e3a5d0c2' },
];

languageModelContract({
  adapter: 'qwen',
  provider: 'lua:qwen',
  fixtures: 'qwen',
  model: 'qwen-plus',
  plain: { file: 'plain.json', text: TEXT, usage: usage(356, 16, 372, 256), model: 'qwen-plus' },
  stream: { file: 'stream.sse', text: TEXT, reasoning: 'The user wants the light status.', usage: usage(356, 43, 399, 0, 27) },
  tools: { file: 'tools.json', calls: CALLS, text: '', usage: usage(468, 47, 515) },
  tools_stream: { file: 'tools-stream.sse', calls: CALLS },
  errors: [
    { status: 401, file: 'error-401.json', kind: 'auth' },
    { status: 429, file: 'error-429.json', kind: 'rate_limit', retry_after: '1' },
    { status: 500, file: 'error-500.json', kind: 'server' },
  ],
  request(t, sent, body) {
    t.equal(sent.path, '/chat/completions');
    t.equal(sent.headers.authorization, `Bearer ${API_KEY}`);
    t.equal(body.model, 'qwen-plus');
    t.equal(body.enable_thinking, undefined, 'thinking is only switched off for the open qwen3 models');
    const messages = body.messages as OpenAiMessage[];
    t.same(
      messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    t.equal(messages[3]?.tool_call_id, 'call_k1');
    t.equal(body.tool_choice, 'auto');
    t.equal(body.stream, false);
  },
  stream_request(t, _sent, body) {
    t.equal(body.stream, true);
    t.same(body.stream_options, { include_usage: true });
  },
});
