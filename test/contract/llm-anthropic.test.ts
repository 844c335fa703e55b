import { API_KEY, languageModelContract, usage } from './language-model.contract.js';

const TEXT = 'The kitchen light is on and the living room is 21.5 °C.';
const CALLS = [
  { name: 'set_light', args: { room: 'kitchen', on: true }, id: 'toolu_01A09q90qw90lq917835lq9' },
  { name: 'get_temperature', args: { room: 'living_room' }, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6' },
];
type Block = { type: string; [key: string]: unknown };

languageModelContract({
  adapter: 'anthropic',
  provider: 'lua:anthropic',
  fixtures: 'anthropic',
  model: 'claude-sonnet-4-20250514',
  // input_tokens (412) leaves out the 1024 tokens read from the prompt cache.
  plain: { file: 'plain.json', text: TEXT, usage: usage(1436, 18, 1454, 1024), model: 'claude-sonnet-4-20250514' },
  stream: { file: 'stream.sse', text: TEXT, reasoning: 'The user asks about the kitchen light.', usage: usage(1436, 31, 1467, 1024) },
  tools: { file: 'tools.json', calls: CALLS, text: "I'll switch on the kitchen light and check the living room.", usage: usage(530, 96) },
  tools_stream: { file: 'tools-stream.sse', calls: CALLS },
  errors: [
    { status: 401, file: 'error-401.json', kind: 'auth' },
    { status: 429, file: 'error-429.json', kind: 'rate_limit', retry_after: '30' },
    { status: 529, file: 'error-529.json', kind: 'server' },
    {
      status: 400,
      body: '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}',
      kind: 'bad_request',
    },
  ],
  stream_error: { file: 'stream-error.sse', kind: 'server', text_before: 'The kitchen' },
  request(t, sent, body) {
    t.equal(sent.path, '/v1/messages');
    t.equal(sent.headers['x-api-key'], API_KEY, 'the key goes in x-api-key');
    t.equal(sent.headers['anthropic-version'], '2023-06-01');
    t.notOk(sent.headers.authorization, 'no Authorization header');
    t.equal(body.system, 'You are HomeAgent, the assistant of this house.', 'the system prompt is top-level');
    t.equal(body.max_tokens, 512);
    t.equal(body.temperature, 0.4);
    const messages = body.messages as Array<{ role: string; content: Block[] }>;
    t.same(
      messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'user'],
      'no system message; roles alternate',
    );
    t.same(
      messages[1]?.content,
      [{ type: 'tool_use', id: 'call_k1', name: 'get_light', input: { room: 'kitchen' } }],
      'tool_use with the arguments as an object',
    );
    t.same(
      messages[2]?.content,
      [{ type: 'tool_result', tool_use_id: 'call_k1', content: '{"on":false}' }],
      'the tool result goes back in a user turn',
    );
    t.same(messages[3]?.content, [{ type: 'text', text: 'It is off.' }]);
    const tools = body.tools as Array<{ name: string; input_schema: unknown }>;
    t.same(
      tools.map((x) => x.name),
      ['set_light', 'get_temperature', 'list_rooms'],
    );
    t.same(tools[1]?.input_schema, {
      type: 'object',
      properties: { room: { type: 'string', enum: ['kitchen', 'living_room'] } },
      required: ['room'],
    });
    t.same(body.tool_choice, { type: 'auto' });
    t.equal(body.stream, false);
  },
  stream_request(t, sent, body) {
    t.equal(sent.path, '/v1/messages');
    t.equal(body.stream, true);
  },
});
