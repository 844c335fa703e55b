import { API_KEY, languageModelContract, type OpenAiMessage, usage } from './language-model.contract.js';

const TEXT = 'The kitchen light is on and the living room is 21.5 °C.';
const CALLS = [
  { name: 'set_light', args: { room: 'kitchen', on: true }, id: 'call_-8944312453542389210' },
  { name: 'get_temperature', args: { room: 'living_room' }, id: 'call_-8944312453542389209' },
];

languageModelContract({
  adapter: 'zhipu',
  provider: 'lua:zhipu',
  fixtures: 'zhipu',
  model: 'glm-4-plus',
  plain: { file: 'plain.json', text: TEXT, usage: usage(371, 15), model: 'glm-4-plus' },
  stream: { file: 'stream.sse', text: TEXT, reasoning: '用户询问厨房的灯。', usage: usage(371, 42, 413, 192) },
  tools: { file: 'tools.json', calls: CALLS, text: '', usage: usage(482, 38) },
  tools_stream: { file: 'tools-stream.sse', calls: CALLS },
  errors: [
    { status: 401, file: 'error-401.json', kind: 'auth' },
    { status: 429, file: 'error-429.json', kind: 'rate_limit' },
    { status: 500, file: 'error-500.json', kind: 'server' },
  ],
  request(t, sent, body) {
    t.equal(sent.path, '/chat/completions');
    t.equal(sent.headers.authorization, `Bearer ${API_KEY}`);
    t.equal(body.model, 'glm-4-plus');
    t.equal(body.temperature, 0.4);
    const messages = body.messages as OpenAiMessage[];
    t.same(
      messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    t.equal(body.tool_choice, 'auto', 'GLM only knows auto');
    t.equal(body.stream, false);
  },
  stream_request(t, _sent, body) {
    t.equal(body.stream, true);
  },
});
