import { API_KEY, languageModelContract, usage } from './language-model.contract.js';

const TEXT = 'The kitchen light is on and the living room is 21.5 °C.';
// Gemini sends no call ids; the host numbers them.
const CALLS = [
  { name: 'set_light', args: { room: 'kitchen', on: true } },
  { name: 'get_temperature', args: { room: 'living_room' } },
];
type Part = Record<string, unknown>;

languageModelContract({
  adapter: 'gemini',
  provider: 'lua:gemini',
  fixtures: 'gemini',
  model: 'gemini-2.0-flash',
  plain: { file: 'plain.json', text: TEXT, usage: usage(389, 17), model: 'gemini-2.0-flash' },
  // Thoughts count as completion tokens and as reasoning.
  stream: { file: 'stream.sse', text: TEXT, usage: usage(389, 135, 524, 0, 118) },
  tools: { file: 'tools.json', calls: CALLS, text: '', usage: usage(451, 22) },
  tools_stream: { file: 'tools-stream.sse', calls: CALLS },
  errors: [
    // A bad key is HTTP 400 INVALID_ARGUMENT at Google, with reason API_KEY_INVALID: an auth failure all the same.
    { status: 400, file: 'error-400-key.json', kind: 'auth' },
    { status: 403, file: 'error-403.json', kind: 'auth' },
    { status: 429, file: 'error-429.json', kind: 'rate_limit', retry_after: '36' },
    { status: 503, file: 'error-503.json', kind: 'server' },
  ],
  request(t, sent, body) {
    t.equal(sent.path, '/v1beta/models/gemini-2.0-flash:generateContent');
    t.equal(sent.headers['x-goog-api-key'], API_KEY, 'the key goes in a header');
    t.notOk(sent.path.includes(API_KEY), 'and never in the URL');
    t.same(body.systemInstruction, { parts: [{ text: 'You are HomeAgent, the assistant of this house.' }] });
    const contents = body.contents as Array<{ role: string; parts: Part[] }>;
    t.same(
      contents.map((c) => c.role),
      ['user', 'model', 'user', 'model', 'user'],
    );
    t.same(contents[1]?.parts, [{ functionCall: { name: 'get_light', args: { room: 'kitchen' }, id: 'call_k1' } }]);
    t.same(contents[2]?.parts, [{ functionResponse: { name: 'get_light', response: { content: '{"on":false}' }, id: 'call_k1' } }]);
    t.same(body.generationConfig, { temperature: 0.4, maxOutputTokens: 512 });
    const tools = body.tools as Array<{ functionDeclarations: Array<{ name: string }> }>;
    t.same(
      tools[0]?.functionDeclarations.map((d) => d.name),
      ['set_light', 'get_temperature', 'list_rooms'],
    );
    t.same(body.toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
  },
  stream_request(t, sent) {
    t.equal(sent.path, '/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
  },
});
