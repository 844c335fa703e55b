import { API_KEY, languageModelContract, type OpenAiMessage, usage } from './language-model.contract.js';

const TEXT = 'The kitchen light is on and the living room is 21.5 °C.';
const CALLS = [
  { name: 'set_light', args: { room: 'kitchen', on: true }, id: 'functions.set_light:0' },
  { name: 'get_temperature', args: { room: 'living_room' }, id: 'functions.get_temperature:1' },
];

languageModelContract({
  adapter: 'moonshot',
  provider: 'lua:moonshot',
  fixtures: 'moonshot',
  model: 'kimi-k2-0905-preview',
  plain: { file: 'plain.json', text: TEXT, usage: usage(362, 17), model: 'moonshot-v1-8k' },
  // Kimi reports a stream's usage inside the last choice.
  stream: { file: 'stream.sse', text: TEXT, usage: usage(362, 17, 379, 256) },
  tools: { file: 'tools.json', calls: CALLS, text: '', usage: usage(493, 41) },
  tools_stream: { file: 'tools-stream.sse', calls: CALLS },
  errors: [
    { status: 401, file: 'error-401.json', kind: 'auth' },
    { status: 429, file: 'error-429.json', kind: 'rate_limit', retry_after: '1' },
    { status: 500, file: 'error-500.json', kind: 'server' },
  ],
  request(t, sent, body) {
    t.equal(sent.path, '/chat/completions');
    t.equal(sent.headers.authorization, `Bearer ${API_KEY}`);
    t.equal(body.model, 'kimi-k2-0905-preview');
    const messages = body.messages as OpenAiMessage[];
    t.same(
      messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    t.equal(messages[3]?.name, 'get_light', 'Kimi tool messages carry the function name');
    t.equal(body.temperature, 0.4);
    t.equal(body.stream, false);
  },
  stream_request(t, _sent, body) {
    t.equal(body.stream, true);
  },
});
